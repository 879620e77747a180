// Y = S A with S drawn on the fly (randnla/sparse_sign.hpp), two CUDA kernels here and the
// Tensor Core tiles for dense-ish S beside them (tensor_core_tiles.cu):
//  - RowWarp: the write-up's v3 rebuilt on this operator. A warp per row j of S, a lane per
//    column of A; the lanes draw 32 consecutive jumps of a segment at once (any draw of S is one
//    Philox call away), a warp scan turns them into positions, and the warp adds the 32 rows of A
//    in order: each Y(j, c) is summed in the order of i, as on the host, so Y equals the
//    portable backend's bit for bit.
//  - SegmentLanes: a warp per row j, a lane per segment of it; each lane reads each row of A it
//    needs whole (b <= 32 columns at a time) and the warp adds its lanes' sums at the end. All
//    warps walk the segments in step, so the rows of A in flight span about 32 segments (16 MB
//    at b = 32): they stay in L2, and A is read from DRAM about once per wave of resident warps.
#include "sparse_projection_ops.cuh"

#include <string>

#include "cuda/for_each.cuh"
#include "tensor_core_tiles.cuh"

namespace randnla {
namespace cuda {
namespace {

constexpr int kWarpsPerBlock = 8;
/// From this density on the Tensor Core tiles beat the segment lanes (bench_sparse_projection at
/// D = 10^6 on the H100: 13.1 against 33.3 ms at p = 1/16, 10.2 against 8.5 ms at 1/64). Both
/// times grow with k D, so the crossing does not move with the shape.
constexpr double kTensorCoreDensity = 1.0 / 32;
constexpr unsigned kAll = 0xffffffffu;

__device__ __forceinline__ float element(const MatrixView<const float>& a, bool columns, index_t i, index_t c) {
  return columns ? a.data()[i + c * a.ld()] : a.data()[c + i * a.ld()];
}

/// The t-th draw of segment g of row j (SparseSignOperator::draw) as the jump to the next non-zero:
/// 1 + the gap, capped past the segment's end; and the sign.
__device__ __forceinline__ void draw(const SparseSignOperator& s, std::int64_t j, std::int64_t g, std::uint64_t t,
                                     std::int64_t& jump, bool& negative) {
  const SparseSignOperator::Draw d = s.draw(j, g, t);
  jump = 1 + (d.gap < static_cast<float>(s.kSegment) ? static_cast<std::int64_t>(d.gap) : s.kSegment);
  negative = d.negative;
}

__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    row_warp_kernel(SparseSignOperator s, MatrixView<const float> a, bool columns, MatrixView<float> y) {
  const int lane = threadIdx.x % 32;
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (j >= s.rows) return;
  const std::int64_t segments = s.segments();
  for (index_t c0 = 0; c0 < y.cols(); c0 += 32) {
    const index_t c = c0 + lane;
    const bool mine = c < y.cols();
    float sum = 0.0f;
    for (std::int64_t g = 0; g < segments; ++g) {
      const std::int64_t end = (g + 1) * s.kSegment < s.cols ? (g + 1) * s.kSegment : s.cols;
      std::int64_t i = g * s.kSegment - 1;
      for (std::uint64_t t0 = 0;; t0 += 32) {
        std::int64_t jump;
        bool negative;
        draw(s, j, g, t0 + lane, jump, negative);
        for (int d = 1; d < 32; d *= 2) {  // inclusive scan of the jumps
          const std::int64_t before = __shfl_up_sync(kAll, jump, d);
          if (lane >= d) jump += before;
        }
        const std::int64_t position = i + jump;
        const unsigned inside = __ballot_sync(kAll, position < end);
        for (int u = 0; u < 32 && ((inside >> u) & 1u); ++u) {
          const std::int64_t row = __shfl_sync(kAll, position, u);
          const bool neg = __shfl_sync(kAll, negative, u);
          if (mine) {
            const float v = element(a, columns, row, c);
            sum += neg ? -v : v;
          }
        }
        if (inside != kAll) break;
        i = __shfl_sync(kAll, position, 31);
      }
    }
    if (mine) y.data()[j + c * y.ld()] = sum * s.value;
  }
}

__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    segment_lanes_kernel(SparseSignOperator s, MatrixView<const float> a, bool columns, MatrixView<float> y) {
  const int lane = threadIdx.x % 32;
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (j >= s.rows) return;
  const std::int64_t segments = s.segments();
  for (index_t c0 = 0; c0 < y.cols(); c0 += 32) {
    const index_t width = y.cols() - c0 < 32 ? y.cols() - c0 : 32;
    const bool whole = !columns && width == 32 && a.ld() % 4 == 0 && c0 % 4 == 0 &&
                       reinterpret_cast<std::uintptr_t>(a.data()) % 16 == 0;
    float acc[32];
#pragma unroll
    for (int c = 0; c < 32; ++c) acc[c] = 0.0f;
    for (std::int64_t g = lane; g < segments; g += 32)
      s.walk(j, g, [&](std::int64_t i, bool negative) {
        const float sign = negative ? -1.0f : 1.0f;
        if (whole) {  // the row's 32 values as eight 16-byte loads
          const float4* row = reinterpret_cast<const float4*>(a.data() + c0 + i * a.ld());
#pragma unroll
          for (int q = 0; q < 8; ++q) {
            const float4 v = __ldg(row + q);
            acc[4 * q] += sign * v.x, acc[4 * q + 1] += sign * v.y, acc[4 * q + 2] += sign * v.z,
                acc[4 * q + 3] += sign * v.w;
          }
        } else {
#pragma unroll
          for (int c = 0; c < 32; ++c)
            if (c < width) acc[c] += sign * element(a, columns, i, c0 + c);
        }
      });
    float out = 0.0f;
#pragma unroll
    for (int c = 0; c < 32; ++c) {
      float v = acc[c];
      for (int d = 16; d > 0; d /= 2) v += __shfl_xor_sync(kAll, v, d);
      if (c == lane) out = v;
    }
    if (lane < width) y.data()[j + (c0 + lane) * y.ld()] = out * s.value;
  }
}

class SparseProjectionKernels final : public SparseProjectionOps {
 public:
  SparseProjectionKernels(int device, cudaStream_t stream)
      : SparseProjectionOps(MemorySpace::Device), device_(device), stream_(stream) {}

