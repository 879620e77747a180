// The main loop of the sparse projection's Tensor Core tiles (tensor_core_tiles.cu), shared by
// its two products: mma.sync (sm_80 on, TilesMmaSync beside the launcher) and wgmma (sm_90a,
// TilesWgmma in tensor_core_tiles_sm90.cu).
//
// A block owns 128 rows of S (and Y), a group of 32 columns of A and a range of S's segments,
// split in two halves. Each step, each of its 256 threads walks one row of S through 64 columns
// of one half (SparseSignOperator's segment walk, one thread per row: no draw is wasted at a
// chunk's end) and writes the row's +-1 into S's tile, while cp.async brings the matching 64 x 32
// slices of A's hi and lo FP16 parts; then the product multiplies the tile by both parts
// (+-1 and 0 are exact in FP16). Two stages of tile and slices: the walkers fill one while the
// product of the other may still run (wgmma is asynchronous), so one barrier a step suffices.
// Shared memory is laid out in 128-byte rows with the 128-byte swizzle (16-byte chunk c of row r
// at c ^ (r % 8)): what wgmma reads through its descriptors, and ldmatrix without bank conflicts.
// Each step's sums start from zero and are added to the running sums on the CUDA cores, rounding
// to nearest: the Tensor Cores' truncating sums never run over more than 256 terms. Blocks that
// share a range of segments run side by side, so A's parts come from L2 after the first read.
// The gaps come from fast_gaps.cuh: S is the host's bit for bit.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "randnla/matrix_view.hpp"
#include "randnla/philox.hpp"
#include "randnla/precision.hpp"
#include "randnla/sparse_projection/sparse_sign_operator.hpp"
#include "fast_gaps.cuh"

namespace randnla {
namespace cuda {
namespace tiles {

constexpr int kTileRows = 128;            // rows of S and Y per block
constexpr int kTileCols = 32;             // columns of A and Y per block
constexpr int kChunk = 64;                // columns of S a walker draws per step: one 128-byte row
constexpr int kThreads = 2 * kTileRows;   // a walker per row and half
constexpr int kRowBytes = 2 * kChunk;     // a swizzled row

/// A step's tile of S (per half, 128 rows of 64 columns) and slices of A (per part and half, 32
/// columns of A as rows of 64 K positions).
using Tile = __half[2][kTileRows * kChunk];
using Slices = __half[2][2][kTileCols * kChunk];
/// Two stages of each, each array 1024-byte aligned as the swizzle needs.
struct Shared {
  Tile s[2];
  Slices a[2];
};
constexpr int kSharedBytes = static_cast<int>(sizeof(Shared)) + 1024;  // and the alignment's slack

/// Byte offset of (row, column) in a swizzled array of 128-byte rows of halves.
__device__ __forceinline__ std::uint32_t swizzled(int row, int column) {
  return static_cast<std::uint32_t>(row * kRowBytes + ((column ^ ((row & 7) << 3)) << 1));
}

struct TileArgs {
  SparseSignOperator s;
  PhiloxSchedule keys;              // s.seed's round keys
  index_t b;
  const __half* hi;                 // A's parts: column c's row i at c parts_ld + i (zero past D)
  const __half* lo;
  index_t parts_ld;                 // D rounded up to kChunk
  float* out;                       // Y, or the partial sums of each range of segments
  index_t ld_out;
  std::size_t split_stride;         // elements between two ranges' partial sums (0: out is Y)
  const std::uint32_t* column_max;  // the largest finite |A(:, c)| of each column, as bits
  std::int64_t segments_per_split;
  FastGaps gaps;
};

/// The power of two that brings a column's largest |x| (as bits; subnormals too) to [2^14, 2^15).
__device__ __forceinline__ int fp16_shift(std::uint32_t max_bits) {
  if (max_bits == 0) return 0;
  const int e = max_bits >= 0x800000u ? static_cast<int>(max_bits >> 23) - 127 : -149 + (31 - __clz(max_bits));
  return 14 - e;  // in [-113, 163]: applied as two factors, each within FP32's range
}

__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
/// The low 16 bits of value at address.
__device__ __forceinline__ void store_shared_u16(std::uint32_t address, std::uint32_t value) {
  asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(address), "r"(value) : "memory");
}
__device__ __forceinline__ void zero_shared16(std::uint32_t address) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(address), "r"(0) : "memory");
}

