// CholeskyQR of a tall-skinny FP32 Y in place, fused (cholesky_qr_ops.hpp, fused_cholesky_qr):
// per pass, G = Y^T Y summed in FP64 by row blocks, the blocks' sums added in a fixed order (the
// same bits on every run) by the block that finishes last, which also equilibrates and factors G
// and inverts the factor; then Y := Y R^{-1}. Both products run on the FP64 Tensor Cores (exact
// products of the FP32 entries, FP64 sums). One sweep over Y does a pass's product and the next
// pass's Gram sums and factor: CholeskyQR2 is three kernels over Y, and Auto stops after two where
// the first pass already left Y orthonormal. No FP64 copy of Y; a status word on the device tells
// each sweep what to do, and the host reads it once, when asked for the verdict. A short Y (up to
// 8 x 256 rows) on a device with thread-block clusters runs every pass in one kernel instead, its
// rows held in the cluster's shared memory (resident_cholesky_qr).
#include "fused_cholesky_qr.cuh"

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "cuda/tc/cp_async.cuh"
#include "cuda/context/cuda_check.hpp"
#include "cuda/context/kernel_config.cuh"
#include "cuda/tc/mma_f64.cuh"
#include "randnla/orthonormalize/cholesky_qr_ops.hpp"

namespace randnla {
namespace cuda {
namespace {

// A block sweeps its rows of Y a chunk of kThreads rows at a time; each warp stages its own 32 rows
// and multiplies and sums them on the FP64 Tensor Cores.
constexpr int kThreads = 256, kWarps = kThreads / 32, kMaxColumns = kFusedCholeskyQrMaxColumns;
// A warp's rows in shared memory (FP32), column by column: a pitch of 36 (4 mod 32) makes the
// row-per-lane copies, the Gram fragment loads (8 columns x 4 rows) and the product's stores
// conflict-free; the product's row fragments (8 rows x 4 columns) meet two-way conflicts.
constexpr int kWarpPitch = 36;

using Status = FusedCholeskyQrStatus;
using tc::mma_f64;

/// G's upper triangle is summed in 16 x 8 tiles (the FP64 Tensor Cores' m16n8k8 products): tile
/// (I, J) holds rows 16 I ... 16 I + 15 and columns 8 J ... 8 J + 7 of G, J >= 2 I, J < nb. The
/// tiles of an nb-column-block G, and the index of tile (I, J) among them, row-major.
__host__ __device__ constexpr int gram_tiles(int nb) {
  int tiles = 0;
  for (int i = 0; 2 * i < nb; ++i) tiles += nb - 2 * i;
  return tiles;
}
__host__ __device__ constexpr int tile_index(int i, int j, int nb) { return i * nb - i * (i - 1) + j - 2 * i; }

/// The tile (I, J) of index t.
__device__ int2 tile_of(int t, int nb) {
  int i = 0;
  while (t >= nb - 2 * i) t -= nb - 2 * i, ++i;
  return make_int2(i, 2 * i + t);
}

__device__ bool pass_runs(const Status* st, int pass) {
  return pass >= 0 && !st->breakdown && pass <= st->last_pass;
}

/// The columns a sweep works on: n rounded up to whole 16-column tiles of G, zeros beyond n (its
/// loops then have fixed bounds, no per-column tests).
__host__ __device__ constexpr int padded_columns(int n) { return (n + 15) / 16 * 16; }

/// G's upper triangle as the sweep sums it: 128 entries per tile, tile by tile, in the order of a
/// product's fragments (entry 4 l + q is lane l's accumulator q).
__host__ __device__ int gram_entries(int n) { return 128 * gram_tiles(padded_columns(n) / 8); }

/// The sweep's dynamic shared memory: each warp's rows, twice (the chunk worked on and the next);
/// later the warps' Gram sums, then G (pitch n + 1) and the factor's two row buffers.
int sweep_shared_bytes(int n) {
  return std::max(static_cast<int>(sizeof(float)) * kWarps * 2 * padded_columns(n) * kWarpPitch,
                  static_cast<int>(sizeof(double)) * std::max(kWarps / 2 * gram_entries(n), n * (n + 1) + 4 * kMaxColumns));
}

/// Starts copying the warp's 32 rows of Y from `row0` (n columns) into column-major `rows`, without
/// registers (cp.async): the chunk after the one being worked on arrives meanwhile. Rows at or
/// beyond `end` are zeros. With `vector` (Y 16-byte aligned, ld a multiple of 4), a lane copies
/// four rows of a column at once, else one.
template <int N>
__device__ void stage_rows(float* rows, const float* y, index_t ld, index_t row0, index_t end, int n, bool vector) {
  const int lane = threadIdx.x % 32;
  if (vector) {
    const int q = lane % 8;
    const index_t first = row0 + 4 * q;
    const index_t left = end - first;
    const int valid = left <= 0 ? 0 : left >= 4 ? 4 : static_cast<int>(left);
#pragma unroll
    for (int c0 = 0; c0 < N; c0 += 4) {
      const int c = c0 + lane / 8;
      if (c >= n) continue;
      cp_async<16>(rows + c * kWarpPitch + 4 * q, valid > 0 ? y + first + c * ld : y, 4 * valid);
    }
  } else {
    const index_t row = row0 + lane;
    const bool inside = row < end;
#pragma unroll
    for (int c = 0; c < N; ++c) {
      if (c >= n) continue;
      cp_async<4>(rows + c * kWarpPitch + lane, inside ? y + row + c * ld : y, inside ? 4 : 0);
    }
  }
  cp_async_commit();
}

/// The warp's 32 rows (n columns, from `row0`, before `end`) back to Y; `vector` as for stage_rows.
template <int N>
__device__ void store_rows(const float* rows, float* y, index_t ld, index_t row0, index_t end, int n, bool vector) {
  const int lane = threadIdx.x % 32;
  if (vector) {
    const int q = lane % 8;
    const index_t first = row0 + 4 * q;
#pragma unroll
    for (int c0 = 0; c0 < N; c0 += 4) {
      const int c = c0 + lane / 8;
      if (c >= n) continue;
      const float* source = rows + c * kWarpPitch + 4 * q;
      if (first + 4 <= end)
        *reinterpret_cast<float4*>(y + first + c * ld) = *reinterpret_cast<const float4*>(source);
      else
        for (int r = 0; first + r < end; ++r) y[first + r + c * ld] = source[r];
    }
  } else {
    const index_t row = row0 + lane;
#pragma unroll
    for (int c = 0; c < N; ++c)
      if (c < n && row < end) y[row + c * ld] = rows[c * kWarpPitch + lane];
  }
}

/// Waits for the rows staged before the last stage_rows (`pending` = 1) or for all (0).
template <int pending>
__device__ void wait_for_rows() {
  cp_async_wait<pending>();
  __syncwarp();
}

/// acc[t] += the products of the warp's 32 rows (in `rows`, column by column) for the t-th tile of
/// G, eight rows at a time. Both operands come from the same values: f[c] holds rows t and t + 4
/// of column 8 c + g, which is B's fragment of column block c, and two of them A's of a tile row.
template <int NB>
__device__ void accumulate_rows(const float* rows, double (&acc)[gram_tiles(NB)][4]) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll 1
  for (int k = 0; k < 32; k += 8) {
    double f[NB][2];
#pragma unroll
    for (int c = 0; c < NB; ++c)
#pragma unroll
      for (int h = 0; h < 2; ++h) f[c][h] = rows[(8 * c + g) * kWarpPitch + k + t + 4 * h];
#pragma unroll
    for (int i = 0; 2 * i < NB; ++i) {
      const double a[4] = {f[2 * i][0], f[2 * i + 1][0], f[2 * i][1], f[2 * i + 1][1]};
#pragma unroll
      for (int j = 2 * i; j < NB; ++j)
        mma_f64(acc[tile_index(i, j, NB)], a, f[j]);
    }
  }
}

/// The block's Gram sums into its row of `partials`, added by a tree over the warps (half of them
/// hand their sums over in shared memory `slots`, the other half add them, three rounds): a fixed
/// order, the same bits on every run. acc holds the tiles of an NB-block G; the row those of the
/// nb-block G that Y has.
template <int NB>
__device__ void write_partials(double (&acc)[gram_tiles(NB)][4], double* slots, double* partials) {
  constexpr int T = gram_tiles(NB);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int half = kWarps / 2; half > 0; half /= 2) {
    __syncthreads();
    if (warp >= half && warp < 2 * half)
#pragma unroll
      for (int t = 0; t < T; ++t)
#pragma unroll
        for (int q = 0; q < 4; ++q) slots[((warp - half) * T * 4 + t * 4 + q) * 32 + lane] = acc[t][q];
    __syncthreads();
    if (warp < half)
#pragma unroll
      for (int t = 0; t < T; ++t)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[t][q] += slots[(warp * T * 4 + t * 4 + q) * 32 + lane];
  }
  if (warp != 0) return;
  double* const row = partials + blockIdx.x * static_cast<index_t>(128 * T);
#pragma unroll
  for (int i = 0; 2 * i < NB; ++i)
#pragma unroll
    for (int j = 2 * i; j < NB; ++j) {
      const double(&sums)[4] = acc[tile_index(i, j, NB)];
      double2* const target = reinterpret_cast<double2*>(row + 128 * tile_index(i, j, NB) + 4 * lane);
      __stcg(target, make_double2(sums[0], sums[1]));
      __stcg(target + 1, make_double2(sums[2], sums[3]));
    }
}

/// True in the block that arrives last of `expected` at `counter` (then reset for the next sweep).
__device__ bool last_to_arrive(int* counter, int expected) {
  __shared__ bool last;
  __threadfence();  // this block's sums visible before its arrival counts
  __syncthreads();
  if (threadIdx.x == 0) {
    last = atomicAdd(counter, 1) == expected - 1;
    if (last) *counter = 0;
  }
  __syncthreads();
  return last;
}

// The blocks' Gram sums are added by a two-level tree: the last block of each group of kGroup
// blocks adds the group's, the last group's the groups'. Each adds at most a few dozen rows with
// all loads in flight at once; one block adding every block's sums was a chain of L2 latencies.
constexpr int kGroup = 16;

/// The sums of entries e and e + 1 (e even) over `count` rows of `rows` (`entries` each, even), in
/// a fixed order (the same bits on every run), kGroup loads of both in flight.
__device__ double2 sum_rows(const double* rows, int count, int entries, int e) {
  double2 s[kGroup] = {};
  for (int b = 0; b < count; b += kGroup) {
    double2 v[kGroup];
#pragma unroll
    for (int u = 0; u < kGroup; ++u)  // every load issued before the first sum waits
      v[u] = b + u < count ? __ldcg(reinterpret_cast<const double2*>(rows + static_cast<index_t>(b + u) * entries + e))
                           : make_double2(0.0, 0.0);
#pragma unroll
    for (int u = 0; u < kGroup; ++u) s[u].x += v[u].x, s[u].y += v[u].y;
  }
  double2 total = make_double2(0.0, 0.0);
#pragma unroll
  for (int u = 0; u < kGroup; ++u) total.x += s[u].x, total.y += s[u].y;
  return total;
}

/// (i, j) of G for entry e of the packed sums; i > j (below the diagonal) or j >= n (padding) are
/// not used.
__device__ int2 gram_position(int e, int nb) {
  const int2 tile = tile_of(e / 128, nb);
  const int lane = (e % 128) / 4, q = e % 4;
  return make_int2(16 * tile.x + lane / 4 + 8 * (q / 2), 8 * tile.y + 2 * (lane % 4) + q % 2);
}

/// G (n x n, pitch n + 1, in g) := the sums of `count` rows of packed Gram sums, by the block.
__device__ void sum_into_gram(const double* rows, int count, int n, double* g) {
  const int entries = gram_entries(n), nb = padded_columns(n) / 8;
  for (int e = 2 * threadIdx.x; e < entries; e += 2 * kThreads) {
    const double2 sums = sum_rows(rows, count, entries, e);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int2 ij = gram_position(e + h, nb);
      if (ij.x <= ij.y && ij.y < n) g[ij.x + ij.y * (n + 1)] = g[ij.y + ij.x * (n + 1)] = h == 0 ? sums.x : sums.y;
    }
  }
  __syncthreads();
}

