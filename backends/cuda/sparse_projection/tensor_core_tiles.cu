// Y = S A on the Tensor Cores for dense-ish S (Achlioptas's p = 1/3 and the like), S never stored.
//
// A is first split once, each column scaled by a power of two into FP16's range, into hi + lo
// FP16 parts (lo unshifted) in a workspace laid out for the blocks' copies: each column of A
// contiguous (K-major), zero past D up to a multiple of 64. Then the tiles (tiles_kernel.cuh):
// the wgmma product on compute 9.0 (tensor_core_tiles_sm90.cu), this file's mma.sync product
// elsewhere (tc/kernel_choice.hpp); each range of S's segments adds its partial sums in order
// afterwards, so Y does not depend on the timing.
#include "tensor_core_tiles.cuh"

#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "cuda/context/cuda_check.hpp"
#include "cuda/elementwise/for_each.cuh"
#include "cuda/context/kernel_config.cuh"
#include "cuda/tc/kernel_choice.hpp"
#include "cuda/tc/mma_sm80.cuh"
#include "tiles_kernel.cuh"

namespace randnla {
namespace cuda {
namespace {

using namespace tiles;

/// Warp w's product: rows 32 (w % 4) .. + 32 and columns 16 (w / 4) .. + 16 of the tile, on
/// mma.sync m16n8k16, each step summed in fresh accumulators.
class TilesMmaSync {
 public:
  __device__ void start(const Tile& s, const Slices& a) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int wm = (warp % 4) * 32, wn = (warp / 4) * 16;
    float step[2][2][4] = {};
#pragma unroll
    for (int ks = 0; ks < 2 * kChunk; ks += 16) {
      const int h = ks / kChunk, k = ks % kChunk;
      std::uint32_t s_frag[2][4], b_frag[2][4];
#pragma unroll
      for (int mt = 0; mt < 2; ++mt) tc::ldmatrix_x4(s_frag[mt], at(s[h], wm + mt * 16 + lane % 16, k + (lane / 16) * 8));
#pragma unroll
      for (int part = 0; part < 2; ++part)  // rows are A's columns: B fragments without a transpose
        tc::ldmatrix_x4(b_frag[part], at(a[part][h], wn + lane % 8 + (lane / 16) * 8, k + ((lane / 8) % 2) * 8));
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int nt = 0; nt < 2; ++nt)
#pragma unroll
          for (int part = 0; part < 2; ++part) {
            const std::uint32_t b[2] = {b_frag[part][2 * nt], b_frag[part][2 * nt + 1]};
            tc::mma(step[mt][nt], s_frag[mt], b, __half());
          }
    }
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) sums_[mt][nt][e] += step[mt][nt][e];
  }
  __device__ void publish() {}
  __device__ void finish() {}
  template <class F>
  __device__ void for_each_sum(const F& f) const {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int wm = (warp % 4) * 32, wn = (warp / 4) * 16;
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          f(wm + mt * 16 + lane / 4 + 8 * (e / 2), wn + nt * 8 + 2 * (lane % 4) + e % 2, sums_[mt][nt][e]);
  }

 private:
  static __device__ const __half* at(const __half* array, int row, int column) {
    return reinterpret_cast<const __half*>(reinterpret_cast<const unsigned char*>(array) + swizzled(row, column));
  }
  float sums_[2][2][4] = {};
};

__global__ void __launch_bounds__(tiles::kThreads, 2) tiles_mma_sync_kernel(TileArgs p) {
  extern __shared__ unsigned char smem[];
  run_tiles<TilesMmaSync>(p, smem);
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

/// A's parts, where the tiles' copies read them.
struct Parts {
  __half* hi;
  __half* lo;
  index_t ld;  // D rounded up to kChunk
  const std::uint32_t* column_max;
  index_t b;

  /// Element (i, c) of A into its parts: split_halfhalf of x times the column's 2^shift, lo
  /// unshifted (hi saturates: an Inf or NaN stays in lo, and so in Y). The shift can pass FP32's
  /// exponent range for one factor, so half of it is applied first.
  __device__ void split(float x, index_t i, index_t c) const {
    const int shift = c < b ? fp16_shift(column_max[c]) : 0;
    fp16 h, l;
    split_halfhalf(x * exp2i(shift / 2), shift - shift / 2, h, l, 1.0f);
    hi[c * ld + i] = __ushort_as_half(h.bits);
    lo[c * ld + i] = __ushort_as_half(l.bits);
  }
};

constexpr int kSplitRows = 64;  // positions of D per block of split_rows_kernel

/// A's parts from a b x D A through a 64 x 32 tile in shared memory: the reads run along A's
/// rows and the writes along the parts' columns, both coalesced.
__global__ void split_rows_kernel(MatrixView<const float> a, index_t d, Parts parts) {
  __shared__ float tile[kSplitRows][kTileCols + 1];
  const index_t i0 = static_cast<index_t>(blockIdx.x) * kSplitRows, c0 = static_cast<index_t>(blockIdx.y) * kTileCols;
  const int lane = threadIdx.x % 32, row = threadIdx.x / 32;
  for (int r = row; r < kSplitRows; r += tiles::kThreads / 32) {
    const index_t i = i0 + r, c = c0 + lane;
    tile[r][lane] = i < d && c < parts.b ? a.data()[c + i * a.ld()] : 0.0f;
  }
  __syncthreads();
  for (int q = row; q < kTileCols; q += tiles::kThreads / 32)
    for (int r = lane; r < kSplitRows; r += 32) parts.split(tile[r][q], i0 + r, c0 + q);
}

}  // namespace

