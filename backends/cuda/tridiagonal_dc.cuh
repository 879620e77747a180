// The steps of divide and conquer for the symmetric tridiagonal eigenproblem T = Z diag(lambda) Z^T
// (Cuppen 1981; Gu & Eisenstat, SIAM J. Matrix Anal. Appl. 16 (1995); the structure of LAPACK
// dstedc / dlaed1-dlaed4), written as functions of (block, thread, thread count) so that a kernel
// runs one block per merge, root or column (tridiagonal_dc.cu).
//
// T is cut into 1 x 1 leaves by subtracting |e_i| from both neighbours of every off-diagonal; level
// L merges the blocks of 2^(L-1) rows in pairs. A merge of two solved children is the rank-one
// problem D + rho z z^T (z: the last row of the left child's eigenvectors and the first row of the
// right child's, times sign(e)); small z_i and close d_i are deflated as in dlaed2, the secular
// equation is solved for every root by a safeguarded Newton iteration in the offset mu from the
// nearer pole (so that d_i - lambda_j is exact where it matters), and the eigenvectors come from
// Gu and Eisenstat's recomputed z, which makes them orthogonal however close the roots. The level's
// factor U (block diagonal, each block sorted by eigenvalue) then updates Z := Z U with one DGEMM.
#pragma once

#include <cfloat>
#include <cmath>

#include "randnla/hostdevice.hpp"

#ifdef __CUDA_ARCH__
#define RANDNLA_SYNC() __syncthreads()
#else
#define RANDNLA_SYNC()  // the host runs a block as one thread
#endif

