// TSQR blocks of at most 32 columns, one warp each, held in registers (lane l holds the block's rows
// l, l + 32, ...): no shared memory and no barrier in the factorisation; sums across the warp by
// shuffles. Householder QR and the thin Q as LAPACK's sgeqr2 / sorg2r, in FP32 with FP64 norms.
// Included by tsqr_ops.cu only.
#pragma once

#include <cuda_runtime.h>

#include "cuda/elementwise/for_each.cuh"
#include "randnla/tsqr/tsqr_ops.hpp"

namespace randnla {
namespace cuda {
namespace warp_blocks {

constexpr int kWarpsPerCta = 4;
constexpr unsigned kAll = 0xffffffffu;

/// Columns a block of n columns is padded to (8, 16 or 32), and the rows each lane holds.
inline int padded_columns(index_t n) { return n <= 8 ? 8 : n <= 16 ? 16 : 32; }
inline int rows_per_lane(int) { return 4; }
/// Most rows of a warp block of n columns (0: n is too wide for one warp).
inline index_t max_rows(index_t n) { return n <= 32 ? 32 * rows_per_lane(padded_columns(n)) : 0; }

template <class T>
__device__ __forceinline__ T warp_allreduce(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kAll, v, o);
  return v;
}

struct WarpBlock {
  index_t id, start;
  int rows;
};

__device__ __forceinline__ WarpBlock warp_block(index_t m, index_t blocks) {
  const index_t id = blockIdx.x * static_cast<index_t>(kWarpsPerCta) + threadIdx.x / 32;
  const index_t start = tsqr_block_start(id, m, blocks);
  return {id, start, static_cast<int>(tsqr_block_start(id + 1, m, blocks) - start)};
}

/// x := this lane's rows of the block (zeros past its rows and columns).
template <int N, int L, class T>
__device__ __forceinline__ void load_rows(const MatrixView<T>& a, const WarpBlock& b, float (&x)[L][N]) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int k = 0; k < L; ++k)
#pragma unroll
    for (int c = 0; c < N; ++c) {
      const int row = lane + 32 * k;
      x[k][c] = row < b.rows && c < a.cols() ? a(b.start + row, c) : 0.0f;
    }
}

