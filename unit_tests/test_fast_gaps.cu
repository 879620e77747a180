// The CUDA kernels' fast gap floors (backends/cuda/sparse_projection/fast_gaps.cuh) against the
// exact draw's (SparseSignOperator::gap_of, the host's) for every uniform the operator can draw,
// 2^23 of them, at 240 densities from 10^-8 to 1: one word that differs would make the device's S
// differ from the host's. That the margins matter is checked too: without the exact draw near
// integers, some floors would differ.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "sparse_projection/fast_gaps.cuh"

namespace {

using randnla::cuda::FastGaps;

struct Counts {
  unsigned long long differing, differing_without_margins;
};

__global__ void compare_floors(FastGaps gaps, Counts* counts) {
  unsigned long long differing = 0, without_margins = 0;
  for (std::uint32_t x = blockIdx.x * blockDim.x + threadIdx.x; x < (1u << 23); x += gridDim.x * blockDim.x) {
    const std::uint32_t word = x << 9;  // the uniform's 23 bits
    const int exact = randnla::cuda::exact_gap_floor(word, gaps.log1m_density);
    differing += gaps.floor_of(word) != exact;
    float lg;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(lg) : "f"(randnla::detail::uniform_open01(word)));
    const float product = lg * gaps.log2_to_gap;
    without_margins += product < 0x1p18f && static_cast<int>(floorf(product)) != exact;
  }
  atomicAdd(&counts->differing, differing);
  atomicAdd(&counts->differing_without_margins, without_margins);
}

bool gpu_present() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

TEST(Gpu, FastGapFloorsAreTheExactDraws) {
  if (!gpu_present()) GTEST_SKIP() << "no GPU";
  Counts* counts = nullptr;
  ASSERT_EQ(cudaMallocManaged(&counts, sizeof(Counts)), cudaSuccess);
  unsigned long long differing_without_margins = 0;
  for (int i = 0; i <= 240; ++i) {
    const double p = std::min(1.0, std::pow(10.0, -8.0 + i / 30.0) * (1.0 + 0.37 * (i % 7) / 7.0));
    const randnla::SparseSignOperator s(1, 1, p, 1.0f, 0);
    *counts = {};
    compare_floors<<<528, 256>>>(FastGaps::of(s), counts);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(counts->differing, 0u) << "p = " << p;
    differing_without_margins += counts->differing_without_margins;
  }
  EXPECT_GT(differing_without_margins, 0u) << "the margins are never needed: the test cannot tell";
  cudaFree(counts);
}

}  // namespace