void add_partial_sums(const float* partial, std::int64_t parts, index_t k, MatrixView<float> y, cudaStream_t stream) {
  const index_t b = y.cols();
  for_each(k, b, stream, "sparse projection (partial sums)", [=] __device__(index_t j, index_t c) {
    float sum = 0.0f;
    for (std::int64_t z = 0; z < parts; ++z) sum += partial[z * k * b + j + c * k];
    y.data()[j + c * y.ld()] = sum;
  });
}

void project_on_tensor_cores(int device, const SparseSignOperator& s, MatrixView<const float> a, bool columns,
                             MatrixView<float> y, const std::shared_ptr<StreamMemory>& memory) {
  const cudaStream_t stream = memory->get();
  const index_t b = y.cols(), k = s.rows, d = s.cols;
  const int sms = multiprocessors(device);
  const std::int64_t row_tiles = (k + kTileRows - 1) / kTileRows, column_tiles = (b + kTileCols - 1) / kTileCols;
  const std::int64_t segments = s.segments();
  // Enough ranges of segments to fill the GPU (two blocks per SM) in one wave.
  std::int64_t splits = std::max<std::int64_t>(1, 2 * sms / (row_tiles * column_tiles));
  splits = std::min(splits, std::max<std::int64_t>(1, segments / 2));
  const std::int64_t per_split = (segments + splits - 1) / splits;
  splits = (segments + per_split - 1) / per_split;

  const index_t b_padded = column_tiles * kTileCols, parts_ld = (d + kChunk - 1) / kChunk * kChunk;
  const std::size_t partials = splits > 1 ? static_cast<std::size_t>(splits * k * b) : 0;
  const auto aligned = [](std::size_t bytes) { return (bytes + 255) / 256 * 256; };
  const std::size_t max_bytes = aligned(b * sizeof(std::uint32_t)), partial_bytes = aligned(partials * sizeof(float));
  const std::size_t part_bytes = static_cast<std::size_t>(parts_ld * b_padded) * sizeof(__half);
  const std::shared_ptr<void> held = StreamMemory::allocate(memory, max_bytes + partial_bytes + 2 * part_bytes);
  auto* workspace = static_cast<unsigned char*>(held.get());
  auto* column_max = reinterpret_cast<std::uint32_t*>(workspace);
  auto* partial = reinterpret_cast<float*>(workspace + max_bytes);
  const Parts parts{reinterpret_cast<__half*>(workspace + max_bytes + partial_bytes),
                    reinterpret_cast<__half*>(workspace + max_bytes + partial_bytes + part_bytes), parts_ld, column_max, b};

  RANDNLA_CUDA(cudaMemsetAsync(column_max, 0, b * sizeof(std::uint32_t), stream));
  const unsigned max_blocks = static_cast<unsigned>(std::min<index_t>(1024, (d + tiles::kThreads - 1) / tiles::kThreads));
  column_max_kernel<<<dim3(max_blocks, static_cast<unsigned>(columns ? b : (b + 31) / 32)), tiles::kThreads, 0, stream>>>(
      a, columns, column_max);
  RANDNLA_CUDA_LAUNCH("sparse projection (column maxima)");
  if (columns) {
    for_each(parts_ld, b_padded, stream, "sparse projection (A's parts)", [=] __device__(index_t i, index_t c) {
      parts.split(i < d && c < b ? a.data()[i + c * a.ld()] : 0.0f, i, c);
    });
  } else {
    split_rows_kernel<<<dim3(static_cast<unsigned>(parts_ld / kSplitRows), static_cast<unsigned>(column_tiles)), tiles::kThreads,
                        0, stream>>>(a, d, parts);
    RANDNLA_CUDA_LAUNCH("sparse projection (A's parts)");
  }

  const TileArgs p{s, philox_schedule(detail::philox_key(s.seed)), b, parts.hi, parts.lo, parts_ld,
                   splits > 1 ? partial : y.data(), splits > 1 ? k : y.ld(),
                   splits > 1 ? static_cast<std::size_t>(k * b) : 0, column_max, per_split,
                   FastGaps::of(s)};
  const dim3 grid(static_cast<unsigned>(row_tiles), static_cast<unsigned>(splits), static_cast<unsigned>(column_tiles));
  if (choose_wgmma()) {
    launch_tiles_wgmma(p, grid, stream);
  } else {
    allow_dynamic_shared_memory(tiles_mma_sync_kernel, kSharedBytes);
    tiles_mma_sync_kernel<<<grid, tiles::kThreads, kSharedBytes, stream>>>(p);
    RANDNLA_CUDA_LAUNCH("sparse projection (Tensor Core tiles, mma.sync)");
  }
  if (splits > 1) add_partial_sums(partial, splits, k, y, stream);
}

}  // namespace cuda
}  // namespace randnla