/// One row of S walked through the segments [first, last), a chunk of 64 columns per step.
/// Each refill draws a Philox block's four non-zeros at once (independent work that hides each
/// other's latency) and turns them into positions; the lanes of a warp that need a refill draw
/// it together (a lane runs out at its own pace: each drawing alone, the warp would draw with a
/// quarter of its lanes at a time), and the writes are four predicated stores.
class Walker {
 public:
  __device__ Walker(const TileArgs& p, std::int64_t j, std::int64_t first, std::int64_t last)
      : p_(p), j_(j), first_(first), last_(last) {}

  /// Zeroes the warp's 32 rows of this half of the tile (`tile`: the half's shared address; `row`:
  /// this thread's) and writes this row's non-zeros (+-1) of the chunk there. Called by all lanes
  /// of the warp together.
  __device__ void draw_chunk(std::uint32_t tile, int row, std::int64_t segment_step, int chunk) {
    const int lane = threadIdx.x % 32;
    const std::uint32_t warp_rows = tile + static_cast<std::uint32_t>((row - lane) * kRowBytes);
#pragma unroll
    for (int q = 0; q < 8; ++q) zero_shared16(warp_rows + 16u * static_cast<std::uint32_t>(q * 32 + lane));
    __syncwarp();
    const std::int64_t g = first_ + segment_step;
    const bool active = j_ < p_.s.rows && g < last_;
    if (active && chunk == 0) start(g);
    const int begin = chunk * kChunk, end = begin + kChunk;
    const Row at{tile + static_cast<std::uint32_t>(row * kRowBytes - 2 * begin), (row & 7) << 3, begin};
    if (active) write<true>(at, end);
    else position_[kDraws - 1] = kBeyond;  // never hungry
    while (__any_sync(0xffffffffu, position_[kDraws - 1] < end)) {
      if (position_[kDraws - 1] < end) {
        refill();
        write<false>(at, end);
      }
    }
  }

 private:
  /// Where a position of the chunk goes: the row's swizzled address (swizzled()). begin is a
  /// multiple of 64 and the swizzle changes bits 3-5 only, so the position's own bits are swizzled
  /// (base: the row's address less 2 begin).
  struct Row {
    std::uint32_t base;
    int xor_bits, begin;
    __device__ std::uint32_t operator()(int position) const {
      return base + (static_cast<std::uint32_t>(position ^ xor_bits) << 1);
    }
  };
  __device__ void start(std::int64_t g) {
    block_base_ = p_.s.block_index(j_, g, 0);
    block_ = 0;
#pragma unroll
    for (int w = 0; w < kDraws; ++w) position_[w] = -1;
  }
  /// The drawn non-zeros that lie in [begin, end). Those of a fresh refill lie past the last one
  /// written, so not before begin.
  template <bool PENDING>
  __device__ void write(const Row& at, int end) const {
#pragma unroll
    for (int w = 0; w < kDraws; ++w)
      if (PENDING ? static_cast<unsigned>(position_[w] - at.begin) < static_cast<unsigned>(kChunk) : position_[w] < end)
        store_shared_u16(at(position_[w]), value_[w]);
  }
  /// The next four non-zeros, i + 1 + gap on from the last one i, as in SparseSignOperator::walk
  /// (a refill starts below 2^20 and adds at most 4 (kBeyond + 1): far from overflow). The walk
  /// runs to the segment's full width even where D ends sooner: A's parts are zero there, so those
  /// columns of the tile add nothing.
  __device__ void refill() {
    const PhiloxCounter words = SparseSignOperator::block_at(block_base_ + block_++, p_.keys);
    int gaps[kDraws];
    p_.gaps.floors(words, gaps);
    int i = position_[kDraws - 1];
#pragma unroll
    for (int w = 0; w < kDraws; ++w) {
      i += 1 + gaps[w];
      position_[w] = i;
      value_[w] = words.v[w] * 0x8000u + 0x3c00u;  // +-1 in FP16 below: bit 0 to the sign
    }
  }

