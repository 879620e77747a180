// Y = S A with S drawn on the fly (sparse_projection/sparse_sign_operator.hpp), two CUDA kernels here and the
// Tensor Core tiles for dense-ish S beside them (tensor_core_tiles.cu):
//  - RowWarp: the write-up's v3 rebuilt on this operator. A warp per row j of S, a lane per
//    column of A; the lanes draw 32 consecutive jumps of a segment at once (any draw of S is one
//    Philox call away), a warp scan turns them into positions, and the warp adds the 32 rows of A
//    in order: each Y(j, c) is summed in the order of i, as on the host, so Y equals the
//    portable backend's bit for bit.
//  - WarpGathers: a warp per 32 rows of S and a range of segments. Each lane walks one row of S
//    and draws its next non-zero while the warp loads the 32 lanes' last ones together, four
//    rows of A per load where A's alignment allows (8 lanes of 4 columns a row: 128-byte lines,
//    where a lane reading a row alone touches a line per 16 bytes and keeps L1 busy), each lane
//    holding Y's 8 rows at its 4 columns in registers. The ranges are as many as fill the GPU
//    once, so every warp is resident; the warps of a range keep within a segment of each other,
//    and the lanes of a warp too (in one segment where a segment holds more than 4 MB of A), so
//    the rows of A in flight lie close together and A passes through L2 about once. Each range's
//    sums are added in order afterwards.
#include "sparse_projection_ops.cuh"

#include <algorithm>
#include <string>

#include "cuda/elementwise/for_each.cuh"
#include "fast_gaps.cuh"
#include "tensor_core_tiles.cuh"

namespace randnla {
namespace cuda {
namespace {

constexpr int kWarpsPerBlock = 8;
/// From this density on the Tensor Core tiles beat the warp gathers (bench_sparse_projection at
/// D = 10^6 on the H100: 10.7 against 22.5 ms at p = 1/16, 8.6 against 6.4 ms at 1/64, 8.3
/// against 3.6 ms at 1/128). Both times grow with k D, so the crossing does not move with the shape.
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

/// Columns of S a range of segments spans at most (plus a segment), so that a lane's position
/// counted from the range's first fits 32 bits.
constexpr std::int64_t kMaxRangeColumns = std::int64_t{1} << 30;

/// A lane's walk along row j of S through the segments [first, last), segments and columns
/// counted from the range's first in 32 bits.
class LaneWalk {
 public:
  enum Step { kNonZero, kBlocked, kDone };
  __device__ LaneWalk(const SparseSignOperator& s, const FastGaps& gaps, std::int64_t j, std::int64_t first,
                      std::int64_t last)
      : s_(s), gaps_(gaps), j_(j), first_(first), segments_(static_cast<std::int32_t>(last - first)),
        columns_(static_cast<std::int32_t>((s.cols < (last << s.segment_bits) ? s.cols : last << s.segment_bits) -
                                           (first << s.segment_bits))) {
    start_segment();
  }
  /// The next non-zero's column and its sign; kBlocked on ending a segment or rather than enter
  /// one past `limit`, kDone past the last.
  __device__ Step next(std::uint32_t& column, bool& negative, std::int32_t limit) {
    if (g_ >= segments_) return kDone;
    if (g_ > limit) return kBlocked;
    if ((t_ & 3u) == 0) {
      const PhiloxCounter w = s_.block(j_, first_ + g_, t_ >> 2);
      w0_ = w.v[0], w1_ = w.v[1], w2_ = w.v[2], w3_ = w.v[3];
    }
    const std::int32_t gap = gaps_.floor_of(w0_);
    negative = (w0_ & 1u) != 0u;
    w0_ = w1_, w1_ = w2_, w2_ = w3_;
    ++t_;
    if (gap < end_ - i_ - 1) {
      i_ += 1 + gap;
      column = static_cast<std::uint32_t>(i_);
      return kNonZero;
    }
    ++g_;  // the lane sits this round out rather than draw twice: its warp would wait for it
    start_segment();
    return g_ < segments_ ? kBlocked : kDone;
  }
  /// The segment the walk is in; `segments` once done (an empty walk too: a lane without a row
  /// must not hold its warp back).
  __device__ std::int32_t segment(std::int32_t segments) const { return g_ < segments_ ? g_ : segments; }