/// After the sweep's blocks wrote their Gram sums (`partials`, a row per block): true in the one
/// block that then holds G in g (n x n, pitch n + 1); the group sums go to `group_partials`.
__device__ bool gather_gram(const double* partials, double* group_partials, int* counters, int n, double* g) {
  const int entries = gram_entries(n), blocks = static_cast<int>(gridDim.x);
  const int groups = (blocks + kGroup - 1) / kGroup, group = static_cast<int>(blockIdx.x) / kGroup;
  const int members = min(kGroup, blocks - group * kGroup);
  if (!last_to_arrive(counters + 1 + group, members)) return false;
  for (int e = 2 * threadIdx.x; e < entries; e += 2 * kThreads)
    *reinterpret_cast<double2*>(group_partials + group * static_cast<index_t>(entries) + e) =
        sum_rows(partials + group * kGroup * static_cast<index_t>(entries), members, entries, e);
  if (!last_to_arrive(counters, groups)) return false;
  sum_into_gram(group_partials, groups, n, g);
  return true;
}

/// The sums over the block of a and b, in every thread.
__device__ double2 block_sums(double a, double b) {
  __shared__ double2 warp_sums[kWarps];
  for (int offset = 16; offset > 0; offset /= 2)
    a += __shfl_down_sync(~0u, a, offset), b += __shfl_down_sync(~0u, b, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = make_double2(a, b);
  __syncthreads();
  double2 total = make_double2(0.0, 0.0);
  for (int w = 0; w < kWarps; ++w) total.x += warp_sums[w].x, total.y += warp_sums[w].y;
  return total;
}

/// M = D R'^{-1} into `factor` (n x n, column-major, zero below the diagonal), where R'^T R' = D G D
/// (equilibrated, in g with pitch n + 1; upper triangle read). Right-looking Cholesky with the
/// matrix in registers: the threads form a 16 x 16 grid and thread (ti, tj) holds the entries
/// (ti + 16 a, tj + 16 b); step k needs only row k, which its owners publish in shared memory (two
/// buffers in `row`, so one barrier per step). The same row operations on x = I leave x = R'^{-T}
/// with its rows unscaled (row j times 1 / R'_jj), so the inverse comes at no extra step. At step
/// k in block a (of 16 rows), rows above block a are finished, G's entries left of it lie below
/// the diagonal and row k of x is zero right of it: the updates touch the rest only. A pivot not
/// positive and finite is a breakdown, seen by every thread alike.
template <int N>
__device__ void cholesky_inverse(const double* g, double* row, int n, const double* d, double* factor, Status* st) {
  constexpr int T = (N + 15) / 16;  // entries per thread and dimension
  static_assert(kThreads == 256, "a 16 x 16 grid of threads");
  const int ti = threadIdx.x % 16, tj = threadIdx.x / 16, p = n + 1;
  double gr[T][T], xr[T][T], inverse_of_row[T] = {};
#pragma unroll
  for (int a = 0; a < T; ++a)
#pragma unroll
    for (int b = 0; b < T; ++b) {
      const int i = ti + 16 * a, j = tj + 16 * b;
      gr[a][b] = i <= j && j < n ? g[i + j * p] : 0.0;
      xr[a][b] = i == j ? 1.0 : 0.0;
    }
#pragma unroll
  for (int a = 0; a < T; ++a) {
    for (int k = 16 * a; k < min(n, 16 * a + 16); ++k) {
      double* const row_g = row + (k % 2) * 2 * kMaxColumns;
      double* const row_x = row_g + kMaxColumns;
      if (ti == k % 16)
#pragma unroll
        for (int b = 0; b < T; ++b) {
          if (b >= a) row_g[tj + 16 * b] = gr[a][b];
          if (b <= a) row_x[tj + 16 * b] = xr[a][b];
        }
      __syncthreads();
      const double pivot = row_g[k];
      if (!(pivot > 0.0 && pivot <= 1.7976931348623157e308)) {
        if (threadIdx.x == 0) st->breakdown = 1;
        return;
      }
      const double inverse = rsqrt(pivot), inverse_pivot = inverse * inverse;
      if (ti == k % 16) inverse_of_row[a] = inverse;
      double multiplier[T], right_g[T], right_x[T];
#pragma unroll
      for (int c = a; c < T; ++c) {
        const int i = ti + 16 * c;
        multiplier[c] = i > k && i < n ? row_g[i] * inverse_pivot : 0.0;
        right_g[c] = row_g[tj + 16 * c];
      }
#pragma unroll
      for (int b = 0; b <= a; ++b) right_x[b] = row_x[tj + 16 * b];
#pragma unroll
      for (int c = a; c < T; ++c) {
#pragma unroll
        for (int b = a; b < T; ++b) gr[c][b] -= multiplier[c] * right_g[b];
#pragma unroll
        for (int b = 0; b <= a; ++b) xr[c][b] -= multiplier[c] * right_x[b];
      }
    }
  }
  __shared__ double inverse_diagonal[kMaxColumns];
#pragma unroll
  for (int a = 0; a < T; ++a)
    if (tj == 0 && ti + 16 * a < n) inverse_diagonal[ti + 16 * a] = inverse_of_row[a];
  __syncthreads();
#pragma unroll
  for (int a = 0; a < T; ++a)
#pragma unroll
    for (int b = 0; b < T; ++b) {  // x's entry (r, c) is M's (c, r)
      const int r = ti + 16 * a, c = tj + 16 * b;
      if (r < n && c < n) factor[c + r * n] = r >= c ? d[c] * xr[a][b] * inverse_diagonal[r] : 0.0;
    }
  if (threadIdx.x == 0) st->passes += 1;
}

/// How far from I the Gram sums of an FP32 Y may lie when Y is orthonormal to FP32 rounding: the
/// FP64 path's 2^-24 on Y before rounding, plus what the rounding (|dY| <= 2^-24 |Y| entrywise,
/// so ||Y^T dY + dY^T Y||_F <= 2 2^-24 ||Y||_F = 2 2^-24 sqrt(n)) adds to the sums the sweep sees.
/// With 2^-24 alone, a pass that left Y orthonormal to rounding ran the second pass anyway wherever
/// m is small (the rounding's share is about 2^-24 n / sqrt(m): twice 2^-24 at 1024 x 64).
__device__ double orthonormal_tolerance(int n) { return 0x1p-24 * (1.0 + 2.0 * sqrt(static_cast<double>(n))); }

/// The pass's factor from G (in g, overwritten; row: 2 x 2 kMaxColumns doubles of shared memory).
/// If `stop_when_orthogonal`: where ||G - I||_F <= orthonormal_tolerance(n), Y is orthonormal to
/// FP32 rounding as it stands and the sequence ends before this pass; where ||D G D - I||_F is
/// (G equilibrated: D = diag(G)^{-1/2}), this pass, the last, only scales the columns: M = D. Else R' is the
/// Cholesky factor of D G D, R = R' D^{-1}, and M = R^{-1} = D R'^{-1}. Written: `factor` = M
/// (n x n, column-major, upper triangular). A pivot not positive and finite, or (`second`) a
/// D G D farther than 1/2 from I (Y not yet well conditioned: the pass would not be accurate), is
/// a breakdown.
template <int N>
__device__ void factor_gram(double* g, double* row, int n, bool stop_when_orthogonal, bool second, double* factor,
                            Status* st, int pass) {
  const int p = n + 1;  // pitch
  __shared__ double d[kMaxColumns];
  for (int i = threadIdx.x; i < n; i += kThreads) d[i] = equilibration_factor(g[i + i * p]);
  __syncthreads();
  double raw = 0.0, equilibrated = 0.0;
  for (int e = threadIdx.x; e < n * n; e += kThreads) {
    const int i = e % n, j = e / n;
    const double identity = i == j ? 1.0 : 0.0, off = g[i + j * p] - identity;
    g[i + j * p] *= d[i] * d[j];
    const double scaled_off = g[i + j * p] - identity;
    raw += off * off, equilibrated += scaled_off * scaled_off;
  }
  const double2 squares = block_sums(raw, equilibrated);
  const double dist = sqrt(squares.y);
  const double tolerance = orthonormal_tolerance(n);
  if (stop_when_orthogonal && sqrt(squares.x) <= tolerance) {
    if (threadIdx.x == 0) st->last_pass = pass - 1;
    return;
  }
  if (stop_when_orthogonal && dist <= tolerance) {
    for (int e = threadIdx.x; e < n * n; e += kThreads) factor[e] = e % n == e / n ? d[e % n] : 0.0;
    if (threadIdx.x == 0) st->last_pass = pass;
    return;
  }
  if (second && !(dist <= 0.5)) {
    if (threadIdx.x == 0) st->breakdown = 1;
    return;
  }
  cholesky_inverse<N>(g, row, n, d, factor, st);
}

/// The warp's 32 rows (in `rows`) := rows M, rounded to FP32, on the FP64 Tensor
/// Cores: M (N x N, upper triangular, zero beyond n) in `m` with pitch N + 4 (4 mod 16: the
/// fragment loads are conflict-free). Sixteen rows by up to four column blocks at a time, the
/// highest columns first: output column j reads input columns up to j only, so each group's
/// products go back in place once its fragments are read.
template <int N>
__device__ void multiply_rows(float* rows, const double* m) {
  constexpr int NB = N / 8, kPitch = N + 4, kGroup = NB < 4 ? NB : 4;
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll 1
  for (int r0 = 0; r0 < 32; r0 += 16)
#pragma unroll
    for (int c0 = (NB - 1) / kGroup * kGroup; c0 >= 0; c0 -= kGroup) {
      double out[kGroup][4] = {};
#pragma unroll
      for (int k = 0; k < 8 * min(c0 + kGroup, NB); k += 8) {
        const float* column = rows + (k + t) * kWarpPitch + r0 + g;
        const double a[4] = {column[0], column[8], column[4 * kWarpPitch], column[4 * kWarpPitch + 8]};
#pragma unroll
        for (int c = 0; c < kGroup; ++c) {
          const int cb = c0 + c;
          if (cb >= NB || k > 8 * cb) continue;
          const double* mk = m + (k + t) + (8 * cb + g) * kPitch;
          const double b[2] = {mk[0], mk[4]};
          mma_f64(out[c], a, b);
        }
      }
      __syncwarp();
#pragma unroll
      for (int c = 0; c < kGroup; ++c)
#pragma unroll
        for (int q = 0; q < 4; ++q)
          if (c0 + c < NB)
            rows[(8 * (c0 + c) + 2 * t + q % 2) * kWarpPitch + r0 + g + 8 * (q / 2)] = static_cast<float>(out[c][q]);
      __syncwarp();
    }
}

/// The pass's factor M (n x n, as factor_gram wrote it) into `mm` (N x N, pitch N + 4, zeros
/// beyond n) for multiply_rows; past the L1 cache, since another block may have written it since
/// this one last read it. Every load is issued before the first store waits on one (a loop of
/// dependent round trips to L2 took about 10 us at N = 64).
template <int N>
__device__ void load_factor(const double* factor, int n, double* mm) {
  static_assert(N * N % kThreads == 0, "whole rounds of the block's threads");
  constexpr int kPerThread = N * N / kThreads;
  double v[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int e = threadIdx.x + k * kThreads, i = e % N, j = e / N;
    v[k] = i < n && j < n ? __ldcg(factor + i + j * n) : 0.0;
  }
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int e = threadIdx.x + k * kThreads;
    mm[e % N + e / N * (N + 4)] = v[k];
  }
  __syncthreads();
}