  const TileArgs& p_;
  std::int64_t j_, first_, last_;
  static constexpr int kDraws = 4;  // a Philox block's
  int position_[kDraws] = {kBeyond, kBeyond, kBeyond, kBeyond};  // past any segment
  std::uint32_t value_[kDraws] = {};  // FP16 bits in the low half
  std::uint64_t block_base_ = 0;
  std::uint32_t block_ = 0;
};

/// Queues the copies of the step's slices of A's parts (K positions 0-63 of each half; zeros past
/// D and past a half's last segment) into a[part][half]: four 16-byte copies per thread.
__device__ __forceinline__ void copy_slices(const TileArgs& p, Slices& a,
                                            const std::int64_t (&first)[2], const std::int64_t (&last)[2],
                                            std::int64_t segment_step, int chunk) {
  const int column = threadIdx.x / 8, piece = threadIdx.x % 8;
  const index_t from = (static_cast<index_t>(blockIdx.z) * kTileCols + column) * p.parts_ld + piece * 8;
#pragma unroll
  for (int u = 0; u < 4; ++u) {
    const int part = u / 2, h = u % 2;
    const std::int64_t g = first[h] + segment_step;
    const index_t i0 = g * p.s.segment() + chunk * kChunk;
    const bool inside = g < last[h] && i0 < p.parts_ld;
    const __half* src = (part ? p.lo : p.hi) + (inside ? from + i0 : 0);
    const std::uint32_t dst = shared_address(a[part][h]) + swizzled(column, piece * 8);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(inside ? 16 : 0));
  }
  asm volatile("cp.async.commit_group;\n" ::);
}

/// Y (or a range's partial sums) over the block's rows and columns of S A. Warpgroup w's threads
/// walk rows 64 w .. + 64 of S, half of them each half. The product PRODUCT (TilesMmaSync,
/// TilesWgmma) has publish(), which makes this thread's writes to a stage visible to it,
/// start(s_tile, slices), which begins a step's product, finish(), which completes it and adds it
/// to the sums, and for_each_sum(f), f(row, column, sum) over its share of the block's tile. The
/// walkers draw the next step into the other stage between start and finish.
template <class PRODUCT>
__device__ void run_tiles(const TileArgs& p, unsigned char* smem_raw) {
  // 128-byte swizzled arrays must start on 1024-byte boundaries.
  unsigned char* smem = smem_raw + ((1024 - (shared_address(smem_raw) & 1023)) & 1023);
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
  const int row = (threadIdx.x / 128) * 64 + threadIdx.x % 64, half = (threadIdx.x / 64) % 2;
  Walker walker(p, m0 + row, first[half], last[half]);
  PRODUCT product;
  const int chunks = static_cast<int>(p.s.segment() / kChunk);  // a segment's
  const std::int64_t steps = (g1 - g0) * chunks;
  auto prepare = [&](std::int64_t step) {
    const std::int64_t segment_step = step / chunks;
    const int chunk = static_cast<int>(step % chunks);
    copy_slices(p, sh.a[step & 1], first, last, segment_step, chunk);
    walker.draw_chunk(shared_address(sh.s[step & 1][half]), row, segment_step, chunk);
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    product.publish();
  };
  if (steps > 0) prepare(0);
  __syncthreads();
  for (std::int64_t step = 0; step < steps; ++step) {
    product.start(sh.s[step & 1], sh.a[step & 1]);
    if (step + 1 < steps) prepare(step + 1);
    product.finish();
    __syncthreads();
  }
  float* out = p.out + blockIdx.y * p.split_stride;
  product.for_each_sum([&](int r, int c, float sum) {
    const std::int64_t j = m0 + r;
    if (j < p.s.rows && c0 + c < p.b) out[j + (c0 + c) * p.ld_out] = sum * p.s.value * down[0][c] * down[1][c];
  });
}

/// The wgmma flavour's launch (tensor_core_tiles_sm90.cu): `grid` blocks of kThreads threads,
/// queued on `stream`.
void launch_tiles_wgmma(const TileArgs& args, dim3 grid, cudaStream_t stream);

}  // namespace tiles
}  // namespace cuda
}  // namespace randnla
