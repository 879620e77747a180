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

#include "block_steps.cuh"

namespace randnla {
namespace cuda {
namespace dc {

/// One level of the merge tree. Arrays of length n are indexed by absolute row (o + t for the
/// merge starting at row o), and so are the per-merge scalars (at row o: a kernel that runs
/// several levels, each block on its own rows, must not share a slot between two merges).
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

/// Shared memory of deflate for a merge of s rows.
RANDNLA_HD constexpr int deflate_smem_bytes(int s) { return s * (6 * 8 + 5 * 4) + 16; }

/// Sorts the children's eigenpairs by eigenvalue and deflates (dlaed2): one block per merge, its
/// serial part on shared memory (sh: deflate_smem_bytes(s)), then written out by all threads.
RANDNLA_HD void deflate(const Level& L, int b, int tid, int nth, double* sh) {
  const Merge g = merge_of(L, b);
  const int n = g.s;
  double *dc = sh, *zc = dc + n, *ds = zc + n, *zs = ds + n, *rc = zs + n, *rs = rc + n;
  int *perm = reinterpret_cast<int*>(rs + n), *nd = perm + n, *df = nd + n, *rp = df + n, *rq = rp + n;
  int* count = rq + n;
  const bool paired = g.m < L.n;
  const double e = paired ? L.e[g.m - 1] : 0.0;
  for (int c = tid; c < n; c += nth) {
    dc[c] = L.dval[g.o + c];
    const int row = c < g.s1 ? g.m - 1 : g.m;
    const double zr = paired ? L.z[row + static_cast<long>(g.o + c) * L.n] : 0.0;
    zc[c] = c < g.s1 || e >= 0 ? zr : -zr;
  }
  team_sync(nth);
  for (int c = tid; c < n; c += nth) {
    int r = 0;
    for (int k = 0; k < n; ++k) r += dc[k] < dc[c] || (dc[k] == dc[c] && k < c);
    perm[r] = c;
  }
  team_sync(nth);
  // z is two unit rows: rho z z^T = (2 rho) (z / sqrt 2)(z / sqrt 2)^T with ||z / sqrt 2|| = 1.
  for (int t = tid; t < n; t += nth) {
    ds[t] = dc[perm[t]];
    zs[t] = zc[perm[t]] * 0.70710678118654752440;
  }
  team_sync(nth);
  const double rho = 2.0 * fabs(e);
  if (tid == 0) {
    double dmax = 0, zmax = 0;
    for (int t = 0; t < n; ++t) {
      dmax = fmax(dmax, fabs(ds[t]));
      zmax = fmax(zmax, fabs(zs[t]));
    }
    const double tol = 8.0 * DBL_EPSILON * fmax(dmax, zmax);
    int k = 0, d = 0, r = 0, pj = -1;
    for (int t = 0; t < n; ++t) {
      if (rho * fabs(zs[t]) <= tol) {
        df[d++] = t;
        continue;
      }
      if (pj >= 0) {
        // |gap c s| <= tol with c = z_t / tau, s = -z_pj / tau: tested without the root and divisions.
        const double tau2 = zs[t] * zs[t] + zs[pj] * zs[pj], gap = ds[t] - ds[pj];
        if (fabs(gap * zs[t] * zs[pj]) <= tol * tau2) {  // close poles: rotate z_pj into z_t and deflate pj
          const double tau = sqrt(tau2), c = zs[t] / tau, s = -zs[pj] / tau;
          zs[t] = tau;
          zs[pj] = 0;
          rp[r] = pj, rq[r] = t, rc[r] = c, rs[r] = s;
          ++r;
          const double dp = ds[pj] * c * c + ds[t] * s * s;
          ds[t] = ds[pj] * s * s + ds[t] * c * c;
          ds[pj] = dp;
          df[d++] = pj;
        } else {
          nd[k++] = pj;
        }
      }
      pj = t;
    }
    if (pj >= 0) nd[k++] = pj;
    count[0] = k, count[1] = r;
    L.kcount[g.o] = k;
    L.rcount[g.o] = r;
    L.rho[g.o] = rho;
  }
  team_sync(nth);
  const int k = count[0], r = count[1];
  for (int t = tid; t < n; t += nth) {
    L.ds[g.o + t] = ds[t];
    L.zs[g.o + t] = zs[t];
    L.perm[g.o + t] = perm[t];
    if (t < k) L.nd[g.o + t] = nd[t];
    if (t < n - k) L.df[g.o + t] = df[t];
    if (t < r) L.rp[g.o + t] = rp[t], L.rq[g.o + t] = rq[t], L.rc[g.o + t] = rc[t], L.rs[g.o + t] = rs[t];
  }
}

/// dst[i] := src[nd[i]] for the merge's k non-deflated positions.
RANDNLA_HD void gather(const double* src, const int* nd, int k, double* dst, int tid, int nth) {
  for (int i = tid; i < k; i += nth) dst[i] = src[nd[i]];
}

/// f(mu) = 1 + rho sum z_i^2 / ((d_i - d_org) - mu) and its derivative, summed by the block,
/// without the term of pole `skip`.
RANDNLA_HD void secular(const double* d, const double* z, int k, double rho, double dorg, double mu, int tid, int nth,
                        double* red, double& f, double& df, int skip = -1) {
  double s = 0, s2 = 0;
  for (int i = tid; i < k; i += nth) {
    if (i == skip) continue;
    const double q = z[i] / ((d[i] - dorg) - mu);
    s += z[i] * q;
    s2 += q * q;
  }
  f = 1.0 + rho * block_reduce<false>(s, red, tid, nth);
  df = rho * block_reduce<false>(s2, red, tid, nth);
}

/// Root j of the merge's secular equation (dlaed4's job): one block per root; sh: 2 s doubles.
RANDNLA_HD void root(const Level& L, int b, int j, int tid, int nth, double* red, double* sh) {
  const Merge g = merge_of(L, b);
  const int k = L.kcount[g.o];
  if (j >= k) return;
  const double rho = L.rho[g.o];
  double *d = sh, *z = sh + k;
  gather(L.ds + g.o, L.nd + g.o, k, d, tid, nth);
  gather(L.zs + g.o, L.nd + g.o, k, z, tid, nth);
  team_sync(nth);
  int org = j;
  double lo = 0, hi, f, df;
  if (j < k - 1) {
    const double gap = d[j + 1] - d[j];
    secular(d, z, k, rho, d[j], 0.5 * gap, tid, nth, red, f, df);
    hi = 0.5 * gap;
    if (f < 0) {  // the root lies in the upper half: measure it from the upper pole
      org = j + 1;
      lo = -0.5 * gap;
      hi = 0;
    }
  } else {
    double s = 0;
    for (int i = tid; i < k; i += nth) s += z[i] * z[i];
    hi = rho * block_reduce<false>(s, red, tid, nth);
  }
  const double dorg = d[org];
  // Start where the origin's pole term balances the others frozen at mu = 0: mu = rho z_o^2 / c
  // (a root near its pole, where bisection from the middle would take many halvings).
  secular(d, z, k, rho, dorg, 0.0, tid, nth, red, f, df, org);
  const double guess = rho * z[org] * z[org] / f;
  double mu = guess > lo && guess < hi ? guess : 0.5 * (lo + hi), dxold = hi - lo, dx = dxold;
  // Newton safeguarded by bisection (the bracket keeps f(lo) < 0 < f(hi)).
  for (int it = 0; it < 200; ++it) {
    secular(d, z, k, rho, dorg, mu, tid, nth, red, f, df);
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

/// The merge's non-deflated poles d (k), each root's origin pole dorg and offset mu (k), and all
/// s eigenvalues val, in shared memory (4 s doubles).
struct Staged {
  double *d, *dorg, *mu, *val;
};

RANDNLA_HD Staged stage_roots(const Level& L, const Merge& g, int k, int tid, int nth, double* sh) {
  Staged st{sh, sh + k, sh + 2 * k, sh + 3 * k};
  gather(L.ds + g.o, L.nd + g.o, k, st.d, tid, nth);
  for (int j = tid; j < k; j += nth) st.mu[j] = L.mu[g.o + j];
  team_sync(nth);
  for (int j = tid; j < k; j += nth) st.dorg[j] = st.d[L.org[g.o + j]];
  team_sync(nth);
  for (int y = tid; y < g.s; y += nth) st.val[y] = y < k ? st.dorg[y] + st.mu[y] : L.ds[g.o + L.df[g.o + y - k]];
  team_sync(nth);
  return st;
}

/// Item x of a merge (one block each; sh: 4 s doubles): Gu and Eisenstat's z_x when x is a root
/// (dlaed3), and the eigenpair's rank among the merge's eigenvalues, which becomes its column.
RANDNLA_HD void weight_and_rank(const Level& L, int b, int x, int tid, int nth, double* red, double* sh) {
  const Merge g = merge_of(L, b);
  if (x >= g.s) return;
  const int k = L.kcount[g.o];
  const Staged st = stage_roots(L, g, k, tid, nth, sh);
  if (x < k) {
    double w = 1;
    for (int j = tid; j < k; j += nth) {
      const double num = (st.d[x] - st.dorg[j]) - st.mu[j];  // d_x - lambda_j, exact near its origin
      w *= j == x ? num : num / (st.d[x] - st.d[j]);
    }
    w = block_reduce<true>(w, red, tid, nth);
    if (tid == 0) L.zhat[g.o + x] = copysign(sqrt(fmax(-w, 0.0)), L.zs[g.o + L.nd[g.o + x]]);
  }
  double below = 0;
  for (int y = tid; y < g.s; y += nth) below += st.val[y] < st.val[x] || (st.val[y] == st.val[x] && y < x);
  below = block_reduce<false>(below, red, tid, nth);
  if (tid == 0) L.pos[g.o + x] = static_cast<int>(below);
}

/// Column x of the merge's block of U (one block each; sh: 3 s doubles): the eigenvector of
/// D + rho z z^T in the sorted, rotated basis, rotated back and scattered to the children's order.
RANDNLA_HD void column(const Level& L, int b, int x, int tid, int nth, double* red, double* sh) {
  const Merge g = merge_of(L, b);
  if (x >= g.s) return;
  const int k = L.kcount[g.o];
  double *col = sh, *d = sh + g.s, *zhat = d + k;
  for (int t = tid; t < g.s; t += nth) col[t] = 0;
  gather(L.ds + g.o, L.nd + g.o, k, d, tid, nth);
  for (int i = tid; i < k; i += nth) zhat[i] = L.zhat[g.o + i];
  team_sync(nth);
  double lambda;
  if (x < k) {
    const double dorg = d[L.org[g.o + x]], mu = L.mu[g.o + x];
    lambda = dorg + mu;
    double ss = 0;
    for (int i = tid; i < k; i += nth) {
      const double v = zhat[i] / ((d[i] - dorg) - mu);
      col[L.nd[g.o + i]] = v;
      ss += v * v;
    }
    const double scale = 1.0 / sqrt(block_reduce<false>(ss, red, tid, nth));
    for (int i = tid; i < k; i += nth) col[L.nd[g.o + i]] *= scale;
  } else {
    const int t = L.df[g.o + x - k];
    lambda = L.ds[g.o + t];
    if (tid == 0) col[t] = 1;
  }
  team_sync(nth);
  if (tid == 0) {
    for (int r = L.rcount[g.o] - 1; r >= 0; --r) {
      const int p = L.rp[g.o + r], q = L.rq[g.o + r];
      const double c = L.rc[g.o + r], s = L.rs[g.o + r], a = col[p], bq = col[q];
      col[p] = c * a - s * bq;
      col[q] = s * a + c * bq;
    }
  }
  team_sync(nth);
  const long j = g.o + L.pos[g.o + x];
  for (int t = tid; t < g.s; t += nth) L.u[(g.o + L.perm[g.o + t]) + j * L.n] = col[t];
  if (tid == 0) L.dval[j] = lambda;
}

}  // namespace dc
}  // namespace cuda
}  // namespace randnla
