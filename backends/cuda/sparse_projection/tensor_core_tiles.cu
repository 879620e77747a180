// Y = S A on the Tensor Cores for dense-ish S (Achlioptas's p = 1/3 and the like), S never stored.
//
// A is first split once, each column scaled by a power of two into FP16's range, into hi + lo
// FP16 parts (lo unshifted) in a workspace laid out for the blocks' copies: per group of 32
// columns, D rows of 32 halves. A block owns 128 rows of S (and Y), a group of 32 columns and a
// range of S's segments, split in two halves. Each step, each of its 256 threads walks one row of
// S through 128 columns of one half (SparseSignOperator's segment walk, one thread per row: no
// draw is wasted at a chunk's end) and writes the row's +-1 into a 128 x 256 FP16 tile in shared
// memory, while the matching 256 x 32 slices of A's parts arrive by cp.async; then eight warps
// multiply the tile by both parts on the Tensor Cores (mma.sync m16n8k16, +-1 and 0 are exact in
// FP16). Each step's sums start from zero and are added to the running sums on the CUDA cores,
// rounding to nearest: the Tensor Cores' truncating sums never run over more than 512 terms.
// Blocks that share a range of segments run side by side, so A's parts come from L2 after the
// first read.
//
// The draws: lg2.approx (the hardware's, as __log2f; CUDA documents an absolute error of at most
// 2^-22 on [1/2, 2] and 2 ulp elsewhere) times c = ln 2 / log(1 - p) gives each gap's floor unless the
// product lies within 2^-16 of it (relative) plus 2^-19 |c| of an integer. The exact draw of
// SparseSignOperator::draw_from and this product differ by less than a relative 2^-19 (about 4
// ulp of the exact log, 2 ulp of __log2f, 2 roundings each) plus 2^-22 |c|, so elsewhere both
// floors agree, and there the exact draw decides: S is the host's bit for bit at a fraction of
// the exact log's cost.
#include "tensor_core_tiles.cuh"

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cuda/cuda_check.hpp"
#include "cuda/for_each.cuh"
#include "cuda/tc/mma_sm80.cuh"
#include "randnla/precision.hpp"

