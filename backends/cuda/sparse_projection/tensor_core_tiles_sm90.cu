// The sparse projection's Tensor Core tiles on wgmma (sm_90a machine code, built with the other
// wgmma kernels): each warpgroup multiplies its 64 rows of S's tile by A's slices, both read
// from shared memory through descriptors, asynchronously, while the walkers draw the next step's
// tile into the other stage (tiles_kernel.cuh).
#include "tiles_kernel.cuh"

#include "cuda/context/cuda_check.hpp"
#include "cuda/context/kernel_config.cuh"
#include "cuda/tc/sm90_primitives.cuh"

namespace randnla {
namespace cuda {
namespace tiles {
namespace {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/// Warpgroup w's product: rows 64 w .. + 64 of the tile, all 32 columns, m64n32k16 from shared
/// memory (S's tile and A's slices, K-major in the 128-byte swizzle).
class TilesWgmma {
 public:
  __device__ void start(const Tile& s, const Slices& a) {
    const int wg = threadIdx.x / 128;
    tc::wgmma_fence();
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int kk = 0; kk < kChunk / 16; ++kk) {
        const std::uint64_t da = tc::smem_desc(reinterpret_cast<const unsigned char*>(s[h]) + wg * 64 * kRowBytes) + 2 * kk;
#pragma unroll
        for (int part = 0; part < 2; ++part)
          tc::wgmma_ss_n32(step_, da, tc::smem_desc(a[part][h]) + 2 * kk, h + kk + part > 0);
      }
    tc::wgmma_commit();
  }
  /// The walkers' stores and the copies made visible to wgmma (the async proxy).
  __device__ void publish() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
  __device__ void finish() {
    tc::wgmma_wait_all();
#pragma unroll
    for (int e = 0; e < 16; ++e) {
      tc::pin(step_[e]);
      sums_[e] += step_[e];
    }
  }
  template <class F>
  __device__ void for_each_sum(const F& f) const {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int r0 = (warp / 4) * 64 + (warp % 4) * 16 + lane / 4;
#pragma unroll
    for (int e = 0; e < 16; ++e) f(r0 + 8 * ((e / 2) % 2), 8 * (e / 4) + 2 * (lane % 4) + e % 2, sums_[e]);
  }

 private:
  float step_[16] = {}, sums_[16] = {};
};
#endif

__global__ void __launch_bounds__(kThreads, 2) tiles_wgmma_kernel(const __grid_constant__ TileArgs p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char smem[];
  run_tiles<TilesWgmma>(p, smem);
#endif
}

}  // namespace

void launch_tiles_wgmma(const TileArgs& args, dim3 grid, cudaStream_t stream) {
  allow_dynamic_shared_memory(tiles_wgmma_kernel, kSharedBytes);
  tiles_wgmma_kernel<<<grid, kThreads, kSharedBytes, stream>>>(args);
  RANDNLA_CUDA_LAUNCH("sparse projection (Tensor Core tiles, wgmma)");
}

}  // namespace tiles
}  // namespace cuda
}  // namespace randnla
