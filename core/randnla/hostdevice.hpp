// Marks functions that compile for both the host and CUDA devices; rounding helpers that
// forbid FMA contraction so host and device produce identical bits.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define RANDNLA_HD __host__ __device__ __forceinline__
#else
#define RANDNLA_HD inline
#endif

namespace randnla {
namespace exact {

// Each of these rounds once, to nearest, on host and device alike. nvcc would otherwise contract
// a*b+c into an FMA on the device, where the host rounds twice.
RANDNLA_HD float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
RANDNLA_HD float add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
RANDNLA_HD float sub(float a, float b) { return add(a, -b); }
RANDNLA_HD float div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
RANDNLA_HD float fma(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
RANDNLA_HD float sqrt(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

RANDNLA_HD std::uint32_t bits_of(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
RANDNLA_HD float float_of(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

}  // namespace exact
}  // namespace randnla