namespace randnla {
namespace cuda {
namespace {

constexpr int kTileRows = 128;                // rows of S and Y per block
constexpr int kTileCols = 32;                 // columns of A and Y per block
constexpr int kChunk = 128;                   // columns of S a walker draws per step
constexpr int kStepK = 2 * kChunk;            // K per step: the two halves' chunks side by side
constexpr int kLd = kStepK + 8;               // a row of S's tile in halves, padded: ldmatrix is conflict-free
constexpr int kLdSlice = kTileCols + 8;       // a K position of A's slices in halves, padded likewise
constexpr int kThreadsTiles = 2 * kTileRows;  // a walker per row and half
constexpr int kChunksPerSegment = static_cast<int>(SparseSignOperator::kSegment / kChunk);
constexpr int kBeyond = 1 << 20;              // a gap past any segment's end
constexpr int kNone = static_cast<int>(SparseSignOperator::kSegment);  // no non-zero left in the segment

struct Shared {
  __half s[kTileRows * kLd];                                   // S's tile, row-major
  __half a_hi[kStepK * kLdSlice], a_lo[kStepK * kLdSlice];     // A's parts, a row per K position
};

struct TileArgs {
  SparseSignOperator s;
  PhiloxSchedule keys;             // s.seed's round keys
  index_t b;
  const __half* hi;                // A's parts: group z's row i at (z D + i) 32
  const __half* lo;
  float* out;                      // Y, or the partial sums of each range of segments
  index_t ld_out;
  std::size_t split_stride;        // elements between two ranges' partial sums (0: out is Y)
  const std::uint32_t* column_max; // the largest finite |A(:, c)| of each column, as bits
  std::int64_t segments_per_split;
  float log2_to_gap;               // ln 2 / log(1 - p)
  float gap_slack;                 // 2^-19 |ln 2 / log(1 - p)|: lg2.approx's absolute error on [1/2, 1) is 2^-22
};

/// The power of two that brings a column's largest |x| (as bits; subnormals too) to [2^14, 2^15).
__device__ __forceinline__ int fp16_shift(std::uint32_t max_bits) {
  if (max_bits == 0) return 0;
  const int e = max_bits >= 0x800000u ? static_cast<int>(max_bits >> 23) - 127 : -149 + (31 - __clz(max_bits));
  return 14 - e;  // in [-113, 163]: applied as two factors, each within FP32's range
}

/// The exact draw's floor (SparseSignOperator::gap_of), capped at kBeyond: called for about one
/// draw in 10^4 at p = 1/3, so kept out of line (inlined, its division would be issued,
/// predicated off, for every draw).
__device__ __noinline__ int exact_gap_floor(std::uint32_t word, float log1m_density) {
  const float exact = SparseSignOperator::gap_of(word, log1m_density);
  return exact < static_cast<float>(kBeyond) ? static_cast<int>(exact) : kBeyond;
}

/// The fast product of the draw a Philox word gives: lg2.approx (what __log2f runs, without its
/// subnormal path: u >= 2^-24) times ln 2 / log(1 - p).
__device__ __forceinline__ float fast_gap(const TileArgs& p, std::uint32_t word) {
  float lg;
  asm("lg2.approx.ftz.f32 %0, %1;\n" : "=f"(lg) : "f"(detail::uniform_open01(word)));
  return lg * p.log2_to_gap;
}

/// The floors of four draws' gaps, capped at kBeyond: the fast product's, and the exact draw's
/// for the rare product too near an integer to tell (one branch for the four).
__device__ __forceinline__ void gap_floors(const TileArgs& p, const PhiloxCounter& words, int (&gaps)[4]) {
  unsigned unsure = 0;
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    const float fast = fminf(fast_gap(p, words.v[w]), static_cast<float>(kBeyond));
    const float whole = floorf(fast), margin = fmaf(fast, 0x1p-16f, p.gap_slack);
    gaps[w] = static_cast<int>(whole);
    // Within margin of an integer: |rest - 1/2| > 1/2 - margin.
    if (fast < static_cast<float>(kBeyond) && fabsf(fast - whole - 0.5f) > 0.5f - margin) unsure |= 1u << w;
  }
  if (unsure != 0)
#pragma unroll
    for (int w = 0; w < 4; ++w)
      if ((unsure >> w) & 1u) gaps[w] = exact_gap_floor(words.v[w], p.s.log1m_density);
}

__device__ __forceinline__ void store_shared(std::uint32_t address, unsigned short value) {
  asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(address), "h"(value) : "memory");
}

/// One row of S walked through the segments [first, last), a chunk of 128 columns per step.
/// Each refill draws a Philox block's four non-zeros at once (independent work that hides each
/// other's latency) and turns them into positions; the lanes of a warp that need a refill draw
/// it together (a lane runs out at its own pace: each drawing alone, the warp would draw with a
/// quarter of its lanes at a time), and the writes are four predicated stores.
class Walker {
 public:
  __device__ Walker(const TileArgs& p, std::int64_t j, std::int64_t first, std::int64_t last)
      : p_(p), j_(j), first_(first), last_(last) {}