/// Register budget of a sweep: two blocks per multiprocessor for rows of up to 16 entries, one
/// beyond (the Gram tiles of 64 columns take 160 registers).
template <int N>
constexpr int kSweepsPerMultiprocessor = N <= 16 ? 2 : 1;

/// One read of a block's rows of Y. If pass `apply_pass` runs: Y := Y M (M = R^{-1} as factor_gram
/// wrote it) on the FP64 Tensor Cores, rounded to FP32. Then, if pass `gram_pass` runs: the
/// block's sums of G = Y^T Y over the rows as they now stand (the rounded values), in FP64. One
/// sweep does pass p's product and pass p + 1's Gram sums, so CholeskyQR2 reads Y three times,
/// not four. Each warp's next chunk of rows is on its way to shared memory (cp.async) while this
/// one is worked on. The block that finishes last adds the blocks' sums (gather_gram) and writes pass
/// `gram_pass`'s factor (factor_gram), so a pass needs no other kernel. The last sweep (non-null
/// `verdict`) publishes the status, final by then, to the host first.
template <int N>
__global__ void __launch_bounds__(kThreads, kSweepsPerMultiprocessor<N>)
    sweep(float* y, index_t ld, index_t m, int n, index_t rows_per_block, double* factor, double* partials,
          double* group_partials, int* counters, Status* st, Status* verdict, int apply_pass, int gram_pass,
          bool stop_when_orthogonal, bool vector) {
  constexpr int NB = N / 8;
  if (verdict && blockIdx.x == 0 && threadIdx.x == 0) *verdict = *st;
  const bool apply = pass_runs(st, apply_pass), gram = pass_runs(st, gram_pass);
  if (!apply && !gram) return;
  extern __shared__ double shared[];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float* const buffers = reinterpret_cast<float*>(shared) + warp * 2 * N * kWarpPitch;  // this warp's rows
  for (int c = n; c < N; ++c) buffers[c * kWarpPitch + lane] = buffers[(N + c) * kWarpPitch + lane] = 0.0f;
  __shared__ double mm[N * (N + 4)];
  if (apply) load_factor<N>(factor, n, mm);
  double acc[gram_tiles(NB)][4] = {};
  const index_t first = blockIdx.x * rows_per_block, end = min(m, first + rows_per_block);
  stage_rows<N>(buffers, y, ld, first + 32 * warp, end, n, vector);
  for (index_t r0 = first + 32 * warp, chunk = 0; r0 < end; r0 += kThreads, ++chunk) {
    float* const rows = buffers + (chunk % 2) * N * kWarpPitch;
    stage_rows<N>(buffers + ((chunk + 1) % 2) * N * kWarpPitch, y, ld, r0 + kThreads, end, n, vector);
    wait_for_rows<1>();
    if (apply) {
      multiply_rows<N>(rows, mm);
      store_rows<N>(rows, y, ld, r0, end, n, vector);
    }
    if (gram) accumulate_rows<NB>(rows, acc);
    __syncwarp();  // the rows are read before the stage after next overwrites them
  }
  wait_for_rows<0>();
  if (!gram) return;
  write_partials<NB>(acc, shared, partials);
  if (!gather_gram(partials, group_partials, counters, n, shared)) return;
  factor_gram<N>(shared, shared + n * (n + 1), n, stop_when_orthogonal, gram_pass > 0, factor, st, gram_pass);
}