 private:
  __device__ void start_segment() {
    const std::int32_t begin = g_ << s_.segment_bits;
    i_ = begin - 1;
    end_ = columns_ - begin > static_cast<std::int32_t>(s_.segment()) ? begin + static_cast<std::int32_t>(s_.segment())
                                                                      : columns_;
    t_ = 0;
  }
  const SparseSignOperator& s_;
  const FastGaps& gaps_;
  std::int64_t j_, first_;
  std::int32_t segments_, columns_, g_ = 0, i_ = 0, end_ = 0;
  std::uint32_t t_ = 0, w0_ = 0, w1_ = 0, w2_ = 0, w3_ = 0;
};

/// How far (segments) a warp's slowest lane may walk ahead of its range's average one; a lane's
/// lead on its warp's slowest lane is lane_lead() segments. Unbounded, the walks drifted apart and
/// A came from DRAM 3.4 times at D = 10^7 (Nsight Compute; 1.1 times with both bounds at 1).
/// bench_sparse_projection, H100, at D = 10^7 and 10^8, before lanes sat out a round at a
/// segment's end: 2.0 and 7.4 ms with neither bound, 1.7-1.9 and 6.7-7.0 with either alone,
/// 1.74-1.79 and 5.4-5.7 with both; a warp lead of 2 made no difference.
constexpr int kWarpLead = 1;
/// The lanes' lead trades their waits at segment ends against the rows of A their warps have in
/// flight: bench_sparse_projection --dimension D on the H100 (b = 32, segments of 4, 8, 8 and 16 MB
/// of A) gave 0.98 / 1.68 / 2.97 / 5.29-5.37 ms with a lead of one segment and 1.12-1.16 / 1.57-1.60
/// / 3.02-3.05 / 4.82 ms with none at D = 10^7, 2 10^7, 5 10^7 and 10^8 (each lead fixed for every D
/// by building with kLeadBytes at 0 or past any segment's size).
constexpr std::int64_t kLeadBytes = std::int64_t{4} << 20;
/// A warp waits at most this many 200 ns naps for its range, then stops keeping pace: the range's
/// slowest warp never waits, so with every warp resident the others soon go on; the bound only
/// matters where another stream's kernels keep some warps from starting.
constexpr int kMaxNaps = 2000;

/// The warp's side of keeping a range's warps together: it adds its slowest lane's progress to
/// the range's sum and waits while that lane is more than kWarpLead segments past the average.
/// Off (sum null) where the grid does not fit the GPU at once: warps not yet started would hold
/// the average back.
class RangePace {
 public:
  __device__ RangePace(unsigned long long* sum, std::int32_t warps) : sum_(sum), warps_(warps) {}
  __device__ void keep(std::int32_t slowest, int lane) {
    if (!sum_) return;
    if (slowest > published_ && lane == 0) atomicAdd(sum_, static_cast<unsigned long long>(slowest - published_));
    published_ = slowest;
    for (int naps = 0; slowest > allowed_; ++naps) {
      if (naps == kMaxNaps) {
        sum_ = nullptr;
        return;
      }
      if (naps > 0) __nanosleep(200);
      const unsigned long long sum = lane == 0 ? *static_cast<volatile unsigned long long*>(sum_) : 0ull;
      allowed_ = static_cast<std::int32_t>(__shfl_sync(kAll, sum, 0) / static_cast<unsigned>(warps_)) + kWarpLead;
    }
  }

