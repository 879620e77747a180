// Y = S A with S drawn on the fly (randnla/sparse_sign.hpp), two CUDA kernels here and the
// Tensor Core tiles for dense-ish S beside them (tensor_core_tiles.cu):
//  - RowWarp: the write-up's v3 rebuilt on this operator. A warp per row j of S, a lane per
//    column of A; the lanes draw 32 consecutive jumps of a segment at once (any draw of S is one
//    Philox call away), a warp scan turns them into positions, and the warp adds the 32 rows of A
//    in order: each Y(j, c) is summed in the order of i, as on the host, so Y equals the
//    portable backend's bit for bit.
//  - RowLanes: a lane per row j of S, holding its row of Y (32 columns at a time) in registers,
//    a warp per 32 rows and a range of segments. The lanes walk the same segment at a time, each
//    reading the rows of A its non-zeros need whole, so the rows in flight lie close together;
//    the ranges are as many as fill the GPU once, so every warp is resident and A passes through
//    L2 about once. Each range's sums are added in order afterwards.
#include "sparse_projection_ops.cuh"

#include <algorithm>
#include <string>

#include "cuda/for_each.cuh"
#include "tensor_core_tiles.cuh"

namespace randnla {
namespace cuda {
namespace {

constexpr int kWarpsPerBlock = 8;
/// From this density on the Tensor Core tiles beat the row lanes (bench_sparse_projection at
/// D = 10^6 on the H100: 11.6 against 33.0 ms at p = 1/16, 8.5 against 8.5 ms at 1/64, 8.3
/// against 4.4 ms at 1/128). Both times grow with k D, so the crossing does not move with the shape.
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
  jump = 1 + (d.gap < static_cast<float>(s.segment()) ? static_cast<std::int64_t>(d.gap) : s.segment());
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
      const std::int64_t end = (g + 1) * s.segment() < s.cols ? (g + 1) * s.segment() : s.cols;
      std::int64_t i = g * s.segment() - 1;
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

/// Y's row j, columns c0 .. c0 + width - 1 (width <= 32), over the segments [g0, g1): the lane's
/// sums in acc. The draws are the operator's own (exact logs): at these densities gaps are long,
/// and lg2.approx's margin would send a large share of them to the exact draw anyway.
__device__ __forceinline__ void walk_row(const SparseSignOperator& s, MatrixView<const float> a, bool columns,
                                         std::int64_t j, std::int64_t g0, std::int64_t g1, index_t c0, index_t width,
                                         float (&acc)[32]) {
  const bool whole = !columns && width == 32 && a.ld() % 4 == 0 && c0 % 4 == 0 &&
                     reinterpret_cast<std::uintptr_t>(a.data()) % 16 == 0;
  for (std::int64_t g = g0; g < g1; ++g)
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
}

// Two blocks an SM, 127 registers: held to 80 for three blocks (ptxas's own choice without the
// bound), it ran 2.55 and 11.5 ms at D = 10^7 and 10^8 against 2.14 and 8.19 ms
// (bench_sparse_projection, H100).
__global__ void __launch_bounds__(32 * kWarpsPerBlock, 2)
    row_lanes_kernel(SparseSignOperator s, MatrixView<const float> a, bool columns, std::int64_t per_range,
                     float* partial) {
  const std::int64_t warp = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const std::int64_t groups = (s.rows + 31) / 32, group = warp % groups, range = warp / groups;
  const std::int64_t j = group * 32 + threadIdx.x % 32, segments = s.segments();
  const std::int64_t g0 = range * per_range, g1 = g0 + per_range < segments ? g0 + per_range : segments;
  if (g0 >= segments || j >= s.rows) return;
  const index_t b = columns ? a.cols() : a.rows();
  float* out = partial + range * s.rows * b;
  for (index_t c0 = 0; c0 < b; c0 += 32) {
    float acc[32];
#pragma unroll
    for (int c = 0; c < 32; ++c) acc[c] = 0.0f;
    walk_row(s, a, columns, j, g0, g1, c0, b - c0 < 32 ? b - c0 : 32, acc);
#pragma unroll
    for (int c = 0; c < 32; ++c)
      if (c0 + c < b) out[j + (c0 + c) * s.rows] = acc[c] * s.value;
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
    const bool columns = layout == SampleLayout::Columns;
    if (kernel == SparseKernel::TensorCoreTiles || (kernel == SparseKernel::Auto && s.density >= kTensorCoreDensity)) {
      project_on_tensor_cores(device_, s, a, columns, y, stream_);
      return "tensor-core-tiles: tiles of S in shared memory, A split as hi + lo FP16 on the Tensor Cores";
    }
    if (kernel == SparseKernel::RowWarp) {
      const unsigned blocks = static_cast<unsigned>((s.rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
      row_warp_kernel<<<blocks, 32 * kWarpsPerBlock, 0, stream_>>>(s, a, columns, y);
      RANDNLA_CUDA_LAUNCH("sparse projection (row warp)");
      return "row-warp: a warp per row of S, lanes over A's columns (the write-up's v3)";
    }
    project_by_row_lanes(s, a, columns, y);
    return "row-lanes: a lane per row of S, a warp per 32 rows and a range of segments";
  }

 private:
  /// As many ranges of segments as fill the GPU with row_lanes_kernel's blocks once.
  void project_by_row_lanes(const SparseSignOperator& s, MatrixView<const float> a, bool columns, MatrixView<float> y) {
    int per_sm = 0;
    RANDNLA_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, row_lanes_kernel, 32 * kWarpsPerBlock, 0));
    const std::int64_t groups = (s.rows + 31) / 32, blocks_per_range = (groups + kWarpsPerBlock - 1) / kWarpsPerBlock;
    std::int64_t ranges = std::max<std::int64_t>(1, per_sm * multiprocessors(device_) / blocks_per_range);
    ranges = std::min(ranges, s.segments());
    const std::int64_t per_range = (s.segments() + ranges - 1) / ranges;
    ranges = (s.segments() + per_range - 1) / per_range;
    const index_t k = s.rows, b = y.cols();
    float* partial = nullptr;
    RANDNLA_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&partial), sizeof(float) * ranges * k * b, stream_));
    const std::int64_t blocks = (ranges * groups + kWarpsPerBlock - 1) / kWarpsPerBlock;
    row_lanes_kernel<<<static_cast<unsigned>(blocks), 32 * kWarpsPerBlock, 0, stream_>>>(
        s, a, columns, per_range, partial);
    RANDNLA_CUDA_LAUNCH("sparse projection (row lanes)");
    add_partial_sums(partial, ranges, k, y, stream_);
    RANDNLA_CUDA(cudaFreeAsync(partial, stream_));
  }

  int device_;
  cudaStream_t stream_;
};

}  // namespace

std::shared_ptr<SparseProjectionOps> make_sparse_projection_ops(int device, cudaStream_t stream) {
  return std::make_shared<SparseProjectionKernels>(device, stream);
}

}  // namespace cuda
}  // namespace randnla