// The resident CholeskyQR: a Y of at most kResidentBlocks x kThreads rows, each block's rows (one
// chunk, 32 a warp) in its shared memory from the first read to the last write.
constexpr int kResidentBlocks = 8;  // the portable cluster size

/// All blocks of the cluster wait here; global writes before it are visible to the others after it.
__device__ void cluster_barrier() {
  __threadfence();
#if __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}

/// pass_runs for a status another block wrote during this kernel (read past the L1 cache).
__device__ bool pass_runs_now(const Status* st, int pass) {
  const volatile Status* v = st;
  return !v->breakdown && pass <= v->last_pass;
}

/// CholeskyQR of a short Y in one kernel on a cluster of ceil(m / kThreads) blocks (compute 9.0),
/// each holding its rows in shared memory between the first read and the last write. Per pass:
/// the blocks' Gram sums (write_partials), a cluster barrier, block 0 adds them in sum_rows' fixed
/// order and writes the factor (factor_gram), a barrier, every block multiplies its rows: the
/// sweeps' sums, factors and products, in their order. Y is read once and written once (not at all
/// where no pass runs), with no kernel boundary between passes (the three sweeps of a 1024 x 64 Y,
/// each a few warps' worth of work, took about 100 us on the H100). Block 0, which alone writes the
/// status, publishes it to `verdict` at its end.
template <int N>
__global__ void __launch_bounds__(kThreads, 1)
    resident_cholesky_qr(float* y, index_t ld, index_t m, int n, double* factor, double* partials, Status* st,
                         Status* verdict, int passes, bool adaptive, bool vector) {
  constexpr int NB = N / 8;
  extern __shared__ double shared[];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float* const rows = reinterpret_cast<float*>(shared) + warp * N * kWarpPitch;
  double* const scratch = shared + kWarps * N * kWarpPitch / 2;  // the warps' Gram tree, then G
  __shared__ double mm[N * (N + 4)];
  if (blockIdx.x == 0 && threadIdx.x == 0) *st = Status{0, 0, 1 << 30};
  for (int c = n; c < N; ++c) rows[c * kWarpPitch + lane] = 0.0f;
  const index_t first = blockIdx.x * static_cast<index_t>(kThreads) + 32 * warp;
  stage_rows<N>(rows, y, ld, first, m, n, vector);
  wait_for_rows<0>();
  bool applied = false;
  for (int pass = 0; pass < passes; ++pass) {
    double acc[gram_tiles(NB)][4] = {};
    accumulate_rows<NB>(rows, acc);
    write_partials<NB>(acc, scratch, partials);
    cluster_barrier();
    if (blockIdx.x == 0) {
      sum_into_gram(partials, static_cast<int>(gridDim.x), n, scratch);
      factor_gram<N>(scratch, scratch + n * (n + 1), n, adaptive, pass > 0, factor, st, pass);
    }
    cluster_barrier();
    if (!pass_runs_now(st, pass)) break;
    load_factor<N>(factor, n, mm);
    multiply_rows<N>(rows, mm);
    applied = true;
  }
  __syncwarp();
  if (applied) store_rows<N>(rows, y, ld, first, m, n, vector);
  if (blockIdx.x == 0 && threadIdx.x == 0) *verdict = *st;
}

__global__ void reset(Status* st, int* counters, int count) {
  if (threadIdx.x == 0) *st = Status{0, 0, 1 << 30};
  for (int i = threadIdx.x; i < count; i += blockDim.x) counters[i] = 0;
}

using SweepKernel = void (*)(float*, index_t, index_t, int, index_t, double*, double*, double*, int*, Status*,
                            Status*, int, int, bool, bool);

/// The sweep over n columns, padded to whole tiles.
SweepKernel sweep_for(int n) {
  switch (padded_columns(n)) {
    case 16: return sweep<16>;
    case 32: return sweep<32>;
    case 48: return sweep<48>;
    default: return sweep<64>;
  }
}

using ResidentKernel = void (*)(float*, index_t, index_t, int, double*, double*, Status*, Status*, int, bool, bool);

ResidentKernel resident_for(int n) {
  switch (padded_columns(n)) {
    case 16: return resident_cholesky_qr<16>;
    case 32: return resident_cholesky_qr<32>;
    case 48: return resident_cholesky_qr<48>;
    default: return resident_cholesky_qr<64>;
  }
}

/// The resident kernel's dynamic shared memory: its rows, then the Gram tree's slots (later G and
/// the factor's row buffers).
int resident_shared_bytes(int n) {
  return static_cast<int>(sizeof(float)) * kWarps * padded_columns(n) * kWarpPitch +
         static_cast<int>(sizeof(double)) * std::max(kWarps / 2 * gram_entries(n), n * (n + 1) + 4 * kMaxColumns);
}

bool clusters_available() {
  int device = 0, available = 0;
  RANDNLA_CUDA(cudaGetDevice(&device));
  RANDNLA_CUDA(cudaDeviceGetAttribute(&available, cudaDevAttrClusterLaunch, device));
  return available != 0;
}

/// resident_cholesky_qr on a cluster of `blocks` blocks (kThreads rows each).
void launch_resident(MatrixView<float> y, int passes, bool adaptive, bool vector, double* factor, double* partials,
                     Status* st, Status* verdict, index_t blocks, cudaStream_t s) {
  const int n = static_cast<int>(y.cols());
  const ResidentKernel kernel = resident_for(n);
  allow_dynamic_shared_memory(kernel, resident_shared_bytes(kMaxColumns));
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(blocks));
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = static_cast<std::size_t>(resident_shared_bytes(n));
  config.stream = s;
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = static_cast<unsigned>(blocks);
  cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = 1;
  RANDNLA_CUDA(cudaLaunchKernelEx(&config, kernel, y.data(), y.ld(), y.rows(), n, factor, partials, st, verdict,
                                  passes, adaptive, vector));
}

