// Y = S A on the Tensor Cores for dense-ish S (Achlioptas's p = 1/3 and the like), S never stored.
//
// A block owns 128 rows of S (and Y), 32 columns of A (and Y) and a range of S's segments, split
// in two halves. Each step, each of its 256 threads walks one row of S through 128 columns of one
// half (SparseSignOperator's segment walk, one thread per row: no draw is wasted at a chunk's
// end) and writes the row's +-1 into a 128 x 256 FP16 tile in shared memory, while the matching
// 256 x 32 slice of A is split as hi + lo FP16 (each column of A scaled by a power of two into
// FP16's range first, the lo part unshifted); then eight warps multiply the tile by both parts
// on the Tensor Cores (mma.sync m16n8k16, +-1 and 0 are exact in FP16). Each step's sums start
// from zero and are added to the running sums on the CUDA cores, rounding to nearest: the
// Tensor Cores' truncating sums never run over more than 512 terms. Blocks that share a range of
// segments run side by side, so A's slices come from L2 after the first read.
//
// The draws: log2f (within 1 ulp, CUDA's documented bound) times ln 2 / log(1 - p) gives each
// gap's floor unless the product lies within a relative 2^-16 of an integer; the exact draw of
// SparseSignOperator::draw_from and this product differ by less than a relative 2^-19 (1 ulp
// of log2f, about 4 ulp of the exact log, 2 roundings each), so elsewhere both floors agree, and
// there the exact draw decides: S is the host's bit for bit at a fraction of the exact log's cost.
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
constexpr int kLdRows = kTileCols + 8;        // a K position of A's slice from a b x D A, padded likewise
constexpr int kThreadsTiles = 2 * kTileRows;  // a walker per row and half
constexpr int kChunksPerSegment = static_cast<int>(SparseSignOperator::kSegment / kChunk);
constexpr int kBeyond = 1 << 20;              // a gap past any segment's end
constexpr int kNone = static_cast<int>(SparseSignOperator::kSegment);  // no non-zero left in the segment

/// A's slice is stored as A is read, so that its stores are conflict-free too: from a D x b A a
/// row per column of A (kLd), from a b x D A a row per K position (kLdRows).
constexpr int kSliceElems = kStepK * kLdRows > kTileCols * kLd ? kStepK * kLdRows : kTileCols * kLd;

struct Shared {
  __half s[kTileRows * kLd];                       // S's tile, row-major
  __half a_hi[kSliceElems], a_lo[kSliceElems];     // A's slice
};

template <bool COLUMNS>
__device__ __forceinline__ int slice_index(int q, int c) {
  return COLUMNS ? c * kLd + q : q * kLdRows + c;
}

/// Two n8 B fragments (columns n0 .. n0 + 15, K positions ks .. ks + 15) of A's slice.
template <bool COLUMNS>
__device__ __forceinline__ void load_b(const __half* slice, int ks, int n0, int lane, std::uint32_t (&r)[4]) {
  if (COLUMNS)
    tc::ldmatrix_x4(r, slice + slice_index<true>(ks + ((lane / 8) % 2) * 8, n0 + (lane / 16) * 8 + lane % 8));
  else
    tc::ldmatrix_x4_trans(r, slice + slice_index<false>(ks + lane % 8 + ((lane / 8) % 2) * 8, n0 + (lane / 16) * 8));
}

struct TileArgs {
  SparseSignOperator s;
  MatrixView<const float> a;
  index_t b;
  float* out;                      // Y, or the partial sums of each range of segments
  index_t ld_out;
  std::size_t split_stride;        // elements between two ranges' partial sums (0: out is Y)
  const std::uint32_t* column_max; // the largest finite |A(:, c)| of each column, as bits
  std::int64_t segments_per_split;
  float log2_to_gap;               // ln 2 / log(1 - p)
};

/// The power of two that brings a column's largest |x| (as bits; subnormals too) to [2^14, 2^15).
__device__ __forceinline__ int fp16_shift(std::uint32_t max_bits) {
  if (max_bits == 0) return 0;
  const int e = max_bits >= 0x800000u ? static_cast<int>(max_bits >> 23) - 127 : -149 + (31 - __clz(max_bits));
  return 14 - e;  // in [-113, 163]: applied as two factors, each within FP32's range
}