  /// Zeroes the warp's rows of this half of the tile (tile rows 32 (warp % 4) .. + 32, columns
  /// 128 half .. + 128) and writes this row's non-zeros (+-1) of the chunk there. Called by all
  /// lanes of the warp together.
  __device__ void draw_chunk(__half* tile, int row, int half, std::int64_t segment_step, int chunk) {
    const int lane = threadIdx.x % 32;
    __half* warp_rows = tile + (row - lane) * kLd + half * kChunk;
#pragma unroll
    for (int q = 0; q < 16; ++q) {  // 32 rows x 16 vectors, two whole rows per store: no bank conflicts
      const int v = q * 32 + lane;
      reinterpret_cast<uint4*>(warp_rows + (v / 16) * kLd)[v % 16] = make_uint4(0, 0, 0, 0);
    }
    __syncwarp();
    const std::int64_t g = first_ + segment_step;
    const bool active = j_ < p_.s.rows && g < last_;
    if (active && chunk == 0) start(g);
    const int begin = chunk * kChunk, end = begin + kChunk;
    const std::uint32_t base =
        static_cast<std::uint32_t>(__cvta_generic_to_shared(warp_rows + lane * kLd)) - 2u * static_cast<std::uint32_t>(begin);
    if (active) write<true>(base, begin, end);
    bool hungry = active && position_[kDraws - 1] < end;
    while (__any_sync(0xffffffffu, hungry)) {
      if (hungry) {
        refill();
        write<false>(base, begin, end);
        hungry = position_[kDraws - 1] < end;
      }
    }
  }

 private:
  __device__ void start(std::int64_t g) {
    block_base_ = SparseSignOperator::block_index(j_, g, 0);
    block_ = 0;
#pragma unroll
    for (int w = 0; w < kDraws; ++w) position_[w] = -1;
  }
  /// The drawn non-zeros that lie in [begin, end) (base: the address of the chunk's column 0 less
  /// begin). Those of a fresh refill lie past the last one written, so not before begin.
  template <bool PENDING>
  __device__ void write(std::uint32_t base, int begin, int end) const {
#pragma unroll
    for (int w = 0; w < kDraws; ++w)
      if ((!PENDING || position_[w] >= begin) && position_[w] < end)
        store_shared(base + 2u * static_cast<std::uint32_t>(position_[w]), value_[w]);
  }
  /// The next four non-zeros, i + 1 + gap on from the last one i, as in SparseSignOperator::walk.
  /// The walk runs to the segment's full width even where D ends sooner: the rows of A's slices
  /// past D are zero, so those columns of the tile add nothing.
  __device__ void refill() {
    const PhiloxCounter words = SparseSignOperator::block_at(block_base_ + block_++, p_.keys);
    int gaps[kDraws];
    gap_floors(p_, words, gaps);
    int i = position_[kDraws - 1];
#pragma unroll
    for (int w = 0; w < kDraws; ++w) {
      i = min(i + 1 + gaps[w], kNone);
      position_[w] = i;
      value_[w] = static_cast<unsigned short>(0x3c00u | (words.v[w] & 1u) << 15);  // +-1 in FP16
    }
  }

  const TileArgs& p_;
  std::int64_t j_, first_, last_;
  static constexpr int kDraws = 4;  // a Philox block's
  int position_[kDraws] = {kNone, kNone, kNone, kNone};
  unsigned short value_[kDraws] = {};
  std::uint64_t block_base_ = 0;
  std::uint32_t block_ = 0;
};

/// Queues the copies of the step's slices of A's parts (K positions 0-127: the first half's
/// chunk, 128-255: the second's; zeros past D and past a half's last segment): eight 16-byte
/// copies per thread, two rows of each half and part.
__device__ __forceinline__ void copy_slices(const TileArgs& p, Shared& sh, const std::int64_t (&first)[2],
                                            const std::int64_t (&last)[2], std::int64_t segment_step, int chunk) {
  const int r0 = threadIdx.x / 4, piece = threadIdx.x % 4;  // thread's row (and row + 64) and 16-byte piece
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const std::int64_t g = first[h] + segment_step;
    const index_t i0 = g * SparseSignOperator::kSegment + chunk * kChunk;  // the half's first row
    const index_t offset = (static_cast<index_t>(blockIdx.z) * p.s.cols + i0 + r0) * kTileCols + piece * 8;
#pragma unroll
    for (int u = 0; u < 4; ++u) {  // part u / 2, row r0 + 64 (u % 2)
      const int r = r0 + 64 * (u % 2);
      const bool inside = g < last[h] && i0 + r < p.s.cols;
      const __half* src = (u / 2 ? p.lo : p.hi) + (inside ? offset + 64 * kTileCols * (u % 2) : 0);
      const __half* dst = (u / 2 ? sh.a_lo : sh.a_hi) + (h * kChunk + r) * kLdSlice + piece * 8;
      const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(inside ? 16 : 0));
    }
  }
  asm volatile("cp.async.commit_group;\n" ::);
}

