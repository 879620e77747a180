// The TSQR operations on a CUDA device (algorithms/tsqr/tsqr_ops.hpp): every block of a level
// factored by one kernel, one warp per block where the block fits in registers (warp_blocks.cuh),
// one thread block per block in shared memory otherwise (shared_blocks.cuh); the Tensor Core
// variants' blocks (algorithms/tsqr/tensor_core_tsqr_ops.hpp) one warp per block on the Tensor
// Cores (tensor_core_blocks.cuh).
#include "tsqr_ops.cuh"

#include <algorithm>
#include <memory>
#include <string>

#include "cuda/elementwise/for_each.cuh"
#include "shared_blocks.cuh"
#include "tensor_core_blocks.cuh"
#include "warp_blocks.cuh"

namespace randnla {
namespace cuda {
namespace {

class TsqrKernels final : public TsqrOps {
 public:
  TsqrKernels(int device, cudaStream_t stream) : TsqrOps(MemorySpace::Device), device_(device), stream_(stream) {}

  index_t max_columns() const override { return shared_blocks::kMaxColumns; }
  index_t max_block_rows(index_t n) const override { return shared_blocks::max_rows(n); }
  index_t preferred_block_rows(index_t n) const override {
    if (warp_blocks::max_rows(n) >= 2 * n) return warp_blocks::max_rows(n);
    // The shared-memory blocks are latency-bound: fewer, taller blocks (fewer levels) win.
    return std::min(8 * n, max_block_rows(n));
  }

 protected:
  void do_factor_blocks(MatrixView<const float> a, index_t blocks, MatrixView<float> q, MatrixView<float> r) override {
    const DeviceScope scope(device_);
    if (in_warps(a.rows(), a.cols(), blocks)) return warp_blocks::factor(a, blocks, q, r, stream_);
    shared_blocks::factor(a, blocks, q, r, stream_);
  }
  void do_multiply_blocks(MatrixView<float> q, index_t blocks, MatrixView<const float> s) override {
    const DeviceScope scope(device_);
    if (in_warps(q.rows(), q.cols(), blocks) && warp_blocks::multiplies(q.cols()))
      return warp_blocks::multiply(q, blocks, s, stream_);
    shared_blocks::multiply(q, blocks, s, stream_);
  }

 private:
  /// Blocks of up to 32 columns and few rows go one per warp, in registers.
  static bool in_warps(index_t m, index_t n, index_t blocks) { return (m + blocks - 1) / blocks <= warp_blocks::max_rows(n); }

  int device_;
  cudaStream_t stream_;
};

/// The Tensor Core variants' blocks in one arithmetic: up to 16 columns (wider A in panels).
class TensorCoreBlocks final : public TsqrOps {
 public:
  TensorCoreBlocks(int device, cudaStream_t stream, TsqrArithmetic arithmetic)
      : TsqrOps(MemorySpace::Device), device_(device), stream_(stream), arithmetic_(arithmetic) {}

  index_t max_columns() const override { return tensor_core_blocks::kCols; }
  index_t max_block_rows(index_t n) const override { return tensor_core_blocks::max_rows(n); }
  index_t preferred_block_rows(index_t n) const override { return tensor_core_blocks::max_rows(n); }

 protected:
  void do_factor_blocks(MatrixView<const float> a, index_t blocks, MatrixView<float> q, MatrixView<float> r) override {
    const DeviceScope scope(device_);
    tensor_core_blocks::factor(a, blocks, q, r, arithmetic_, stream_);
  }
  void do_multiply_blocks(MatrixView<float> q, index_t blocks, MatrixView<const float> s) override {
    const DeviceScope scope(device_);
    tensor_core_blocks::multiply(q, blocks, s, arithmetic_, stream_);
  }

 private:
  int device_;
  cudaStream_t stream_;
  TsqrArithmetic arithmetic_;
};

class TensorCoreTsqrKernels final : public TensorCoreTsqrOps {
 public:
  TensorCoreTsqrKernels(int device, cudaStream_t stream) : device_(device), stream_(stream) {}
  bool runs(TsqrArithmetic arithmetic) const override { return arithmetic != TsqrArithmetic::FP32; }
  std::unique_ptr<TsqrOps> blocks_in(TsqrArithmetic arithmetic) override {
    return std::make_unique<TensorCoreBlocks>(device_, stream_, arithmetic);
  }
  std::string description(TsqrArithmetic arithmetic) const override {
    return std::string("explicit Householder reflectors, one warp per block of 32 x 16 on the Tensor Cores (") +
           to_string(arithmetic) + ")";
  }

 private:
  int device_;
  cudaStream_t stream_;
};

}  // namespace

std::shared_ptr<TsqrOps> make_tsqr_ops(int device, cudaStream_t stream) {
  return std::make_shared<TsqrKernels>(device, stream);
}

std::shared_ptr<TensorCoreTsqrOps> make_tensor_core_tsqr_ops(int device, cudaStream_t stream) {
  return std::make_shared<TensorCoreTsqrKernels>(device, stream);
}

}  // namespace cuda
}  // namespace randnla