/// Sweeps of n columns that fit on the device at once: asked of the driver once per device and n
/// (the answer does not change, and asking costs microseconds of every call).
index_t resident_sweeps(int n) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, index_t> known;
  const int device = current_device();
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(device, n);
  if (const auto it = known.find(key); it != known.end()) return it->second;
  const SweepKernel kernel = sweep_for(n);
  allow_dynamic_shared_memory(kernel, sweep_shared_bytes(kMaxColumns));
  int per_multiprocessor = 0;
  RANDNLA_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, kernel, kThreads,
                                                             sweep_shared_bytes(n)));
  const index_t resident = std::max(1, per_multiprocessor) * static_cast<index_t>(multiprocessors());
  known.emplace(key, resident);
  return resident;
}

/// The workspace's parts, in doubles: the status, the factor, the blocks' partial sums, the
/// groups', the arrival counters (the last level's, then the groups'). One wave of blocks, each
/// over whole chunks of rows.
struct Layout {
  index_t rows_per_block, blocks, groups, status = 0, factor = 2, partials, group_partials, counters, total;
  Layout(index_t m, int n) {
    const index_t target = resident_sweeps(n);
    rows_per_block = ((m + target - 1) / target + kThreads - 1) / kThreads * kThreads;
    blocks = std::max<index_t>(1, (m + rows_per_block - 1) / rows_per_block);
    groups = (blocks + kGroup - 1) / kGroup;
    partials = (factor + n * n + 1) / 2 * 2;  // 16-byte aligned: the sums are read in pairs
    group_partials = partials + blocks * gram_entries(n);
    counters = group_partials + groups * gram_entries(n);
    total = counters + (groups + 2) / 2;
  }
};

