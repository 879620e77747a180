// The CUDA kernels' fast gap floors (backends/cuda/sparse_projection/fast_gaps.cuh) against the
// exact draw's (SparseSignOperator::gap_of, the host's) for every uniform the operator can draw,
// 2^23 of them, at 240 densities from 10^-8 to 1: one word that differs would make the device's S
// differ from the host's. That the margins matter is checked too: without the exact draw near
// integers, some floors would differ. Reports the share of exact draws and the errors the margins
// rest on.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "sparse_projection/fast_gaps.cuh"

namespace {

using randnla::cuda::FastGaps;

struct Counts {
  unsigned long long differing, differing_without_margins, exact_draws;
};

__global__ void compare_floors(FastGaps gaps, Counts* counts) {
  unsigned long long differing = 0, without_margins = 0, exact_draws = 0;
  for (std::uint32_t x = blockIdx.x * blockDim.x + threadIdx.x; x < (1u << 23); x += gridDim.x * blockDim.x) {
    const std::uint32_t word = x << 9;  // the uniform's 23 bits
    const int exact = randnla::cuda::exact_gap_floor(word, gaps.log1m_density);
    differing += gaps.floor_of(word) != exact;
    const float product = gaps.fast_gap(word);
    without_margins += product < 0x1p18f && static_cast<int>(floorf(product)) != exact;
    exact_draws += gaps.near_integer(product);
  }
  atomicAdd(&counts->differing, differing);
  atomicAdd(&counts->differing_without_margins, without_margins);
  atomicAdd(&counts->exact_draws, exact_draws);
}

/// The largest error of lg2.approx over the uniforms: absolute on [1/2, 1), relative below (the
/// margins' premise, fast_gaps.cuh), as the bits of non-negative doubles.
__global__ void lg2_errors(unsigned long long* worst) {
  double absolute = 0, relative = 0;
  for (std::uint32_t x = blockIdx.x * blockDim.x + threadIdx.x; x < (1u << 23); x += gridDim.x * blockDim.x) {
    const float u = randnla::detail::uniform_open01(x << 9);
    float lg;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(lg) : "f"(u));
    const double exact = log2(static_cast<double>(u)), error = fabs(lg - exact);
    if (u >= 0.5f) absolute = fmax(absolute, error);
    else relative = fmax(relative, error / fabs(exact));
  }
  atomicMax(&worst[0], static_cast<unsigned long long>(__double_as_longlong(absolute)));
  atomicMax(&worst[1], static_cast<unsigned long long>(__double_as_longlong(relative)));
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
  const auto check = [&](double p) {
    const randnla::SparseSignOperator s(1, 1, p, 1.0f, 0);
    *counts = {};
    compare_floors<<<528, 256>>>(FastGaps::of(s), counts);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(counts->differing, 0u) << "p = " << p;
    differing_without_margins += counts->differing_without_margins;
  };
  for (int i = 0; i <= 240; ++i) check(std::min(1.0, std::pow(10.0, -8.0 + i / 30.0) * (1.0 + 0.37 * (i % 7) / 7.0)));
  EXPECT_GT(differing_without_margins, 0u) << "the margins are never needed: the test cannot tell";
  for (double p : {1 / std::sqrt(1e7), 1 / std::sqrt(1e8), 1.0 / 3.0}) {
    check(p);
    std::printf("p = %.3g: %.2f%% of the draws to the exact draw\n", p, 100.0 * counts->exact_draws / (1u << 23));
  }
  cudaFree(counts);
}

// The errors fast_gaps.cuh's margins are derived from, over every uniform: the exact log's relative
// error (host) and lg2.approx's (this GPU), each within 2^-22, where the margins keep a factor of two.
TEST(Gpu, FastGapMarginsPremisesHold) {
  if (!gpu_present()) GTEST_SKIP() << "no GPU";
  double log_relative = 0;
  for (std::uint32_t x = 0; x < (1u << 23); ++x) {
    const float u = randnla::detail::uniform_open01(x << 9);
    const double exact = std::log(static_cast<double>(u));
    log_relative = std::max(log_relative, std::fabs(randnla::detail::log_deterministic(u) - exact) / std::fabs(exact));
  }
  unsigned long long* worst = nullptr;
  ASSERT_EQ(cudaMallocManaged(&worst, 2 * sizeof(unsigned long long)), cudaSuccess);
  worst[0] = worst[1] = 0;
  lg2_errors<<<528, 256>>>(worst);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  double lg2[2];
  std::memcpy(lg2, worst, sizeof lg2);
  std::printf("exact log: relative error 2^%.2f; lg2.approx: absolute on [1/2, 1) 2^%.2f, relative below 2^%.2f\n",
              std::log2(log_relative), std::log2(lg2[0]), std::log2(lg2[1]));
  EXPECT_LT(log_relative, 0x1p-22);
  EXPECT_LT(lg2[0], 0x1p-22);
  EXPECT_LT(lg2[1], 0x1p-22);
  cudaFree(worst);
}

}  // namespace
