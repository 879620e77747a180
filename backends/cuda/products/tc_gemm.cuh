// Launcher of the Tensor Core products (tc_gemm.cu): SHGEMM, its mirror and TCEC-SGEMM share
// one kernel, instantiated for FP16 (m16n8k16) and TF32 (m16n8k8) and for which operands carry
// a lo part.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <utility>

#include "cuda/context/pinned_slots.cuh"
#include "randnla/backend.hpp"

namespace randnla {
namespace cuda {

/// One operand of a Tensor Core product: FP32 (split into hi + lo) or FP16 (used as is).
struct TcOperand {
  const void* data = nullptr;
  index_t rows = 0, cols = 0, ld = 1;  ///< the stored matrix, before op
  Op op = Op::N;
  bool fp16 = false;                   ///< FP16 data; otherwise FP32, which is split
  /// op(X)'s K runs over `slices` matrices of this shape, slice_stride elements apart (A of a
  /// product C = sum_i op(A_i) B_i; the streamed FP32 A only, on the wgmma kernel: see
  /// tc_gemm_takes_slices). The total K is op's K times slices.
  index_t slices = 1, slice_stride = 0;
};

/// Scratch device memory the products reuse between calls (grown on demand), from the backend's
/// stream-ordered pool.
class TcWorkspace {
 public:
  using Allocate = std::function<std::shared_ptr<void>(std::size_t bytes)>;
  TcWorkspace(int device, Allocate allocate) : device_(device), allocate_(std::move(allocate)) {}
  void* get(std::size_t bytes);
  /// 2 x 256 counters, zero before each product's histograms (zeroed on stream s when first
  /// allocated; the plan kernel leaves them zero).
  unsigned long long* histograms(cudaStream_t s);
  void* plan(cudaStream_t s);  ///< the device-side plan (format and scale exponents)
  /// A page-locked slot the plan kernel also writes the plan to, read after the slot's event
  /// (a product's report).
  std::shared_ptr<PinnedSlots::Slot> plan_copy();
  /// `bytes` of device memory that are zero whenever no product is in flight (zeroed on stream s
  /// when first allocated; whoever uses them leaves them zero): the non-finite epilogue's state.
  void* zeroed(std::size_t bytes, cudaStream_t s);

 private:
  int device_;
  Allocate allocate_;
  std::shared_ptr<void> buffer_, small_, zeroed_;
  std::shared_ptr<PinnedSlots> plan_copies_;
  std::size_t bytes_ = 0, zeroed_bytes_ = 0;
};

/// What a product may rely on to skip Tensor Core work; the wgmma kernel does where it does not
/// compute C transposed (tc_gemm_streamed), the others compute the whole product.
struct TcStructure {
  /// The caller reads C's lower triangle alone (a Gram matrix): C's tiles with no element on or
  /// below the diagonal may be skipped, and C above the diagonal is unspecified on return.
  bool c_lower = false;
  /// op(B) is upper triangular, zero below its diagonal (an inverse Cholesky factor): C's column
  /// j sums K up to the end of its tile, past j only over those zeros (so, as in trmm, an Inf or
  /// NaN of op(A) past the tile does not reach column j).
  bool b_upper = false;
};

/// Whether tc_gemm takes an A in slices (TcOperand::slices > 1) on the current device: on the
/// wgmma kernel, A FP32, K per slice a multiple of 64, A and the slice stride 16-byte aligned.
bool tc_gemm_takes_slices(const TcOperand& a);

/// Whether the wgmma kernel streams an FP32 operand at `data` with leading dimension `ld` where it
/// lies: its copy engine reads 16-byte-aligned columns, and tc_gemm first copies any other operand
/// it streams into such a layout.
bool tc_gemm_streams_in_place(const void* data, index_t ld);

/// C := alpha * op(A) op(B) + beta * C on Tensor Cores with FP32 accumulation of the hi*hi
/// product outside the Tensor Core, the lo terms scaled by 2^-11. The FP16/TF32 choice is made
/// on the device from exponent histograms (no host synchronisation) unless `tc` forces TF32.
/// Fills `report` when non-null (that waits for the plan, unless the report settles later).
/// `structure` lets the product skip Tensor Core work (see TcStructure).
void tc_gemm(const TcOperand& a, const TcOperand& b, float alpha, float beta, MatrixView<float> c, TensorCore tc,
             ProductReport* report, TcWorkspace& ws, cudaStream_t stream, TcStructure structure = {});

}  // namespace cuda
}  // namespace randnla
