// Y = S A with S drawn on the fly (randnla/sparse_sign.hpp), two CUDA kernels:
//  - RowWarp: the write-up's v3 rebuilt on this operator. A warp per row j of S, a lane per
//    column of A; the lanes draw 32 consecutive jumps of a segment at once (any draw of S is one
//    Philox call away), a warp scan turns them into positions, and the warp adds the 32 rows of A
//    in order: each Y(j, c) is summed in the order of i, as on the host, so Y equals the
//    portable backend's bit for bit.
//  - SegmentLanes: 4 rows of S per warp, its lanes over 8 segment groups and 4 quarters of 32
//    columns of A; each lane reads its quarter of each row of A it needs (32 bytes) and the warp
//    adds its segment groups' sums at the end. All warps walk the segments in step, so the rows
//    of A in flight span about 8 segments (4 MB at b = 32) and stay in L2.
#include "sparse_projection_ops.cuh"

#include <string>

#include "cuda/for_each.cuh"

namespace randnla {
namespace cuda {
namespace {

constexpr int kWarpsPerBlock = 8;
constexpr unsigned kAll = 0xffffffffu;

__device__ __forceinline__ float element(const MatrixView<const float>& a, bool columns, index_t i, index_t c) {
  return columns ? a.data()[i + c * a.ld()] : a.data()[c + i * a.ld()];
}

/// The t-th draw of segment g of row j, as SparseSignOperator::walk makes it: the jump to the next
/// non-zero (1 + G, capped past the segment's end) and the sign.
__device__ __forceinline__ void draw(const SparseSignOperator& s, std::int64_t j, std::int64_t g, std::uint64_t t,
                                     std::int64_t& jump, bool& negative) {
  const std::uint64_t base = (static_cast<std::uint64_t>(j) << 40) + (static_cast<std::uint64_t>(g) << s.kSegmentBits);
  const PhiloxCounter r = detail::philox_block(s.seed, 0, base + (t >> 1));
  const unsigned w = static_cast<unsigned>(t & 1u) * 2u;
  const float gap = exact::div(detail::log_deterministic(detail::uniform_open01(r.v[w])), s.log1m_density);
  jump = 1 + (gap < static_cast<float>(s.kSegment) ? static_cast<std::int64_t>(gap) : s.kSegment);
  negative = (r.v[w + 1] >> 31) != 0u;
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

// SegmentLanes' mapping: a warp holds kRowsPerWarp rows of S; lane = 8 segment groups x 4
// column quarters, so that each lane keeps kRowsPerWarp x 8 sums in registers and the resident
// warps of the whole GPU cover every row of S at once (132 SMs x 32 warps x 4 rows >= k = 16384):
// A then streams through L2 about once instead of once per wave of rows.
constexpr int kRowsPerWarp = 4, kSegmentGroups = 8, kQuarter = 8;

__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    segment_lanes_kernel(SparseSignOperator s, MatrixView<const float> a, bool columns, MatrixView<float> y) {
  const int lane = threadIdx.x % 32, quarter = lane % 4, group = lane / 4;
  const std::int64_t j0 = (static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32) * kRowsPerWarp;
  if (j0 >= s.rows) return;
  const std::int64_t segments = s.segments();
  for (index_t c0 = 0; c0 < y.cols(); c0 += 32) {
    const index_t first = c0 + quarter * kQuarter;
    const index_t width = y.cols() - first < kQuarter ? (y.cols() - first > 0 ? y.cols() - first : 0) : kQuarter;
    const bool whole = !columns && width == kQuarter && a.ld() % 4 == 0 && first % 4 == 0 &&
                       reinterpret_cast<std::uintptr_t>(a.data()) % 16 == 0;
    float acc[kRowsPerWarp][kQuarter];
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r)
#pragma unroll
      for (int c = 0; c < kQuarter; ++c) acc[r][c] = 0.0f;
    for (std::int64_t g = group; g < segments; g += kSegmentGroups) {
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        if (j0 + r >= s.rows) continue;
        s.walk(j0 + r, g, [&](std::int64_t i, bool negative) {
          const float sign = negative ? -1.0f : 1.0f;
          if (whole) {  // this quarter of the row: two 16-byte loads
            const float4* row = reinterpret_cast<const float4*>(a.data() + first + i * a.ld());
            const float4 u = __ldg(row), v = __ldg(row + 1);
            acc[r][0] += sign * u.x, acc[r][1] += sign * u.y, acc[r][2] += sign * u.z, acc[r][3] += sign * u.w;
            acc[r][4] += sign * v.x, acc[r][5] += sign * v.y, acc[r][6] += sign * v.z, acc[r][7] += sign * v.w;
          } else {
#pragma unroll
            for (int c = 0; c < kQuarter; ++c)
              if (c < width) acc[r][c] += sign * element(a, columns, i, first + c);
          }
        });
      }
    }
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r)
#pragma unroll
      for (int c = 0; c < kQuarter; ++c) {
        float v = acc[r][c];
        for (int d = 4; d < 32; d *= 2) v += __shfl_xor_sync(kAll, v, d);  // over the segment groups
        if (group == 0 && c < width && j0 + r < s.rows) y.data()[j0 + r + (first + c) * y.ld()] = v * s.value;
      }
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
    if (kernel == SparseKernel::RowWarp) {
      row_warp_kernel<<<blocks, 32 * kWarpsPerBlock, 0, stream_>>>(s, a, columns, y);
      RANDNLA_CUDA_LAUNCH("sparse projection (row warp)");
      return "row-warp: a warp per row of S, lanes over A's columns (the write-up's v3)";
    }
    const unsigned lane_blocks =
        static_cast<unsigned>((s.rows + kWarpsPerBlock * kRowsPerWarp - 1) / (kWarpsPerBlock * kRowsPerWarp));
    segment_lanes_kernel<<<lane_blocks, 32 * kWarpsPerBlock, 0, stream_>>>(s, a, columns, y);
    RANDNLA_CUDA_LAUNCH("sparse projection (segment lanes)");
    return "segment-lanes: 4 rows of S per warp, lanes over 8 segment groups x 4 column quarters";
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