/// floor(gap) of the draw a Philox word gives (SparseSignOperator::draw_from), capped at kBeyond.
__device__ __forceinline__ int gap_floor(const TileArgs& p, std::uint32_t word) {
  const float fast = log2f(detail::uniform_open01(word)) * p.log2_to_gap;
  if (!(fast < static_cast<float>(kBeyond))) return kBeyond;
  const float whole = floorf(fast), rest = fast - whole, margin = fast * 0x1p-16f;
  if (rest >= margin && 1.0f - rest >= margin) return static_cast<int>(whole);
  const float exact = p.s.draw_from(word).gap;
  return exact < static_cast<float>(kBeyond) ? static_cast<int>(exact) : kBeyond;
}

/// One row of S walked through the segments [first, last), a chunk of 128 columns per step.
/// The four draws of a Philox block are drawn together, and the lanes of a warp that need a
/// block draw it together (a lane runs out of draws at its own pace: where each drew alone, the
/// warp would draw with a quarter of its lanes at a time).
class Walker {
 public:
  __device__ Walker(const TileArgs& p, std::int64_t j, std::int64_t first, std::int64_t last)
      : p_(p), j_(j), first_(first), last_(last) {}

  /// Zeroes this row's part of the tile and writes the chunk's non-zeros (+-1) into it. Called
  /// by all lanes of the warp together.
  __device__ void draw_chunk(__half* row, std::int64_t segment_step, int chunk) {
    uint4* zero = reinterpret_cast<uint4*>(row);
#pragma unroll
    for (int q = 0; q < kChunk * 2 / 16; ++q) zero[q] = make_uint4(0, 0, 0, 0);
    const std::int64_t g = first_ + segment_step;
    const bool active = j_ < p_.s.rows && g < last_;
    if (active && chunk == 0) start(g);
    const int begin = chunk * kChunk, end = begin + kChunk;
    bool hungry = active && consume(row, begin, end);
    while (__any_sync(0xffffffffu, hungry)) {
      if (hungry) {
        refill();
        hungry = consume(row, begin, end);
      }
    }
  }

 private:
  __device__ void start(std::int64_t g) {
    g_ = g;
    const std::int64_t left = p_.s.cols - g * SparseSignOperator::kSegment;
    length_ = static_cast<int>(left < SparseSignOperator::kSegment ? left : SparseSignOperator::kSegment);
    block_ = 0, cached_ = 0, next_ = -1;
  }
  /// Writes the pending non-zero while it lies before `end`, each time taking the next draw from
  /// the cache (`gap < length - next - 1` as in SparseSignOperator::walk); true when the cache
  /// ran out first.
  __device__ bool consume(__half* row, int begin, int end) {
    for (;;) {
      if (next_ >= end) return false;
      if (next_ >= 0) row[next_ - begin] = __ushort_as_half(negative_ ? 0xbc00 : 0x3c00);
      if (cached_ == 0) return true;
      const int q = 4 - cached_--;
      const int gap = q == 0 ? gaps_[0] : q == 1 ? gaps_[1] : q == 2 ? gaps_[2] : gaps_[3];
      negative_ = ((signs_ >> q) & 1u) != 0u;
      next_ = gap < length_ - next_ - 1 ? next_ + 1 + gap : kNone;
    }
  }
  __device__ void refill() {
    const PhiloxCounter words = p_.s.block(j_, g_, block_++);
#pragma unroll
    for (int w = 0; w < 4; ++w) gaps_[w] = gap_floor(p_, words.v[w]);
    signs_ = (words.v[0] & 1u) | (words.v[1] & 1u) << 1 | (words.v[2] & 1u) << 2 | (words.v[3] & 1u) << 3;
    cached_ = 4;
  }

  const TileArgs& p_;
  std::int64_t j_, first_, last_, g_ = 0;
  int length_ = 0, next_ = kNone, cached_ = 0, gaps_[4] = {};
  bool negative_ = false;
  std::uint32_t block_ = 0, signs_ = 0;
};

