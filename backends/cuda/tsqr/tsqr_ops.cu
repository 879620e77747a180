// The TSQR operations on a CUDA device (algorithms/tsqr/tsqr_ops.hpp): every block of a level
// factored by one kernel, one warp per block where the block fits in registers (warp_blocks.cuh),
// one thread block per block in shared memory otherwise (shared_blocks.cuh).
#include "tsqr_ops.cuh"

#include <algorithm>

#include "cuda/for_each.cuh"
#include "shared_blocks.cuh"
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

}  // namespace

std::shared_ptr<TsqrOps> make_tsqr_ops(int device, cudaStream_t stream) {
  return std::make_shared<TsqrKernels>(device, stream);
}

}  // namespace cuda
}  // namespace randnla