/// H_j = I - tau v v^T applied to the columns c in (j, end): w_c = tau v^T x_c summed across the
/// warp (the columns' shuffles interleaved), then x_c -= v w_c.
template <int N, int L>
__device__ __forceinline__ void apply_reflector(float (&x)[L][N], const float (&v)[L], int j, float tau, int end) {
  float p[N];
#pragma unroll
  for (int c = 0; c < N; ++c) {
    p[c] = 0.0f;
    if (c > j && c < end)
#pragma unroll
      for (int k = 0; k < L; ++k) p[c] += v[k] * x[k][c];
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
#pragma unroll
    for (int c = 0; c < N; ++c)
      if (c > j && c < end) p[c] += __shfl_xor_sync(kAll, p[c], o);
#pragma unroll
  for (int c = 0; c < N; ++c)
    if (c > j && c < end)
#pragma unroll
      for (int k = 0; k < L; ++k) x[k][c] -= v[k] * (tau * p[c]);
}

struct Reflector {
  float beta, tau, scale;  // R's diagonal entry, tau, and 1 / (alpha - beta) that scales x into v
};

/// LAPACK's slarfg for alpha and sigma = ||x below alpha||^2: in FP32 where alpha^2 and sigma lie
/// well inside FP32's range (the common case, and the fast one), in FP64 otherwise.
__device__ __forceinline__ Reflector householder(float alpha, double sigma) {
  if (sigma == 0) return {alpha, 0.0f, 1.0f};
  if (sigma >= 1e-30 && sigma <= 1e30 && fabsf(alpha) <= 1e15f) {
    const float beta = -copysignf(sqrtf(alpha * alpha + static_cast<float>(sigma)), alpha);
    return {beta, (beta - alpha) / beta, 1.0f / (alpha - beta)};
  }
  const double beta = -copysign(sqrt(static_cast<double>(alpha) * alpha + sigma), static_cast<double>(alpha));
  return {static_cast<float>(beta), static_cast<float>((beta - alpha) / beta), static_cast<float>(1 / (alpha - beta))};
}

/// Householder QR of each block (A m x n, `blocks` blocks of at most 32 L rows, n <= N): R_i into
/// rows [i n, (i + 1) n) of r; with q non-empty, Q_i into q's rows of block i. The column loops are
/// unrolled, so that every index into x is a constant and x stays in registers.
template <int N, int L>
__global__ void __launch_bounds__(kWarpsPerCta * 32)
    factor_kernel(MatrixView<const float> a, index_t blocks, MatrixView<float> q, MatrixView<float> r) {
  const WarpBlock b = warp_block(a.rows(), blocks);
  if (b.id >= blocks) return;
  const int lane = threadIdx.x % 32, n = static_cast<int>(a.cols());
  float x[L][N], tau[N];
  load_rows(a, b, x);
#pragma unroll
  for (int j = 0; j < N; ++j) {
    if (j >= n) break;
    double part = 0;
#pragma unroll
    for (int k = 0; k < L; ++k)
      if (lane + 32 * k > j) part += static_cast<double>(x[k][j]) * x[k][j];
    const Reflector h = householder(__shfl_sync(kAll, x[0][j], j), warp_allreduce(part));
    tau[j] = h.tau;
    float v[L];
#pragma unroll
    for (int k = 0; k < L; ++k) {
      const int row = lane + 32 * k;
      v[k] = row > j ? x[k][j] * h.scale : row == j ? 1.0f : 0.0f;
      if (row >= j) x[k][j] = row == j ? h.beta : v[k];
    }
    apply_reflector(x, v, j, h.tau, n);
  }
#pragma unroll
  for (int c = 0; c < N; ++c)
    if (c < n && lane < n) r(b.id * n + lane, c) = c >= lane ? x[0][c] : 0.0f;
  if (q.empty()) return;
#pragma unroll
  for (int j = N - 1; j >= 0; --j) {
    if (j >= n) continue;
    float v[L];
#pragma unroll
    for (int k = 0; k < L; ++k) {
      const int row = lane + 32 * k;
      v[k] = row > j ? x[k][j] : row == j ? 1.0f : 0.0f;
    }
    apply_reflector(x, v, j, tau[j], n);
#pragma unroll
    for (int k = 0; k < L; ++k) {
      const int row = lane + 32 * k;
      x[k][j] = row < j ? 0.0f : row == j ? 1.0f - tau[j] : -tau[j] * v[k];
    }
  }
#pragma unroll
  for (int k = 0; k < L; ++k)
#pragma unroll
    for (int c = 0; c < N; ++c) {
      const int row = lane + 32 * k;
      if (row < b.rows && c < n) q(b.start + row, c) = x[k][c];
    }
}

/// Q_i := Q_i S_i for each block, S_i (n x n) rows [i n, (i + 1) n) of s, staged in shared memory
/// by rows (N x N, zeros past n) and read as broadcasts.
template <int N, int L>
__global__ void __launch_bounds__(kWarpsPerCta * 32)
    multiply_kernel(MatrixView<float> q, index_t blocks, MatrixView<const float> s) {
  __shared__ float4 staged[kWarpsPerCta][N * N / 4];
  const WarpBlock b = warp_block(q.rows(), blocks);
  if (b.id >= blocks) return;
  const int lane = threadIdx.x % 32, n = static_cast<int>(q.cols());
  float* st = reinterpret_cast<float*>(staged[threadIdx.x / 32]);
  for (int e = lane; e < N * N; e += 32) {
    const int k = e / N, c = e % N;
    st[e] = k < n && c < n ? s(b.id * n + k, c) : 0.0f;
  }
  __syncwarp();
  // Each column of the block read once, as it is needed: Q_i is read whole before it is written over.
  float y[L][N] = {};
#pragma unroll
  for (int kk = 0; kk < N; ++kk) {
    float x[L];
#pragma unroll
    for (int k = 0; k < L; ++k) x[k] = kk < n && lane + 32 * k < b.rows ? q(b.start + lane + 32 * k, kk) : 0.0f;
#pragma unroll
    for (int c4 = 0; c4 < N / 4; ++c4) {
      const float4 sv = staged[threadIdx.x / 32][kk * (N / 4) + c4];
#pragma unroll
      for (int k = 0; k < L; ++k) {
        y[k][4 * c4] += x[k] * sv.x, y[k][4 * c4 + 1] += x[k] * sv.y;
        y[k][4 * c4 + 2] += x[k] * sv.z, y[k][4 * c4 + 3] += x[k] * sv.w;
      }
    }
  }
#pragma unroll
  for (int k = 0; k < L; ++k)
#pragma unroll
    for (int c = 0; c < N; ++c) {
      const int row = lane + 32 * k;
      if (row < b.rows && c < n) q(b.start + row, c) = y[k][c];
    }
}

inline unsigned grid(index_t blocks) { return static_cast<unsigned>((blocks + kWarpsPerCta - 1) / kWarpsPerCta); }

inline void factor(MatrixView<const float> a, index_t blocks, MatrixView<float> q, MatrixView<float> r, cudaStream_t s) {
  const unsigned g = grid(blocks), t = kWarpsPerCta * 32;
  switch (padded_columns(a.cols())) {
    case 8: factor_kernel<8, 4><<<g, t, 0, s>>>(a, blocks, q, r); break;
    case 16: factor_kernel<16, 4><<<g, t, 0, s>>>(a, blocks, q, r); break;
    default: factor_kernel<32, 4><<<g, t, 0, s>>>(a, blocks, q, r); break;
  }
  RANDNLA_CUDA_LAUNCH("tsqr factor warp blocks");
}

/// Whether multiply() takes blocks of n columns (it holds a lane's rows of Q_i S_i in registers:
/// up to 16 columns; wider blocks go to the shared-memory kernel).
inline bool multiplies(index_t n) { return n <= 16; }

inline void multiply(MatrixView<float> q, index_t blocks, MatrixView<const float> st, cudaStream_t s) {
  const unsigned g = grid(blocks), t = kWarpsPerCta * 32;
  if (padded_columns(q.cols()) == 8) multiply_kernel<8, 4><<<g, t, 0, s>>>(q, blocks, st);
  else multiply_kernel<16, 4><<<g, t, 0, s>>>(q, blocks, st);
  RANDNLA_CUDA_LAUNCH("tsqr multiply warp blocks");
}

}  // namespace warp_blocks
}  // namespace cuda
}  // namespace randnla