/// The step's slice of A: 256 K positions (two halves of 128) x 32 columns, into registers;
/// zeros past D, past b and past a half's last segment. Thread tid takes, b x D: column tid % 32
/// at positions tid / 32 + 8 u; D x b: position tid at columns u (u = 0 .. 31): coalesced reads.
template <bool COLUMNS>
struct Slice {
  float v[32];

  __device__ void load(const TileArgs& p, const std::int64_t (&first)[2], const std::int64_t (&last)[2],
                       std::int64_t segment_step, int chunk, index_t c0) {
    const int tid = threadIdx.x;
    const index_t ld = p.a.ld();
    if (COLUMNS) {  // position tid, columns c0 + u
      const int h = tid / kChunk;
      const std::int64_t g = first[h] + segment_step;
      const index_t i = g * SparseSignOperator::kSegment + chunk * kChunk + tid % kChunk;
      const bool inside = g < last[h] && i < p.s.cols;
      const float* x = p.a.data() + i + c0 * ld;
#pragma unroll
      for (int u = 0; u < 32; ++u) v[u] = inside && c0 + u < p.b ? x[u * ld] : 0.0f;
    } else {  // column c0 + tid % 32, positions tid / 32 + 8 u of each half
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const std::int64_t g = first[h] + segment_step;
        const index_t i = g * SparseSignOperator::kSegment + chunk * kChunk + tid / 32;
        const bool inside = g < last[h] && c0 + tid % 32 < p.b;
        const float* x = p.a.data() + c0 + tid % 32 + i * ld;
#pragma unroll
        for (int u = 0; u < 16; ++u) v[16 * h + u] = inside && i + 8 * u < p.s.cols ? x[8 * u * ld] : 0.0f;
      }
    }
  }

  /// hi + lo of each value times its column's 2^shift (hi saturating: an infinite or NaN x
  /// leaves its Inf or NaN in lo, and so in Y).
  __device__ void store(Shared& sh, const float (&up)[2][kTileCols]) const {
    const int tid = threadIdx.x;
#pragma unroll
    for (int u = 0; u < 32; ++u) {
      const int q = COLUMNS ? tid : tid / 32 + 8 * u, c = COLUMNS ? u : tid % 32;
      const float x = v[u] * up[0][c] * up[1][c];
      const __half hi = __float2half_rn(fminf(fmaxf(x, -65504.0f), 65504.0f));
      sh.a_hi[slice_index<COLUMNS>(q, c)] = hi;
      sh.a_lo[slice_index<COLUMNS>(q, c)] = __float2half_rn(x - __half2float(hi));
    }
  }
};

/// sums += the tile times A's slice: warp w takes rows 32 (w % 4) .. + 32 and columns 16 (w / 4)
/// .. + 16 of the block's, summing each step in fresh Tensor Core accumulators.
template <bool COLUMNS>
__device__ __forceinline__ void multiply(const Shared& sh, float (&sums)[2][2][4]) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wm = (warp % 4) * 32, wn = (warp / 4) * 16;
  float step[2][2][4] = {};
