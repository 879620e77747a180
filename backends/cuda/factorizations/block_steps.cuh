// What the step functions of the eigensolver (tridiagonalize.cuh, tridiagonal_dc.cuh) share: a
// kernel runs them with one block per task, the host test (unit_tests/test_eig_steps.cpp) one
// thread at a time, where the barriers vanish and a reduction is its one value.
#pragma once

#include "randnla/hostdevice.hpp"

#ifdef __CUDA_ARCH__
#define RANDNLA_SYNC_WARP() __syncwarp()
#else
#define RANDNLA_SYNC_WARP()
#endif

namespace randnla {
namespace cuda {

/// The barrier of the nth threads that run a step together: one warp (nth <= 32, so that a kernel
/// may run different steps in different warps at once) or the whole block.
RANDNLA_HD void team_sync(int nth) {
#ifdef __CUDA_ARCH__
  if (nth <= 32) __syncwarp(); else __syncthreads();
#else
  (void)nth;
#endif
}

/// The warp's sum (or product) of one value per lane, in every lane.
template <bool Product = false>
RANDNLA_HD double warp_reduce(double v) {
#ifdef __CUDA_ARCH__
  for (int o = 16; o > 0; o /= 2) {
    const double u = __shfl_xor_sync(0xffffffffu, v, o);
    v = Product ? v * u : v + u;
  }
#endif
  return v;
}

/// The block's sum (or product) of one value per thread, in every thread; red holds nth doubles,
/// nth a power of 2 (one warp: shuffles only).
template <bool Product>
RANDNLA_HD double block_reduce(double v, double* red, int tid, int nth) {
#ifdef __CUDA_ARCH__
  if (nth == 32) return warp_reduce<Product>(v);
#endif
  red[tid] = v;
  team_sync(nth);
  for (int w = nth / 2; w > 0; w /= 2) {
    if (tid < w) red[tid] = Product ? red[tid] * red[tid + w] : red[tid] + red[tid + w];
    team_sync(nth);
  }
  const double r = red[0];
  team_sync(nth);
  return r;
}

}  // namespace cuda
}  // namespace randnla