 private:
  unsigned long long* sum_;
  std::int32_t warps_, published_ = 0, allowed_ = kWarpLead;
};

/// p, hidden from the compiler's algebra: first + offset then costs one wide multiply-add a load,
/// where the compiler would add the offset to first's index in 64 bits and scale it (four).
__device__ __forceinline__ const float* opaque(const float* p) {
  asm("mov.b64 %0, %0;" : "+l"(p));
  return p;
}

/// V floats of A read by one lane in one load: float or float4.
template <int V> struct Floats;
template <> struct Floats<1> { using type = float; };
template <> struct Floats<4> { using type = float4; };
template <int V> __device__ __forceinline__ float part(const typename Floats<V>::type& v, int w) {
  return reinterpret_cast<const float*>(&v)[w];
}

/// Offset: the type the lanes share their non-zeros' offsets into A in, 32 bits where the
/// range's elements allow (a 64-bit product per load took 40% longer at p = 1/3).
/// V: columns of A a lane reads in one load, 4 or 1. The 32 columns of a pass are read by 32 / V
/// lanes per row, so a load brings V rows of A (its non-zeros' rows u = V i + lane / (32 / V)) and
/// each lane sums Y's 32 / V rows times V columns: V = 4 issues a quarter of the loads and of the
/// offsets' and signs' shuffles of V = 1, for the same lines of A and the same sums in the same order.
template <class Offset, int V>
__global__ void __launch_bounds__(32 * kWarpsPerBlock, 2)
    warp_gathers_kernel(SparseSignOperator s, FastGaps gaps, MatrixView<const float> a, std::int64_t per_range,
                        std::int32_t lane_lead, float* partial, unsigned long long* progress) {
  constexpr int kLanesPerRow = 32 / V, kLoads = 32 / V;
  using Load = typename Floats<V>::type;
  const std::int64_t warp = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const std::int64_t groups = (s.rows + 31) / 32, group = warp % groups, range = warp / groups;
  const int lane = threadIdx.x % 32, slot = lane / kLanesPerRow;
  const std::int64_t j = group * 32 + lane, segments = s.segments();
  const std::int64_t g0 = range * per_range, g1 = g0 + per_range < segments ? g0 + per_range : segments;
  if (g0 >= segments) return;
  const index_t b = a.rows(), ld = a.ld();
  float* out = partial + range * s.rows * b;
  for (index_t c0 = 0; c0 < b; c0 += 32) {
    const index_t mine = c0 + V * (lane % kLanesPerRow), c = mine < b ? mine : (b - 1) / V * V;
    const float* first = opaque(a.data() + c + (g0 << s.segment_bits) * ld);  // A(c, the range's first column)
    float acc[kLoads][V];
#pragma unroll
    for (int i = 0; i < kLoads; ++i)
#pragma unroll
      for (int w = 0; w < V; ++w) acc[i][w] = 0.0f;
    LaneWalk walk(s, gaps, j, g0, j < s.rows ? g1 : g0);
    RangePace pace(progress ? progress + range : nullptr, static_cast<std::int32_t>(groups));
    Offset offset;
    float sign;
    // The lane's next non-zero as an offset from `first` and a sign; a blocked or finished lane's
    // reads the range's first column of A, times 0. False once every lane is done.
    const auto advance = [&] {
      const auto slowest = static_cast<std::int32_t>(
          __reduce_min_sync(kAll, static_cast<unsigned>(walk.segment(static_cast<std::int32_t>(g1 - g0)))));
      pace.keep(slowest, lane);
      std::uint32_t column;
      bool negative;
      const LaneWalk::Step next = walk.next(column, negative, slowest + lane_lead);
      const bool load = next == LaneWalk::kNonZero;
      offset = load ? static_cast<Offset>(column) * static_cast<Offset>(ld) : Offset{0};
      sign = load ? (negative ? -1.0f : 1.0f) : 0.0f;
      return __any_sync(kAll, next != LaneWalk::kDone);
    };
    for (bool more = advance(); more;) {
      Load v[kLoads];
#pragma unroll
      for (int i = 0; i < kLoads; ++i)
        v[i] = __ldg(reinterpret_cast<const Load*>(first + __shfl_sync(kAll, offset, V * i + slot)));
      const float signs = sign;
      more = advance();  // while the loads arrive
#pragma unroll
      for (int i = 0; i < kLoads; ++i) {
        const float si = __shfl_sync(kAll, signs, V * i + slot);
#pragma unroll
        for (int w = 0; w < V; ++w) acc[i][w] += si * part<V>(v[i], w);
      }
    }
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const std::int64_t row = group * 32 + V * i + slot;
#pragma unroll
      for (int w = 0; w < V; ++w)
        if (mine + w < b && row < s.rows) out[row + (mine + w) * s.rows] = acc[i][w] * s.value;
    }
  }
}

/// warp_gathers_kernel reading 4 floats a load (quads) or 1.
template <class Offset>
auto gathers_kernel(bool quads) {
  return quads ? warp_gathers_kernel<Offset, 4> : warp_gathers_kernel<Offset, 1>;
}

constexpr int kTransposeRows = 256;
/// rows (b x D, ld rows_ld) := A^T, A D x b, through shared memory kTransposeRows rows of A by 32 columns
/// a block: 1 KB read from each column, rows written a line at a time (0.87 ms at D = 10^7, b = 32,
/// on the H100; 1.04 with 32 x 32 tiles).
__global__ void __launch_bounds__(256) transpose_kernel(MatrixView<const float> a, float* rows, index_t rows_ld) {
  __shared__ float tile[32][kTransposeRows + 1];
  const index_t c0 = static_cast<index_t>(blockIdx.y) * 32, b = a.cols(), i0 = static_cast<index_t>(blockIdx.x) * kTransposeRows;
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const index_t c = c0 + ty + 8 * r;
#pragma unroll
    for (int q = 0; q < kTransposeRows / 32; ++q) {
      const index_t i = i0 + 32 * q + tx;
      tile[ty + 8 * r][32 * q + tx] = i < a.rows() && c < b ? a.data()[i + c * a.ld()] : 0.0f;
    }
  }
  __syncthreads();
  const index_t c = c0 + tx;
#pragma unroll 8
  for (int r = ty; r < kTransposeRows; r += 8) {
    const index_t i = i0 + r;
    if (i < a.rows() && c < b) rows[c + i * rows_ld] = tile[tx][r];
  }
}

class SparseProjectionKernels final : public SparseProjectionOps {
 public:
  SparseProjectionKernels(int device, std::shared_ptr<StreamMemory> memory)
      : SparseProjectionOps(MemorySpace::Device), device_(device), memory_(std::move(memory)) {}