#pragma unroll 4
  for (int ks = 0; ks < kStepK; ks += 16) {
    std::uint32_t s_frag[2][4], hi[4], lo[4];
#pragma unroll
    for (int mt = 0; mt < 2; ++mt) tc::ldmatrix_x4(s_frag[mt], sh.s + (wm + mt * 16 + lane % 16) * kLd + ks + (lane / 16) * 8);
    load_b<COLUMNS>(sh.a_hi, ks, wn, lane, hi);
    load_b<COLUMNS>(sh.a_lo, ks, wn, lane, lo);
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

template <bool COLUMNS>
__global__ void __launch_bounds__(kThreadsTiles, 2) tensor_core_tiles_kernel(TileArgs p) {
  extern __shared__ __align__(16) unsigned char smem[];
  Shared& sh = *reinterpret_cast<Shared*>(smem);
  __shared__ float up[2][kTileCols], down[2][kTileCols];
  const std::int64_t m0 = static_cast<std::int64_t>(blockIdx.x) * kTileRows;
  const index_t c0 = static_cast<index_t>(blockIdx.z) * kTileCols;
  const std::int64_t g0 = static_cast<std::int64_t>(blockIdx.y) * p.segments_per_split;
  const std::int64_t g2 = g0 + p.segments_per_split < p.s.segments() ? g0 + p.segments_per_split : p.s.segments();
  const std::int64_t g1 = g0 + (g2 - g0 + 1) / 2;
  const std::int64_t first[2] = {g0, g1}, last[2] = {g1, g2};
  if (threadIdx.x < kTileCols) {
    const int c = threadIdx.x;
    const int shift = c0 + c < p.b ? fp16_shift(p.column_max[c0 + c]) : 0;
    up[0][c] = exp2i(shift / 2), up[1][c] = exp2i(shift - shift / 2);
    down[0][c] = exp2i(-(shift / 2)), down[1][c] = exp2i(shift / 2 - shift);
  }
  const int half = threadIdx.x / kTileRows, row = threadIdx.x % kTileRows;
  Walker walker(p, m0 + row, first[half], last[half]);
  Slice<COLUMNS> slice;
  float sums[2][2][4] = {};
  __syncthreads();
  const std::int64_t steps = (g1 - g0) * kChunksPerSegment;
  for (std::int64_t step = 0; step < steps; ++step) {
    const std::int64_t segment_step = step / kChunksPerSegment;
    const int chunk = static_cast<int>(step % kChunksPerSegment);
    slice.load(p, first, last, segment_step, chunk, c0);
    walker.draw_chunk(sh.s + row * kLd + half * kChunk, segment_step, chunk);
    slice.store(sh, up);
    __syncthreads();
    multiply<COLUMNS>(sh, sums);
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

}  // namespace

void project_on_tensor_cores(int device, const SparseSignOperator& s, MatrixView<const float> a, bool columns,
                             MatrixView<float> y, cudaStream_t stream) {
  const index_t b = y.cols(), k = s.rows;
  int sms = 0;
  RANDNLA_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::int64_t row_tiles = (k + kTileRows - 1) / kTileRows, column_tiles = (b + kTileCols - 1) / kTileCols;
  const std::int64_t segments = s.segments();
  // Enough ranges of segments to fill the GPU (two blocks per SM) in one wave; each range's
  // partial sums are added in order afterwards, so Y does not depend on the timing.
  std::int64_t splits = std::max<std::int64_t>(1, 2 * sms / (row_tiles * column_tiles));
  splits = std::min(splits, std::max<std::int64_t>(1, segments / 2));
  const std::int64_t per_split = (segments + splits - 1) / splits;
  splits = (segments + per_split - 1) / per_split;

  const std::size_t partials = splits > 1 ? static_cast<std::size_t>(splits * k * b) : 0;
  void* workspace = nullptr;
  RANDNLA_CUDA(cudaMallocAsync(&workspace, b * sizeof(std::uint32_t) + partials * sizeof(float), stream));
  auto* column_max = static_cast<std::uint32_t*>(workspace);
  float* partial = reinterpret_cast<float*>(column_max + b);
  RANDNLA_CUDA(cudaMemsetAsync(column_max, 0, b * sizeof(std::uint32_t), stream));
  const index_t d = s.cols;
  const unsigned max_blocks = static_cast<unsigned>(std::min<index_t>(1024, (d + kThreads - 1) / kThreads));
  column_max_kernel<<<dim3(max_blocks, static_cast<unsigned>(columns ? b : (b + 31) / 32)), kThreads, 0, stream>>>(
      a, columns, column_max);
  RANDNLA_CUDA_LAUNCH("sparse projection (column maxima)");

  TileArgs p{s, a, b, splits > 1 ? partial : y.data(), splits > 1 ? k : y.ld(),
             splits > 1 ? static_cast<std::size_t>(k * b) : 0, column_max, per_split,
             static_cast<float>(0.6931471805599453 / std::log1p(-s.density))};
  auto* kernel = columns ? tensor_core_tiles_kernel<true> : tensor_core_tiles_kernel<false>;
  RANDNLA_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(sizeof(Shared))));
  kernel<<<dim3(static_cast<unsigned>(row_tiles), static_cast<unsigned>(splits), static_cast<unsigned>(column_tiles)),
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