/// The status reset and the most + 1 sweeps of the general path, the last publishing the verdict.
void launch_sweeps(MatrixView<float> y, int most, bool adaptive, bool vector, MatrixView<double> work,
                   const Layout& layout, Status* verdict, cudaStream_t s) {
  const index_t m = y.rows();
  const int n = static_cast<int>(y.cols());
  auto* st = reinterpret_cast<Status*>(work.data() + layout.status);
  double *r = work.data() + layout.factor, *partials = work.data() + layout.partials,
         *group_partials = work.data() + layout.group_partials;
  auto* counters = reinterpret_cast<int*>(work.data() + layout.counters);
  const SweepKernel sweep_n = sweep_for(n);
  const auto sweep_y = [&](int apply_pass, int gram_pass) {
    sweep_n<<<static_cast<unsigned>(layout.blocks), kThreads, sweep_shared_bytes(n), s>>>(
        y.data(), y.ld(), m, n, layout.rows_per_block, r, partials, group_partials, counters, st,
        gram_pass < 0 ? verdict : nullptr, apply_pass, gram_pass, adaptive, vector);
    RANDNLA_CUDA_LAUNCH("fused CholeskyQR: sweep of Y");
  };
  reset<<<1, 32, 0, s>>>(st, counters, static_cast<int>(layout.groups) + 1);
  RANDNLA_CUDA_LAUNCH("fused CholeskyQR: status");
  sweep_y(-1, 0);
  for (int pass = 0; pass < most; ++pass) sweep_y(pass, pass + 1 < most ? pass + 1 : -1);
}

}  // namespace

index_t fused_cholesky_qr_workspace(index_t m, index_t n) { return Layout(m, static_cast<int>(n)).total; }

void queue_fused_cholesky_qr(MatrixView<float> y, int passes, MatrixView<double> work, Status* verdict,
                             cudaEvent_t published, cudaStream_t s) {
  const Layout layout(y.rows(), static_cast<int>(y.cols()));
  auto* st = reinterpret_cast<Status*>(work.data() + layout.status);
  const bool adaptive = passes == 0;
  const bool vector = reinterpret_cast<std::uintptr_t>(y.data()) % 16 == 0 && y.ld() % 4 == 0;
  const int most = adaptive ? 2 : passes;
  if (layout.rows_per_block == kThreads && layout.blocks <= kResidentBlocks && clusters_available())
    launch_resident(y, most, adaptive, vector, work.data() + layout.factor, work.data() + layout.partials, st,
                    verdict, layout.blocks, s);
  else
    launch_sweeps(y, most, adaptive, vector, work, layout, verdict, s);
  RANDNLA_CUDA(cudaEventRecord(published, s));
}

}  // namespace cuda
}  // namespace randnla