 protected:
  std::string do_project(const SparseSignOperator& s, MatrixView<const float> a, SampleLayout layout,
                         SparseKernel kernel, MatrixView<float> y) override {
    const DeviceScope scope(device_);
    const bool columns = layout == SampleLayout::Columns;
    if (kernel == SparseKernel::TensorCoreTiles || (kernel == SparseKernel::Auto && s.density >= kTensorCoreDensity)) {
      project_on_tensor_cores(device_, s, a, columns, y, memory_);
      return "tensor-core-tiles: tiles of S in shared memory, A split as hi + lo FP16 on the Tensor Cores";
    }
    if (kernel == SparseKernel::RowWarp) {
      const unsigned blocks = static_cast<unsigned>((s.rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
      row_warp_kernel<<<blocks, 32 * kWarpsPerBlock, 0, stream()>>>(s, a, columns, y);
      RANDNLA_CUDA_LAUNCH("sparse projection (row warp)");
      return "row-warp: a warp per row of S, lanes over A's columns (the write-up's v3)";
    }
    project_by_warp_gathers(s, a, columns, y);
    return "warp-gathers: a lane per row of S draws, the warp loads each non-zero's row of A whole";
  }

 private:
  cudaStream_t stream() const { return memory_->get(); }

  /// As many ranges of segments as fill the GPU with warp_gathers_kernel's blocks once, each
  /// spanning at most kMaxRangeColumns of S. A in the columns layout is first copied into the
  /// rows layout (a workspace of A's size): its rows are then 128-byte lines, not 32 columns apart
  /// (bench_sparse_projection, H100, D = 10^7: 1.95 ms with the copy against 45.9 without).
  void project_by_warp_gathers(const SparseSignOperator& s, MatrixView<const float> a, bool columns,
                               MatrixView<float> y) {
    int per_sm = 0;
    RANDNLA_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, warp_gathers_kernel<std::uint32_t, 4>,
                                                               32 * kWarpsPerBlock, 0));
    const index_t k = s.rows, b = y.cols();
    const std::int64_t groups = (k + 31) / 32, blocks_per_range = (groups + kWarpsPerBlock - 1) / kWarpsPerBlock;
    std::int64_t ranges = std::max<std::int64_t>(1, per_sm * multiprocessors(device_) / blocks_per_range);
    ranges = std::max(ranges, (s.cols + kMaxRangeColumns - 1) / kMaxRangeColumns + 1);
    ranges = std::min(ranges, s.segments());
    const std::int64_t per_range = (s.segments() + ranges - 1) / ranges;
    ranges = (s.segments() + per_range - 1) / per_range;
    const index_t rows_ld = (b + 3) / 4 * 4;  // whole float4 loads
    const std::size_t progress_bytes = sizeof(unsigned long long) * ranges, partial_bytes = sizeof(float) * ranges * k * b;
    const std::size_t rows_bytes = columns ? sizeof(float) * s.cols * rows_ld : 0;
    const std::shared_ptr<void> held = StreamMemory::allocate(memory_, rows_bytes + progress_bytes + partial_bytes);
    auto* workspace = static_cast<unsigned char*>(held.get());  // rows first: aligned for float4 loads
    auto* progress = reinterpret_cast<unsigned long long*>(workspace + rows_bytes);
    auto* partial = reinterpret_cast<float*>(workspace + rows_bytes + progress_bytes);
    RANDNLA_CUDA(cudaMemsetAsync(progress, 0, progress_bytes, stream()));
    if (columns) {
      auto* rows = reinterpret_cast<float*>(workspace);
      to_rows_layout(a, rows, rows_ld);
      a = MatrixView<const float>(rows, b, s.cols, rows_ld, MemorySpace::Device, "A in the rows layout");
    }
    const std::int64_t blocks = (ranges * groups + kWarpsPerBlock - 1) / kWarpsPerBlock;
    const bool resident = blocks <= per_sm * multiprocessors(device_);
    const bool narrow = (per_range << s.segment_bits) * a.ld() < (std::int64_t{1} << 32);
    const bool quads = reads_quads(a);
    const auto kernel = narrow ? gathers_kernel<std::uint32_t>(quads) : gathers_kernel<std::uint64_t>(quads);
    kernel<<<static_cast<unsigned>(blocks), 32 * kWarpsPerBlock, 0, stream()>>>(
        s, FastGaps::of(s), a, per_range, lane_lead(s, a), partial, resident ? progress : nullptr);
    RANDNLA_CUDA_LAUNCH("sparse projection (warp gathers)");
    add_partial_sums(partial, ranges, k, y, stream());
  }

