// The phases of one Householder step of the reduction of a symmetric FP64 matrix to tridiagonal
// form, G = Q T Q^T (LAPACK dsytd2, Golub & Van Loan Alg. 8.3.1), for a thread-block cluster
// whose blocks each hold a slice of rows of G in shared memory (tridiagonalize_sm90.cu). In step
// j every block copies the reflector (I - tau v v^T) that the owner of row j published and
// computes p = tau G v for its rows; after the step's one cluster barrier every block gathers
// w = p - (tau/2)(p^T v) v and updates its rows of G := G - v w^T - w v^T. The owner of row j + 1
// updates that row first and publishes the next reflector while the others update, so that the
// next step need not wait for a second barrier. The symmetric matrix is stored whole: G v is a
// dot product per row. Q is not accumulated here: the reflectors go to global memory (V, tau),
// and Q = H_0 ... H_{n-3} is formed from them by matrix products (symmetric_eig.cuh) while the
// tridiagonal eigenproblem is solved.
#pragma once

#include <cmath>

#include "block_steps.cuh"

namespace randnla {
namespace cuda {
namespace tri {

/// A block's rows: [r0, r1) of the n, stored with an even row stride ld (the pairs of doubles the
/// loops read: column n of the padding and entries left of column j + 1 meet zeros in v and w);
/// 2^shift >= rows slots per block index the gather of p.
struct Slice {
  int n, ld, rows, shift, r0, r1;
};

RANDNLA_HD Slice slice(int n, int rows, int rank) {
  Slice s;
  s.n = n;
  s.ld = n + (n & 1);
  s.rows = rows;
  s.shift = 0;
  while ((1 << s.shift) < rows) ++s.shift;
  s.r0 = rank * rows < n ? rank * rows : n;
  s.r1 = s.r0 + rows < n ? s.r0 + rows : n;
  return s;
}

/// One block's slice of shared memory: its rows of G (row-major, stride ld), the reflector
/// it publishes (vpub, tau) when it owns row j, the local copy v of the step's reflector, the
/// gathered w, its entries of p and partial sums of p^T v (two buffers, by the step's parity), d
/// and e of its rows, and scalars (scal[kFlag]: the steps published, read through a release/acquire
/// pair).
struct Panel {
  double *a, *vpub, *v, *w, *p, *part, *dl, *el, *scal, *red;
  enum { kTau = 0, kMax = 1, kFlag = 2, kScalars = 3 };  // kTau: the step's tau, as product() read it
  enum { kWarpSlots = 16 };  ///< part: one partial sum of p^T v per warp (at most 16) and parity
};

RANDNLA_HD Panel panel(double* base, const Slice& s) {
  Panel P;
  P.a = base;
  P.vpub = P.a + static_cast<long>(s.rows) * s.ld;
  P.v = P.vpub + s.ld;
  P.w = P.v + s.ld;
  P.p = P.w + s.ld;
  P.part = P.p + 2 * s.rows;
  P.dl = P.part + 2 * Panel::kWarpSlots;
  P.el = P.dl + s.rows;
  P.scal = P.el + s.rows;
  P.red = P.scal + Panel::kScalars;
  return P;
}

/// Doubles of shared memory per block (the reduction space: one per warp).
inline long panel_doubles(const Slice& s) {
  return 1L * s.rows * s.ld + 3L * s.ld + 4L * s.rows + 2L * Panel::kWarpSlots + Panel::kScalars + 32;
}

/// Threads of the block as warps of `lanes` (32 on the device, 1 when run one thread at a time).
struct Team {
  int tid, nth, lanes;
  RANDNLA_HD int lane() const { return tid % lanes; }
  RANDNLA_HD int warp() const { return tid / lanes; }
  RANDNLA_HD int warps() const { return nth / lanes; }
};

/// x[c] -= f y[c] + g z[c] for c in [c0, ld), c0 even, by the lanes of a warp in pairs.
RANDNLA_HD void axpy_pairs(double* x, double f, const double* y, double g, const double* z, int c0, int ld,
                           const Team& t) {
  for (int c = c0 + 2 * t.lane(); c < ld; c += 2 * t.lanes) {
    double2 a = *reinterpret_cast<double2*>(x + c);
    const double2 b = *reinterpret_cast<const double2*>(y + c), d = *reinterpret_cast<const double2*>(z + c);
    a.x -= f * b.x + g * d.x;
    a.y -= f * b.y + g * d.y;
    *reinterpret_cast<double2*>(x + c) = a;
  }
}

/// max(a, b) that keeps a NaN from either side.
RANDNLA_HD double nan_max(double a, double b) { return a != a || b <= a ? a : b; }

/// Loads the block's rows of G (upper triangle mirrored), zeroes the padding and v
/// and w; returns max |g_ij| over the block's rows (NaN if one is NaN).
RANDNLA_HD double load(const Slice& s, const Panel& P, const double* g, long ldg, const Team& t) {
  double mx = 0;
  for (long idx = t.tid; idx < static_cast<long>(s.r1 - s.r0) * s.ld; idx += t.nth) {
    const int i = s.r0 + static_cast<int>(idx / s.ld), c = static_cast<int>(idx % s.ld);
    const double x = c >= s.n ? 0.0 : i <= c ? g[i + c * ldg] : g[c + i * ldg];
    P.a[idx] = x;
    mx = nan_max(mx, fabs(x));
  }
  for (int c = t.tid; c < s.ld; c += t.nth) P.vpub[c] = P.v[c] = P.w[c] = 0;
  for (int i = t.tid; i < 2 * Panel::kWarpSlots; i += t.nth) P.part[i] = 0;
#ifdef __CUDA_ARCH__
  for (int o = 16; o > 0; o /= 2) mx = nan_max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
#endif
  if (t.lane() == 0) P.red[t.warp()] = mx;
  team_sync(t.nth);
  double m = 0;
  for (int i = 0; i < t.warps(); ++i) m = nan_max(m, P.red[i]);
  team_sync(t.nth);
  return m;
}

RANDNLA_HD void scale_rows(const Slice& s, const Panel& P, double f, const Team& t) {
  for (long idx = t.tid; idx < static_cast<long>(s.r1 - s.r0) * s.ld; idx += t.nth) P.a[idx] *= f;
  team_sync(t.nth);
}

/// Where the reflectors go: column i of V (n x (n - 2), ld ldv) holds v_i below row i (v_i(i+1) =
/// 1; the rows above are left to finish), tau[i] its tau; a reflector with tau = 0 (H_i = I) is
/// stored as a zero column.
struct Reflectors {
  double* v;
  long ldv;
  double* tau;
};

/// The owner of row i, by one warp (`t` its lanes) and after the update of step i - 1 (v, w)
/// when i > 0: row i of G updated, then the reflector that zeroes G(i, i+2:n) into vpub, with
/// tau in vpub[i], and into H; d_i, e_i.
RANDNLA_HD void reflector(const Slice& s, const Panel& P, int i, const Reflectors& H, const Team& t) {
  double* row = P.a + static_cast<long>(i - s.r0) * s.ld;
  const double vi = i > 0 ? P.v[i] : 0.0, wi = i > 0 ? P.w[i] : 0.0;
  double ss = 0;
  for (int c = i + t.lane(); c < s.n; c += t.lanes) {
    const double x = row[c] - (vi * P.w[c] + wi * P.v[c]);
    row[c] = x;
    if (c >= i + 2) ss += x * x;
  }
  RANDNLA_SYNC_WARP();
  const double sigma2 = warp_reduce(ss), alpha = row[i + 1];
  double tau = 0, beta = alpha, scale = 0;
  if (sigma2 > 0) {
    beta = -copysign(sqrt(alpha * alpha + sigma2), alpha);
    tau = (beta - alpha) / beta;
    scale = 1.0 / (alpha - beta);
  }
  // vpub[i] carries tau: the readers need both, and v_i = 0 is implied (product()).
  double* hv = H.v + i * H.ldv;
  for (int c = i + 1 + t.lane(); c < s.n; c += t.lanes) {
    const double x = c == i + 1 ? 1.0 : row[c] * scale;
    P.vpub[c] = x;
    hv[c] = tau == 0 ? 0.0 : x;
  }
  if (t.lane() == 0) {
    P.vpub[i] = tau;
    H.tau[i] = tau;
    P.dl[i - s.r0] = row[i];
    P.el[i - s.r0] = beta;
  }
  RANDNLA_SYNC_WARP();
}

/// Every block (owner_vpub: the owner's published reflector): v := it, p_i = tau (G v)_i for the
/// block's rows below j into buffer j & 1, and each warp's share of p^T v into part (parity j &
/// 1). Returns tau.
RANDNLA_HD double product(const Slice& s, const Panel& P, int j, const double* owner_vpub, const Team& t) {
  const int c0 = j & ~1;
  for (int c = c0 + t.tid; c < s.n; c += t.nth) {
    const double x = c < j ? 0.0 : owner_vpub[c];
    if (c == j) P.scal[Panel::kTau] = x;
    P.v[c] = c == j ? 0.0 : x;
  }
  team_sync(t.nth);
  const double tau = P.scal[Panel::kTau];
  const int first = s.r0 > j + 1 ? s.r0 : j + 1;
  double* p = P.p + (j & 1) * s.rows;
  double partial = 0;
  for (int i = first + 2 * t.warp(); i < s.r1; i += 2 * t.warps()) {  // two rows at a time: two chains
    const double* r0 = P.a + static_cast<long>(i - s.r0) * s.ld;
    const double* r1 = i + 1 < s.r1 ? r0 + s.ld : r0;
    double x0 = 0, x1 = 0;
    for (int c = c0 + 2 * t.lane(); c < s.ld; c += 2 * t.lanes) {
      const double2 v = *reinterpret_cast<const double2*>(P.v + c), a = *reinterpret_cast<const double2*>(r0 + c),
                    b = *reinterpret_cast<const double2*>(r1 + c);
      x0 += a.x * v.x + a.y * v.y;
      x1 += b.x * v.x + b.y * v.y;
    }
    x0 = tau * warp_reduce(x0);
    x1 = tau * warp_reduce(x1);
    if (t.lane() == 0) {
      p[i - s.r0] = x0;
      partial += x0 * P.v[i];
      if (i + 1 < s.r1) {
        p[i + 1 - s.r0] = x1;
        partial += x1 * P.v[i + 1];
      }
    }
  }
  if (t.lane() == 0) P.part[(j & 1) * Panel::kWarpSlots + t.warp()] = partial;
  return tau;
}

/// Every block, after the step's barrier: w = p - (tau/2)(p^T v) v from every block's p and
/// partial sums (remote(r): block r's panel).
template <class Remote>
RANDNLA_HD void gather_w(const Slice& s, const Panel& P, int j, double tau, int blocks, Remote remote, const Team& t) {
  // The blocks' partial sums, 8 independent remote loads per lane at a time (one latency, not 8).
  double pv = 0;
  for (int base = 0; base < blocks * Panel::kWarpSlots; base += 8 * t.lanes) {
    double part[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int x = base + t.lane() + k * t.lanes;
      part[k] = x < blocks * Panel::kWarpSlots
                    ? remote(x / Panel::kWarpSlots).part[(j & 1) * Panel::kWarpSlots + x % Panel::kWarpSlots]
                    : 0.0;
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) pv += part[k];
  }
  const double alpha = -0.5 * tau * warp_reduce(pv);
  for (int idx = t.tid; idx < blocks << s.shift; idx += t.nth) {
    const int r = idx >> s.shift, i = idx & ((1 << s.shift) - 1), c = r * s.rows + i;
    if (i < s.rows && c > j && c < s.n) P.w[c] = remote(r).p[(j & 1) * s.rows + i] + alpha * P.v[c];
  }
  if (t.tid == 0) P.w[j] = 0;
  team_sync(t.nth);
}

/// G := G - v w^T - w v^T on the block's rows below j except `skip`, shared out over warps
/// first_warp.. (no barrier).
RANDNLA_HD void update(const Slice& s, const Panel& P, int j, int skip, int first_warp, const Team& t) {
  if (t.warp() < first_warp) return;
  const int c0 = j & ~1, first = s.r0 > j + 1 ? s.r0 : j + 1;
  for (int i = first + t.warp() - first_warp; i < s.r1; i += t.warps() - first_warp)
    if (i != skip) axpy_pairs(P.a + static_cast<long>(i - s.r0) * s.ld, P.v[i], P.w, P.w[i], P.v, c0, s.ld, t);
}

/// After the last step: the block's d and e (the trailing 2 x 2 block's from G), and the zeros
/// above the reflectors of its rows in V.
RANDNLA_HD void finish(const Slice& s, const Panel& P, double* d, double* e, const Reflectors& H, const Team& t) {
  const int n = s.n;
  for (int i = s.r0 + t.tid; i < s.r1; i += t.nth) {
    const double* row = P.a + static_cast<long>(i - s.r0) * s.ld;
    d[i] = i < n - 2 ? P.dl[i - s.r0] : row[i];
    if (i < n - 1) e[i] = i < n - 2 ? P.el[i - s.r0] : row[i + 1];
  }
  const int last = s.r1 < n - 2 ? s.r1 : n - 2;
  for (int i = s.r0; i < last; ++i)
    for (int c = t.tid; c <= i; c += t.nth) H.v[c + i * H.ldv] = 0.0;
}

}  // namespace tri
}  // namespace cuda
}  // namespace randnla
