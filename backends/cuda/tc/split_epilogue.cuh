// The epilogue of a tile split along K (TileRange): each part leaves its consumers' accumulators
// in a scratch slot, and the part that arrives last adds all parts' sums in part order, so that
// the result is the same bits whatever the timing.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace randnla {
namespace cuda {
namespace tc {

/// Accumulators a consumer thread keeps, at most: 64 (m64n128; m64n64 tiles keep 32) + 4 (m64n8).
constexpr int kPartialElems = 68;

/// Scratch floats of a split launch: per block and consumer warpgroup, kPartialElems partial sums
/// x 128 threads, element-major (a warp's stores coalesce); the arrival counters (one int per
/// tile and consumer, zeroed before the launch) follow.
template <int CONSUMERS>
__host__ __device__ constexpr std::size_t partial_floats(int blocks) {
  return static_cast<std::size_t>(blocks) * CONSUMERS * kPartialElems * 128;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/// A split tile's part: consumer warpgroup cw's sums into the block's scratch slot; true for the
/// part that arrives last, whose acc and x then hold the parts' sums added in part order (each
/// part fences its stores before counting its arrival, so the last sees them all). Named barrier
/// 1 + cw synchronises the warpgroup's 128 threads.
template <int CONSUMERS, bool EXTRA, int ACC>
__device__ bool sum_of_parts(void* scratch, int parts, int tid, int cw, float (&acc)[ACC], float (&x)[4]) {
  static_assert(ACC <= 64, "the slots hold 64 accumulators and the extra 4");
  float* partials = static_cast<float*>(scratch);
  int* arrivals = reinterpret_cast<int*>(partials + partial_floats<CONSUMERS>(gridDim.x));
  auto slot = [&](int block, int e) {
    return partials + partial_floats<CONSUMERS>(block) + (static_cast<std::size_t>(cw) * kPartialElems + e) * 128 + tid;
  };
  const int block = blockIdx.x, first = block - block % parts;
#pragma unroll
  for (int e = 0; e < ACC; ++e) *slot(block, e) = acc[e];
  if (EXTRA) {
#pragma unroll
    for (int e = 0; e < 4; ++e) *slot(block, 64 + e) = x[e];
  }
  __threadfence();
  __shared__ int last[CONSUMERS];
  asm volatile("bar.sync %0, 128;\n" ::"r"(1 + cw) : "memory");
  if (tid == 0) last[cw] = atomicAdd(&arrivals[(block / parts) * CONSUMERS + cw], 1) == parts - 1;
  asm volatile("bar.sync %0, 128;\n" ::"r"(1 + cw) : "memory");
  if (!last[cw]) return false;
  __threadfence();
#pragma unroll
  for (int e = 0; e < ACC; ++e) acc[e] = 0.0f;
#pragma unroll
  for (int e = 0; e < 4; ++e) x[e] = 0.0f;
#pragma unroll 1
  for (int part = first; part < first + parts; ++part) {
#pragma unroll
    for (int e = 0; e < ACC; ++e) acc[e] += __ldcg(slot(part, e));
    if (EXTRA) {
#pragma unroll
      for (int e = 0; e < 4; ++e) x[e] += __ldcg(slot(part, 64 + e));
    }
  }
  return true;
}
#endif

}  // namespace tc
}  // namespace cuda
}  // namespace randnla