/// Two n8 B fragments (columns n0 .. n0 + 15, K positions ks .. ks + 15) of a slice.
__device__ __forceinline__ void load_b(const __half* slice, int ks, int n0, int lane, std::uint32_t (&r)[4]) {
  tc::ldmatrix_x4_trans(r, slice + (ks + lane % 8 + ((lane / 8) % 2) * 8) * kLdSlice + n0 + (lane / 16) * 8);
}

/// sums += the tile times A's slices: warp w takes rows 32 (w % 4) .. + 32 and columns 16 (w / 4)
/// .. + 16 of the block's, summing each step in fresh Tensor Core accumulators.
__device__ __forceinline__ void multiply(const Shared& sh, float (&sums)[2][2][4]) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wm = (warp % 4) * 32, wn = (warp / 4) * 16;
  float step[2][2][4] = {};
#pragma unroll 4
  for (int ks = 0; ks < kStepK; ks += 16) {
    std::uint32_t s_frag[2][4], hi[4], lo[4];
#pragma unroll
    for (int mt = 0; mt < 2; ++mt) tc::ldmatrix_x4(s_frag[mt], sh.s + (wm + mt * 16 + lane % 16) * kLd + ks + (lane / 16) * 8);
    load_b(sh.a_hi, ks, wn, lane, hi);
    load_b(sh.a_lo, ks, wn, lane, lo);
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int nt = 0; nt < 2; ++nt) {
        const std::uint32_t bh[2] = {hi[2 * nt], hi[2 * nt + 1]}, bl[2] = {lo[2 * nt], lo[2 * nt + 1]};
        tc::mma(step[mt][nt], s_frag[mt], bh, __half());
        tc::mma(step[mt][nt], s_frag[mt], bl, __half());
      }
  }
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < 2; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) sums[mt][nt][e] += step[mt][nt][e];
}

__global__ void __launch_bounds__(kThreadsTiles, 2) tensor_core_tiles_kernel(TileArgs p) {
  extern __shared__ __align__(16) unsigned char smem[];
  Shared& sh = *reinterpret_cast<Shared*>(smem);
  __shared__ float down[2][kTileCols];
  const std::int64_t m0 = static_cast<std::int64_t>(blockIdx.x) * kTileRows;
  const index_t c0 = static_cast<index_t>(blockIdx.z) * kTileCols;
  const std::int64_t g0 = static_cast<std::int64_t>(blockIdx.y) * p.segments_per_split;
  const std::int64_t g2 = g0 + p.segments_per_split < p.s.segments() ? g0 + p.segments_per_split : p.s.segments();
  const std::int64_t g1 = g0 + (g2 - g0 + 1) / 2;
  const std::int64_t first[2] = {g0, g1}, last[2] = {g1, g2};
  if (threadIdx.x < kTileCols) {
    const int c = threadIdx.x;
    const int shift = c0 + c < p.b ? fp16_shift(p.column_max[c0 + c]) : 0;
    down[0][c] = exp2i(-(shift / 2)), down[1][c] = exp2i(shift / 2 - shift);
  }
  const int half = threadIdx.x / kTileRows, row = threadIdx.x % kTileRows;
  Walker walker(p, m0 + row, first[half], last[half]);
  float sums[2][2][4] = {};
  const std::int64_t steps = (g1 - g0) * kChunksPerSegment;
  for (std::int64_t step = 0; step < steps; ++step) {
    const std::int64_t segment_step = step / kChunksPerSegment;
    const int chunk = static_cast<int>(step % kChunksPerSegment);
    copy_slices(p, sh, first, last, segment_step, chunk);
    walker.draw_chunk(sh.s, row, half, segment_step, chunk);
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    __syncthreads();
    multiply(sh, sums);
    __syncthreads();
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wm = (warp % 4) * 32, wn = (warp / 4) * 16;
  float* out = p.out + blockIdx.y * p.split_stride;
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < 2; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int r = wm + mt * 16 + lane / 4 + 8 * (e / 2), c = wn + nt * 8 + 2 * (lane % 4) + e % 2;
        const std::int64_t j = m0 + r;
        if (j < p.s.rows && c0 + c < p.b)
          out[j + (c0 + c) * p.ld_out] = sums[mt][nt][e] * p.s.value * down[0][c] * down[1][c];
      }
}