  /// How far (segments) a lane may walk ahead of its warp's slowest lane: one segment where a
  /// segment's rows of A take at most kLeadBytes, else none (a lane then waits at its segment's end
  /// for the warp's slowest).
  static std::int32_t lane_lead(const SparseSignOperator& s, MatrixView<const float> a) {
    return s.segment() * a.ld() * static_cast<std::int64_t>(sizeof(float)) <= kLeadBytes ? 1 : 0;
  }

  /// Whether a lane can read 4 floats at once from A in the rows layout: lda a multiple of 4 and
  /// the address of 16 bytes (a load past column b then stays inside lda).
  static bool reads_quads(MatrixView<const float> a) {
    return a.ld() % 4 == 0 && reinterpret_cast<std::uintptr_t>(a.data()) % (4 * sizeof(float)) == 0;
  }

  /// rows (b x D, ld rows_ld) := A^T for A D x b in the columns layout.
  void to_rows_layout(MatrixView<const float> a, float* rows, index_t rows_ld) {
    const dim3 blocks(static_cast<unsigned>((a.rows() + kTransposeRows - 1) / kTransposeRows),
                      static_cast<unsigned>((a.cols() + 31) / 32));
    transpose_kernel<<<blocks, 256, 0, stream()>>>(a, rows, rows_ld);
    RANDNLA_CUDA_LAUNCH("sparse projection (A to the rows layout)");
  }

  int device_;
  std::shared_ptr<StreamMemory> memory_;
};

}  // namespace

std::shared_ptr<SparseProjectionOps> make_sparse_projection_ops(int device, std::shared_ptr<StreamMemory> memory) {
  return std::make_shared<SparseProjectionKernels>(device, std::move(memory));
}

}  // namespace cuda
}  // namespace randnla
