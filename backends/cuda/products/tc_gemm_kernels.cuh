// What the two Tensor Core product kernels share: the device-side plan, the padding of packed
// operands (K-contiguous rows_p x kp, hi and lo parts in separate arrays), and the epilogue.
// The mma.sync kernel (tc_gemm.cu, sm_80 and later) reads both operands packed; the wgmma kernel
// (tc_gemm_sm90.cu, sm_90a) streams one FP32 operand from the caller's matrix and reads the other packed.
#pragma once

#include <cuda_runtime.h>

#include "randnla/matrix_view.hpp"
#include "randnla/precision.hpp"
#include "cuda/tc/nonfinite_epilogue.cuh"

namespace randnla {
namespace cuda {

struct DevicePlan {
  int use_fp16;
  int scale_a;
  int scale_b;
};

/// Packed extents are multiples of these, for either kernel's tiles.
constexpr index_t kPadRows = 128, kPadK = 64;

struct GemmArgs {
  const void* a_hi;
  const void* a_lo;
  const void* b_hi;
  const void* b_lo;
  index_t mp, np, kp;  // padded extents; kp is the row stride of every packed operand
  index_t m, n;
  float alpha, beta;
  float* c;
  index_t ldc;
  const DevicePlan* plan;
};

/// C(i, j) = alpha * 2^-(sa+sb) * (main + corr * 2^-11) + beta * C(i, j), inside the matrix only.
__device__ __forceinline__ void store_c(const GemmArgs& args, float unscale, index_t i, index_t j, float main,
                                        float corr) {
  if (i >= args.m || j >= args.n) return;
  const float v = args.alpha * (unscale * (main + corr * kSplitShiftInverse));
  float* cij = args.c + i + j * args.ldc;
  *cij = args.beta == 0.0f ? v : v + args.beta * *cij;
}

/// store_c where the split sum is finite; elsewhere the element is left for the non-finite
/// epilogue, which gives it SGEMM's value (a split sum of infinite terms can be NaN where SGEMM's
/// is an infinity: hi and lo of one entry may differ in sign).
__device__ __forceinline__ void store_or_leave(const GemmArgs& args, const tc::NonfiniteState& nonfinite,
                                               float unscale, index_t i, index_t j, float main, float corr) {
  if (i >= args.m || j >= args.n) return;
  if (isfinite(main + corr * kSplitShiftInverse))
    store_c(args, unscale, i, j, main, corr);
  else
    tc::leave_for_epilogue(nonfinite, i, j, args.m), tc::raise_flag(nonfinite);
}

/// Every product is launched for both Tensor Core paths, as instantiations for the packed element
/// type T (__half: FP16, float: TF32), since the plan that chooses between them is on the device;
/// the instantiation the plan does not choose exits at once.
template <class T>
__device__ __forceinline__ bool plan_chooses(const DevicePlan* plan) {
  return plan->use_fp16 == (sizeof(T) == 2 ? 1 : 0);
}

/// 2^-(sA + sB) on the FP16 path (T = __half), 1 on the TF32 path.
template <class T>
__device__ __forceinline__ float plan_unscale(const DevicePlan* plan) {
  return sizeof(T) == 2 ? exp2i(-plan->scale_a) * exp2i(-plan->scale_b) : 1.0f;
}

/// The wgmma kernel's operands: X, FP32, streamed and split in the kernel, and P, packed (or
/// the caller's FP16 matrix itself where its K is contiguous). C = X P^T (rows of X index C's
/// rows), or its transpose when transpose_c. The copy engine reads zeros past either's extents.
struct StreamGemmArgs {
  const float* x;          ///< rows x k: X(r, q) at x[q + r * x_ld] (k_major) or x[r + q * x_ld]
  index_t x_ld;            ///< a multiple of 4 (16-byte rows for the copy engine), x 16-byte aligned
  bool x_k_major;
  index_t rows, k;
  /// K in slices of x_slice_k (a multiple of the kernel's slices), x_slice_stride elements apart
  /// (a multiple of 4): q = q' + s x_slice_k is column q' of slice s. Unsliced: x_slice_k = k; sliced, below
  /// 2^31 (the kernel divides in 32 bits).
  index_t x_slice_k, x_slice_stride;
  const void* p_hi;        ///< p_rows_p x p_k at p_hi[q + r * p_ld], K-contiguous; 16-byte aligned rows
  const void* p_lo;        ///< unshifted lo parts, the same layout (null: P is FP16)
  index_t p_rows_p, p_k, p_ld;
  index_t kp;              ///< K rounded up to whole slices of the kernel
  bool transpose_c;
  bool lower_tiles;        ///< only the tiles of C (or of its transpose) on or below the diagonal
  bool p_upper;            ///< P upper triangular (P(j, q) = 0 for q > j): C's columns j need K up to j
  GemmArgs c_args;         ///< C, alpha, beta, its extents m x n, the plan (of P only)
  void* scratch;           ///< wgmma_gemm_scratch_bytes of device memory (null where those are 0)
  tc::NonfiniteState nonfinite;  ///< where the kernel leaves the elements that end Inf or NaN
};

/// Device memory the wgmma kernel needs for a product: the partial sums of the tiles it splits
/// along K (0 when it splits none).
std::size_t wgmma_gemm_scratch_bytes(const StreamGemmArgs& args);

/// The wgmma kernel for one Tensor Core path, FP16 (fp16 true: P packed as __half) or TF32 (see
/// plan_chooses).
void launch_wgmma_gemm(const StreamGemmArgs& args, bool fp16, cudaStream_t s);

}  // namespace cuda
}  // namespace randnla
