// The Tensor Core TSQR variants' blocks on CUDA (Ootomo & Yokota, "TSQR on TensorCores"): one warp
// per block of at most 32 rows and 16 columns, the poster's shape. Each reflector H = I - tau v v^T
// is formed in shared memory and applied to the block (H R) and, back down, to Q (H Q') as a
// 32 x 32 by 32 x 16 product on the Tensor Cores (wmma): FP16 operands (with refinement: the
// operands split as hi + lo 2^-11, three products, the correction summed apart), or TF32 operands;
// FP32 sums. The numerics are the portable backend's (backends/portable/tsqr), up to the order of
// the Tensor Cores' sums. Included by tsqr_ops.cu only.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include "cuda/elementwise/for_each.cuh"
#include "randnla/tsqr/tsqr_arithmetic.hpp"
#include "randnla/tsqr/tsqr_ops.hpp"

namespace randnla {
namespace cuda {
namespace tensor_core_blocks {

constexpr int kRows = 32, kCols = 16;
constexpr unsigned kAll = 0xffffffffu;

/// Most rows of a block of n columns (0: n is wider than a block).
inline index_t max_rows(index_t n) { return n >= 1 && n <= kCols ? kRows : 0; }

/// One warp's shared memory: operands column-major with leading dimension kRows, 32-byte aligned
/// as wmma's loads and stores require.
struct Shared {
  alignas(32) float w[kRows * kCols];     ///< the block; R above the diagonal, v below it
  alignas(32) float q[kRows * kCols];     ///< Q's block
  alignas(32) float main[kRows * kCols];  ///< a product's main sum
  alignas(32) float corr[kRows * kCols];  ///< its refinement's correction sum
  alignas(32) float h32[kRows * kRows];   ///< H (TF32 operands: rounded)
  alignas(32) float x32[kRows * kCols];   ///< the right operand (TF32: rounded)
  alignas(32) __half h_hi[kRows * kRows], h_lo[kRows * kRows];
  alignas(32) __half x_hi[kRows * kCols], x_lo[kRows * kCols];
  float tau[kCols];
};

template <class T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kAll, v, o);
  return v;
}

/// The operand `x` (kRows x cols, column-major, ld kRows) as the arithmetic takes it.
__device__ __forceinline__ void round_operand(const float* x, int count, float* x32, __half* hi, __half* lo,
                                              TsqrArithmetic arithmetic) {
  for (int e = threadIdx.x % 32; e < count; e += 32) {
    if (arithmetic == TsqrArithmetic::TF32) {
      x32[e] = round_to_tf32(x[e]);
    } else if (arithmetic == TsqrArithmetic::FP16) {
      hi[e] = __ushort_as_half(to_fp16(x[e]).bits);
    } else {
      fp16 h, l;
      split_halfhalf(x[e], 0, h, l);
      hi[e] = __ushort_as_half(h.bits), lo[e] = __ushort_as_half(l.bits);
    }
  }
}

/// main (+ corr) := A B for A kRows x k (column-major, ld kRows) and B k x kCols (ld kRows), from
/// the rounded operands in s (A in h_*, B in x_*; ld_b the leading dimension of B).
__device__ __forceinline__ void tensor_core_product(Shared& s, int k, int ld_b, TsqrArithmetic arithmetic) {
  using namespace nvcuda;
  for (int i0 = 0; i0 < kRows; i0 += 16) {
    if (arithmetic == TsqrArithmetic::TF32) {
      wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int k0 = 0; k0 < k; k0 += 8) {
        wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::col_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> b;
        wmma::load_matrix_sync(a, s.h32 + i0 + k0 * kRows, kRows);
        wmma::load_matrix_sync(b, s.x32 + k0, ld_b);
        for (int t = 0; t < a.num_elements; ++t) a.x[t] = wmma::__float_to_tf32(a.x[t]);
        for (int t = 0; t < b.num_elements; ++t) b.x[t] = wmma::__float_to_tf32(b.x[t]);
        wmma::mma_sync(acc, a, b, acc);
      }
      wmma::store_matrix_sync(s.main + i0, acc, kRows, wmma::mem_col_major);
      continue;
    }
    const bool refined = arithmetic == TsqrArithmetic::FP16Refined;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc, cor;
    wmma::fill_fragment(acc, 0.0f);
    wmma::fill_fragment(cor, 0.0f);
    for (int k0 = 0; k0 < k; k0 += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::col_major> ah, al;
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> bh, bl;
      wmma::load_matrix_sync(ah, s.h_hi + i0 + k0 * kRows, kRows);
      wmma::load_matrix_sync(bh, s.x_hi + k0, ld_b);
      wmma::mma_sync(acc, ah, bh, acc);
      if (!refined) continue;
      wmma::load_matrix_sync(al, s.h_lo + i0 + k0 * kRows, kRows);
      wmma::load_matrix_sync(bl, s.x_lo + k0, ld_b);
      wmma::mma_sync(cor, al, bh, cor);
      wmma::mma_sync(cor, ah, bl, cor);
    }
    wmma::store_matrix_sync(s.main + i0, acc, kRows, wmma::mem_col_major);
    wmma::store_matrix_sync(s.corr + i0, cor, kRows, wmma::mem_col_major);
  }
  __syncwarp();
}