/// out[c] = max(out[c], the largest finite |A(:, c)| as bits). A block runs down one column of a
/// D x b A; a warp's lanes take 32 adjacent columns of a b x D A: coalesced either way.
__global__ void column_max_kernel(MatrixView<const float> a, bool columns, std::uint32_t* out) {
  __shared__ std::uint32_t block_max[32];
  if (threadIdx.x < 32) block_max[threadIdx.x] = 0;
  __syncthreads();
  const index_t d = columns ? a.rows() : a.cols(), b = columns ? a.cols() : a.rows();
  const int slot = columns ? 0 : threadIdx.x % 32;
  const index_t c = columns ? blockIdx.y : static_cast<index_t>(blockIdx.y) * 32 + slot;
  const int lanes = columns ? 1 : 32;
  const index_t per_block = blockDim.x / lanes;
  std::uint32_t m = 0;
  if (c < b)
    for (index_t i = blockIdx.x * per_block + threadIdx.x / lanes; i < d; i += gridDim.x * per_block) {
      const std::uint32_t bits = __float_as_uint(columns ? a.data()[i + c * a.ld()] : a.data()[c + i * a.ld()]) & 0x7fffffffu;
      if (bits < 0x7f800000u && bits > m) m = bits;
    }
  atomicMax(&block_max[slot], m);
  __syncthreads();
  const index_t mine = columns ? c : static_cast<index_t>(blockIdx.y) * 32 + threadIdx.x;
  if (threadIdx.x < static_cast<unsigned>(lanes) && mine < b) atomicMax(&out[mine], block_max[threadIdx.x]);
}

/// Element (i, c) of A into its parts at the blocks' layout: split_halfhalf of x times the
/// column's 2^shift, lo unshifted (hi saturates: an Inf or NaN stays in lo, and so in Y). The
/// shift can pass FP32's exponent range for one factor, so half of it is applied first.
__device__ __forceinline__ void split_element(float x, index_t i, index_t c, index_t d, const std::uint32_t* column_max,
                                              index_t b, __half* hi, __half* lo) {
  const int shift = c < b ? fp16_shift(column_max[c]) : 0;
  fp16 h, l;
  split_halfhalf(x * exp2i(shift / 2), shift - shift / 2, h, l, 1.0f);
  const index_t o = ((c / kTileCols) * d + i) * kTileCols + c % kTileCols;
  hi[o] = __ushort_as_half(h.bits);
  lo[o] = __ushort_as_half(l.bits);
}

}  // namespace