namespace randnla {
namespace cuda {
namespace dc {

/// One level of the merge tree. Arrays of length n are indexed by absolute row (o + t for the
/// merge starting at row o); per-merge scalars by the merge's number b.
struct Level {
  int n = 0;
  int half = 0;                  ///< rows of a child block, 2^(L-1)
  const double* e = nullptr;     ///< T's off-diagonal, n - 1
  double* dval = nullptr;        ///< eigenvalues of the blocks, ascending within a block
  const double* z = nullptr;     ///< eigenvectors of the blocks (block diagonal), n x n, ld n
  double* u = nullptr;           ///< this level's factor (block diagonal), n x n, ld n
  double *ds = nullptr, *zs = nullptr;  ///< poles and weights, sorted and deflated
  double *mu = nullptr, *zhat = nullptr, *rho = nullptr, *rc = nullptr, *rs = nullptr;
  int *perm = nullptr;           ///< sorted position -> column of the children
  int *nd = nullptr, *df = nullptr;     ///< non-deflated / deflated sorted positions
  int *org = nullptr;            ///< the pole each root is measured from (non-deflated index)
  int *rp = nullptr, *rq = nullptr;     ///< the deflating rotations' pairs of sorted positions
  int *kcount = nullptr, *rcount = nullptr;
  int *pos = nullptr;            ///< output column of each eigenpair of a merge
};

struct Merge {
  int o, m, s, s1;  ///< first row, first row of the right child, size, size of the left child
};

RANDNLA_HD Merge merge_of(const Level& L, int b) {
  Merge g;
  g.o = 2 * L.half * b;
  g.m = g.o + L.half;
  const int end = g.o + 2 * L.half < L.n ? g.o + 2 * L.half : L.n;
  g.s = end - g.o;
  g.s1 = L.half < g.s ? L.half : g.s;
  return g;
}

/// The block's sum (or product) of one value per thread; red holds nth doubles, nth a power of 2.
template <bool Product>
RANDNLA_HD double block_reduce(double v, double* red, int tid, int nth) {
  red[tid] = v;
  RANDNLA_SYNC();
  for (int w = nth / 2; w > 0; w /= 2) {
    if (tid < w) red[tid] = Product ? red[tid] * red[tid + w] : red[tid] + red[tid + w];
    RANDNLA_SYNC();
  }
  const double r = red[0];
  RANDNLA_SYNC();
  return r;
}

/// Sorts the children's eigenpairs by eigenvalue and deflates (dlaed2): one block per merge.
/// sh: 2 s doubles.
RANDNLA_HD void deflate(const Level& L, int b, int tid, int nth, double* sh) {
  const Merge g = merge_of(L, b);
  const bool paired = g.m < L.n;
  const double e = paired ? L.e[g.m - 1] : 0.0;
  double* dc = sh;
  double* zc = sh + g.s;
  for (int c = tid; c < g.s; c += nth) {
    dc[c] = L.dval[g.o + c];
    const int row = c < g.s1 ? g.m - 1 : g.m;
    const double zr = paired ? L.z[row + static_cast<long>(g.o + c) * L.n] : 0.0;
    zc[c] = c < g.s1 || e >= 0 ? zr : -zr;
  }
  RANDNLA_SYNC();
  for (int c = tid; c < g.s; c += nth) {
    int r = 0;
    for (int k = 0; k < g.s; ++k) r += dc[k] < dc[c] || (dc[k] == dc[c] && k < c);
    L.perm[g.o + r] = c;
  }
  RANDNLA_SYNC();
  if (tid != 0) return;
  // z is two unit rows: rho z z^T = (2 rho) (z / sqrt 2)(z / sqrt 2)^T with ||z / sqrt 2|| = 1.
  const double rho = 2.0 * fabs(e);
  double dmax = 0, zmax = 0;
  double* ds = L.ds + g.o;
  double* zs = L.zs + g.o;
  for (int t = 0; t < g.s; ++t) {
    const int c = L.perm[g.o + t];
    ds[t] = dc[c];
    zs[t] = zc[c] * 0.70710678118654752440;
    dmax = fmax(dmax, fabs(ds[t]));
    zmax = fmax(zmax, fabs(zs[t]));
  }
  const double tol = 8.0 * DBL_EPSILON * fmax(dmax, zmax);
  int k = 0, d = 0, r = 0, pj = -1;
  for (int t = 0; t < g.s; ++t) {
    if (rho * fabs(zs[t]) <= tol) {
      L.df[g.o + d++] = t;
      continue;
    }
    if (pj >= 0) {
      const double tau = hypot(zs[t], zs[pj]), c = zs[t] / tau, s = -zs[pj] / tau, gap = ds[t] - ds[pj];
      if (fabs(gap * c * s) <= tol) {  // close poles: rotate z_pj into z_t and deflate pj
        zs[t] = tau;
        zs[pj] = 0;
        L.rp[g.o + r] = pj;
        L.rq[g.o + r] = t;
        L.rc[g.o + r] = c;
        L.rs[g.o + r] = s;
        ++r;
        const double dp = ds[pj] * c * c + ds[t] * s * s;
        ds[t] = ds[pj] * s * s + ds[t] * c * c;
        ds[pj] = dp;
        L.df[g.o + d++] = pj;
      } else {
        L.nd[g.o + k++] = pj;
      }
    }
    pj = t;
  }
  if (pj >= 0) L.nd[g.o + k++] = pj;
  L.kcount[b] = k;
  L.rcount[b] = r;
  L.rho[b] = rho;
}

/// f(mu) = 1 + rho sum z_i^2 / ((d_i - d_org) - mu) and its derivative, summed by the block.
RANDNLA_HD void secular(const Level& L, const Merge& g, int k, double rho, double dorg, double mu, int tid,
                               int nth, double* red, double& f, double& df) {
  double s = 0, s2 = 0;
  for (int i = tid; i < k; i += nth) {
    const int t = L.nd[g.o + i];
    const double zi = L.zs[g.o + t], q = zi / ((L.ds[g.o + t] - dorg) - mu);
    s += zi * q;
    s2 += q * q;
  }
  f = 1.0 + rho * block_reduce<false>(s, red, tid, nth);
  df = rho * block_reduce<false>(s2, red, tid, nth);
}

/// Root j of the merge's secular equation (dlaed4's job): one block per root.
RANDNLA_HD void root(const Level& L, int b, int j, int tid, int nth, double* red) {
  const Merge g = merge_of(L, b);
  const int k = L.kcount[b];
  if (j >= k) return;
  const double rho = L.rho[b];
  const double* ds = L.ds + g.o;
  const int* nd = L.nd + g.o;
  int org = j;
  double lo = 0, hi, f, df;
  if (j < k - 1) {
    const double gap = ds[nd[j + 1]] - ds[nd[j]];
    secular(L, g, k, rho, ds[nd[j]], 0.5 * gap, tid, nth, red, f, df);
    hi = 0.5 * gap;
    if (f < 0) {  // the root lies in the upper half: measure it from the upper pole
      org = j + 1;
      lo = -0.5 * gap;
      hi = 0;
    }
  } else {
    double s = 0;
    for (int i = tid; i < k; i += nth) s += L.zs[g.o + L.nd[g.o + i]] * L.zs[g.o + L.nd[g.o + i]];
    hi = rho * block_reduce<false>(s, red, tid, nth);
  }
  const double dorg = ds[nd[org]];
  // Newton safeguarded by bisection (the bracket keeps f(lo) < 0 < f(hi)).
  double mu = 0.5 * (lo + hi), dxold = hi - lo, dx = dxold;
  for (int it = 0; it < 200; ++it) {
    secular(L, g, k, rho, dorg, mu, tid, nth, red, f, df);
    if (f == 0) break;
    if (f < 0) lo = mu; else hi = mu;
    if (((mu - hi) * df - f) * ((mu - lo) * df - f) > 0 || fabs(2.0 * f) > fabs(dxold * df)) {
      dxold = dx;
      dx = 0.5 * (hi - lo);
      mu = lo + dx;
    } else {
      dxold = dx;
      dx = f / df;
      mu -= dx;
    }
    if (fabs(dx) <= 2.0 * DBL_EPSILON * fabs(mu) || hi - lo <= 2.0 * DBL_EPSILON * fmax(fabs(lo), fabs(hi))) break;
  }
  if (tid == 0) {
    L.org[g.o + j] = org;
    L.mu[g.o + j] = mu;
  }
}

/// d_i - lambda_j, exact where pole i is root j's origin or near it.
RANDNLA_HD double pole_minus_root(const Level& L, const Merge& g, int i, int j) {
  const double di = L.ds[g.o + L.nd[g.o + i]], dorg = L.ds[g.o + L.nd[g.o + L.org[g.o + j]]];
  return (di - dorg) - L.mu[g.o + j];
}

RANDNLA_HD double eigenvalue(const Level& L, const Merge& g, int k, int x) {
  if (x < k) return L.ds[g.o + L.nd[g.o + L.org[g.o + x]]] + L.mu[g.o + x];
  return L.ds[g.o + L.df[g.o + x - k]];
}

/// Item x of a merge (one block each): Gu and Eisenstat's z_x when x is a root (dlaed3), and the
/// eigenpair's rank among the merge's eigenvalues, which becomes its column.
RANDNLA_HD void weight_and_rank(const Level& L, int b, int x, int tid, int nth, double* red) {
  const Merge g = merge_of(L, b);
  if (x >= g.s) return;
  const int k = L.kcount[b];
  if (x < k) {
    double w = 1;
    for (int j = tid; j < k; j += nth) {
      const double num = pole_minus_root(L, g, x, j);
      w *= j == x ? num : num / (L.ds[g.o + L.nd[g.o + x]] - L.ds[g.o + L.nd[g.o + j]]);
    }
    w = block_reduce<true>(w, red, tid, nth);
    if (tid == 0) L.zhat[g.o + x] = copysign(sqrt(fmax(-w, 0.0)), L.zs[g.o + L.nd[g.o + x]]);
  }
  const double v = eigenvalue(L, g, k, x);
  double below = 0;
  for (int y = tid; y < g.s; y += nth) {
    const double w = eigenvalue(L, g, k, y);
    below += w < v || (w == v && y < x);
  }
  below = block_reduce<false>(below, red, tid, nth);
  if (tid == 0) L.pos[g.o + x] = static_cast<int>(below);
}

/// Column x of the merge's block of U (one block each; col: s doubles): the eigenvector of
/// D + rho z z^T in the sorted, rotated basis, rotated back and scattered to the children's order.
RANDNLA_HD void column(const Level& L, int b, int x, int tid, int nth, double* red, double* col) {
  const Merge g = merge_of(L, b);
  if (x >= g.s) return;
  const int k = L.kcount[b];
  for (int t = tid; t < g.s; t += nth) col[t] = 0;
  RANDNLA_SYNC();
  if (x < k) {
    double ss = 0;
    for (int i = tid; i < k; i += nth) {
      const double v = L.zhat[g.o + i] / pole_minus_root(L, g, i, x);
      col[L.nd[g.o + i]] = v;
      ss += v * v;
    }
    const double scale = 1.0 / sqrt(block_reduce<false>(ss, red, tid, nth));
    for (int i = tid; i < k; i += nth) col[L.nd[g.o + i]] *= scale;
  } else if (tid == 0) {
    col[L.df[g.o + x - k]] = 1;
  }
  RANDNLA_SYNC();
  if (tid == 0) {
    for (int r = L.rcount[b] - 1; r >= 0; --r) {
      const int p = L.rp[g.o + r], q = L.rq[g.o + r];
      const double c = L.rc[g.o + r], s = L.rs[g.o + r], a = col[p], bq = col[q];
      col[p] = c * a - s * bq;
      col[q] = s * a + c * bq;
    }
  }
  RANDNLA_SYNC();
  const long j = g.o + L.pos[g.o + x];
  for (int t = tid; t < g.s; t += nth) L.u[(g.o + L.perm[g.o + t]) + j * L.n] = col[t];
  if (tid == 0) L.dval[j] = eigenvalue(L, g, k, x);
}

}  // namespace dc
}  // namespace cuda
}  // namespace randnla