 protected:
  std::string do_project(const SparseSignOperator& s, MatrixView<const float> a, SampleLayout layout,
                         SparseKernel kernel, MatrixView<float> y) override {
    const DeviceScope scope(device_);
    const unsigned blocks = static_cast<unsigned>((s.rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
    const bool columns = layout == SampleLayout::Columns;
    if (kernel == SparseKernel::TensorCoreTiles || (kernel == SparseKernel::Auto && s.density >= kTensorCoreDensity)) {
      project_on_tensor_cores(device_, s, a, columns, y, stream_);
      return "tensor-core-tiles: tiles of S in shared memory, A split as hi + lo FP16 on the Tensor Cores";
    }
    if (kernel == SparseKernel::RowWarp) {
      row_warp_kernel<<<blocks, 32 * kWarpsPerBlock, 0, stream_>>>(s, a, columns, y);
      RANDNLA_CUDA_LAUNCH("sparse projection (row warp)");
      return "row-warp: a warp per row of S, lanes over A's columns (the write-up's v3)";
    }
    segment_lanes_kernel<<<blocks, 32 * kWarpsPerBlock, 0, stream_>>>(s, a, columns, y);
    RANDNLA_CUDA_LAUNCH("sparse projection (segment lanes)");
    return "segment-lanes: a warp per row of S, a lane per segment";
  }

 private:
  int device_;
  cudaStream_t stream_;
};

}  // namespace

std::shared_ptr<SparseProjectionOps> make_sparse_projection_ops(int device, cudaStream_t stream) {
  return std::make_shared<SparseProjectionKernels>(device, stream);
}

}  // namespace cuda
}  // namespace randnla