void project_on_tensor_cores(int device, const SparseSignOperator& s, MatrixView<const float> a, bool columns,
                             MatrixView<float> y, cudaStream_t stream) {
  const index_t b = y.cols(), k = s.rows, d = s.cols;
  const int sms = multiprocessors(device);
  const std::int64_t row_tiles = (k + kTileRows - 1) / kTileRows, column_tiles = (b + kTileCols - 1) / kTileCols;
  const std::int64_t segments = s.segments();
  // Enough ranges of segments to fill the GPU (two blocks per SM) in one wave; each range's
  // partial sums are added in order afterwards, so Y does not depend on the timing.
  std::int64_t splits = std::max<std::int64_t>(1, 2 * sms / (row_tiles * column_tiles));
  splits = std::min(splits, std::max<std::int64_t>(1, segments / 2));
  const std::int64_t per_split = (segments + splits - 1) / splits;
  splits = (segments + per_split - 1) / per_split;

  const index_t b_padded = column_tiles * kTileCols;
  const std::size_t partials = splits > 1 ? static_cast<std::size_t>(splits * k * b) : 0;
  const auto aligned = [](std::size_t bytes) { return (bytes + 255) / 256 * 256; };
  const std::size_t max_bytes = aligned(b * sizeof(std::uint32_t)), partial_bytes = aligned(partials * sizeof(float));
  const std::size_t part_bytes = static_cast<std::size_t>(d * b_padded) * sizeof(__half);
  unsigned char* workspace = nullptr;
  RANDNLA_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&workspace), max_bytes + partial_bytes + 2 * part_bytes, stream));
  auto* column_max = reinterpret_cast<std::uint32_t*>(workspace);
  auto* partial = reinterpret_cast<float*>(workspace + max_bytes);
  auto* hi = reinterpret_cast<__half*>(workspace + max_bytes + partial_bytes);
  auto* lo = reinterpret_cast<__half*>(workspace + max_bytes + partial_bytes + part_bytes);

  RANDNLA_CUDA(cudaMemsetAsync(column_max, 0, b * sizeof(std::uint32_t), stream));
  const unsigned max_blocks = static_cast<unsigned>(std::min<index_t>(1024, (d + kThreads - 1) / kThreads));
  column_max_kernel<<<dim3(max_blocks, static_cast<unsigned>(columns ? b : (b + 31) / 32)), kThreads, 0, stream>>>(
      a, columns, column_max);
  RANDNLA_CUDA_LAUNCH("sparse projection (column maxima)");
  if (columns)
    for_each(d, b_padded, stream, "sparse projection (A's parts)", [=] __device__(index_t i, index_t c) {
      split_element(c < b ? a.data()[i + c * a.ld()] : 0.0f, i, c, d, column_max, b, hi, lo);
    });
  else
    for_each(b_padded, d, stream, "sparse projection (A's parts)", [=] __device__(index_t c, index_t i) {
      split_element(c < b ? a.data()[c + i * a.ld()] : 0.0f, i, c, d, column_max, b, hi, lo);
    });

  TileArgs p{s, philox_schedule(detail::philox_key(s.seed)), b, hi, lo, splits > 1 ? partial : y.data(),
             splits > 1 ? k : y.ld(), splits > 1 ? static_cast<std::size_t>(k * b) : 0, column_max, per_split,
             static_cast<float>(0.6931471805599453 / std::log1p(-s.density)),
             static_cast<float>(std::ldexp(0.6931471805599453 / -std::log1p(-s.density), -19))};
  RANDNLA_CUDA(cudaFuncSetAttribute(tensor_core_tiles_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(sizeof(Shared))));
  tensor_core_tiles_kernel<<<dim3(static_cast<unsigned>(row_tiles), static_cast<unsigned>(splits),
                                  static_cast<unsigned>(column_tiles)),
                             kThreadsTiles, sizeof(Shared), stream>>>(p);
  RANDNLA_CUDA_LAUNCH("sparse projection (Tensor Core tiles)");
  if (splits > 1)
    for_each(k, b, stream, "sparse projection (partial sums)", [=] __device__(index_t j, index_t c) {
      float sum = 0.0f;
      for (std::int64_t z = 0; z < splits; ++z) sum += partial[z * k * b + j + c * k];
      y.data()[j + c * y.ld()] = sum;
    });
  RANDNLA_CUDA(cudaFreeAsync(workspace, stream));
}

}  // namespace cuda
}  // namespace randnla