/// The product's result (main + corr 2^-11; main alone for TF32 and FP16).
__device__ __forceinline__ float product_at(const Shared& s, int e, TsqrArithmetic arithmetic) {
  return arithmetic == TsqrArithmetic::FP16Refined ? exact::add(s.main[e], s.corr[e] * kSplitShiftInverse) : s.main[e];
}

/// x(j:, c) := H_j x(j:, c) for the columns c in [c0, kCols) of x (w or q), H_j from column j of w.
__device__ __forceinline__ void apply_reflector(Shared& s, float* x, int j, int c0, TsqrArithmetic arithmetic) {
  const int lane = threadIdx.x % 32;
  const float tau = s.tau[j];
  for (int e = lane; e < kRows * kRows; e += 32) {
    const int i = e % kRows, k = e / kRows;
    const float vi = i < j ? 0.0f : i == j ? 1.0f : s.w[i + j * kRows];
    const float vk = k < j ? 0.0f : k == j ? 1.0f : s.w[k + j * kRows];
    s.h32[e] = reflector_entry(i == k, tau, vi, vk);
  }
  __syncwarp();
  round_operand(s.h32, kRows * kRows, s.h32, s.h_hi, s.h_lo, arithmetic);
  round_operand(x, kRows * kCols, s.x32, s.x_hi, s.x_lo, arithmetic);
  __syncwarp();
  tensor_core_product(s, kRows, kRows, arithmetic);
  for (int c = c0; c < kCols; ++c)
    if (lane >= j) x[lane + c * kRows] = product_at(s, lane + c * kRows, arithmetic);
  __syncwarp();
}

/// The reflector of column j of w from row j (lane = row): beta into (j, j), v's tail below it,
/// tau into s.tau[j].
__device__ __forceinline__ void reflector(Shared& s, int j) {
  const int lane = threadIdx.x % 32;
  const float x = s.w[lane + j * kRows];
  const Reflector h = householder(__shfl_sync(kAll, x, j), warp_sum(lane > j ? x * x : 0.0f));
  if (lane > j) s.w[lane + j * kRows] = x * h.to_v;
  if (lane == j) s.w[lane + j * kRows] = h.beta, s.tau[j] = h.tau;
  __syncwarp();
}

/// Scales w by block_scale of its largest column norm (the portable backend's rule), and returns
/// that power of two.
__device__ __forceinline__ float scale_into_range(Shared& s, int n) {
  const int lane = threadIdx.x % 32;
  double big = 0.0;
  for (int c = 0; c < n; ++c) {
    const double x = s.w[lane + c * kRows], sum = warp_sum(x * x);
    big = sum > big ? sum : big;
  }
  const float scale = block_scale(static_cast<float>(sqrt(big)));
  for (int c = 0; c < n; ++c) s.w[lane + c * kRows] *= scale;
  __syncwarp();
  return scale;
}

/// This thread block's rows [r0, r0 + rows) of an m-row matrix split as tsqr_block_start.
struct BlockRows {
  index_t r0;
  int rows;
};
__device__ __forceinline__ BlockRows block_rows(index_t m, index_t blocks) {
  const index_t r0 = tsqr_block_start(blockIdx.x, m, blocks);
  return {r0, static_cast<int>(tsqr_block_start(blockIdx.x + 1, m, blocks) - r0)};
}

/// One warp per block: R_i into r_stack, Q_i into q where q is not empty (A read first, so q may
/// be A). Rows and columns past the block's are zeros in shared memory.
__global__ void __launch_bounds__(32) factor_kernel(MatrixView<const float> a, index_t blocks, MatrixView<float> q,
                                                    MatrixView<float> r_stack, TsqrArithmetic arithmetic) {
  __shared__ Shared s;
  const index_t blk = blockIdx.x;
  const int n = static_cast<int>(a.cols()), lane = threadIdx.x;
  const auto [r0, rows] = block_rows(a.rows(), blocks);
  for (int c = 0; c < kCols; ++c) s.w[lane + c * kRows] = lane < rows && c < n ? a(r0 + lane, c) : 0.0f;
  __syncwarp();
  const float scale = scale_into_range(s, n);
  for (int j = 0; j < n; ++j) {
    reflector(s, j);
    apply_reflector(s, s.w, j, j + 1, arithmetic);
  }
  for (int c = 0; c < n; ++c)
    if (lane < n) r_stack(blk * n + lane, c) = lane <= c ? s.w[lane + c * kRows] / scale : 0.0f;
  if (q.empty()) return;
  for (int c = 0; c < kCols; ++c) s.q[lane + c * kRows] = lane == c ? 1.0f : 0.0f;
  __syncwarp();
  for (int j = n - 1; j >= 0; --j) apply_reflector(s, s.q, j, j, arithmetic);
  for (int c = 0; c < n; ++c)
    if (lane < rows) q(r0 + lane, c) = s.q[lane + c * kRows];
}

/// Q's block i := Q_i S_i, one warp per block, S_i (n x n, zero-padded to kCols) as the right operand.
__global__ void __launch_bounds__(32) multiply_kernel(MatrixView<float> q, index_t blocks,
                                                      MatrixView<const float> s_stack, TsqrArithmetic arithmetic) {
  __shared__ Shared s;
  const index_t blk = blockIdx.x;
  const int n = static_cast<int>(q.cols()), lane = threadIdx.x;
  const auto [r0, rows] = block_rows(q.rows(), blocks);
  // The left operand Q_i (kRows x kCols) goes where H goes, S_i where the right operand goes.
  for (int c = 0; c < kRows; ++c) s.h32[lane + c * kRows] = lane < rows && c < n ? q(r0 + lane, c) : 0.0f;
  for (int c = 0; c < kCols; ++c) s.w[lane + c * kRows] = lane < n && c < n ? s_stack(blk * n + lane, c) : 0.0f;
  __syncwarp();
  round_operand(s.h32, kRows * kRows, s.h32, s.h_hi, s.h_lo, arithmetic);
  round_operand(s.w, kRows * kCols, s.x32, s.x_hi, s.x_lo, arithmetic);
  __syncwarp();
  tensor_core_product(s, kCols, kRows, arithmetic);
  for (int c = 0; c < n; ++c)
    if (lane < rows) q(r0 + lane, c) = product_at(s, lane + c * kRows, arithmetic);
}

inline void factor(MatrixView<const float> a, index_t blocks, MatrixView<float> q, MatrixView<float> r,
                   TsqrArithmetic arithmetic, cudaStream_t stream) {
  factor_kernel<<<static_cast<unsigned>(blocks), 32, 0, stream>>>(a, blocks, q, r, arithmetic);
  RANDNLA_CUDA_LAUNCH("tensor_core_blocks::factor");
}

inline void multiply(MatrixView<float> q, index_t blocks, MatrixView<const float> s, TsqrArithmetic arithmetic,
                     cudaStream_t stream) {
  multiply_kernel<<<static_cast<unsigned>(blocks), 32, 0, stream>>>(q, blocks, s, arithmetic);
  RANDNLA_CUDA_LAUNCH("tensor_core_blocks::multiply");
}

}  // namespace tensor_core_blocks
}  // namespace cuda
}  // namespace randnla
