// The split of FP32 operands into hi + lo Tensor Core fragments in registers (SHGEMM / TCEC), and
// where a thread finds its fragment elements in a streamed 128-row slice staged by the tensor
// copy engine with 128-byte swizzle: the mainloop side of the split products, for any kernel that
// stages its FP32 operand the same way.
#pragma once

#include "cuda/tc/sm90_primitives.cuh"
#include "randnla/precision.hpp"

namespace randnla {
namespace cuda {
namespace tc {

/// Rows of a streamed slice (a consumer tile's rows).
constexpr int kBM = 128;

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/// 2^s brings a row's largest |x| (as bits) to [2^14, 2^15); zero rows stay unscaled.
__device__ __forceinline__ int scale_exponent(std::uint32_t max_bits) {
  const int top = static_cast<int>(max_bits >> 23);
  if (top == 0) return 0;  // zeros and FP32 subnormals only
  const int s = kFp16TargetExponent - (top - 127);
  return s > 110 ? 110 : (s < -110 ? -110 : s);
}

/// The element type's register fragments: how many elements a K step holds, which of the
/// thread's two rows an element is in, and the split of scaled values into hi + lo (lo not
/// shifted). The conversions to hi saturate: an infinite x gives the largest finite hi and an
/// infinite lo = x - hi, so hi * p + lo * p is the product IEEE arithmetic gives (Inf, or NaN
/// for Inf * 0), where an infinite hi would make lo = Inf - Inf a NaN.
template <class T>
struct Fragment;
template <>
struct Fragment<__half> {
  static constexpr int kElems = 8, kSteps = 4, kBK = 64;
  __device__ __forceinline__ static constexpr int row_half(int q) { return (q >> 1) & 1; }
  __device__ __forceinline__ static void split(const float (&y)[8], std::uint32_t (&hi)[4], std::uint32_t (&lo)[4]) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      std::uint32_t h;
      asm("cvt.rn.satfinite.f16x2.f32 %0, %1, %2;\n" : "=r"(h) : "f"(y[2 * j + 1]), "f"(y[2 * j]));
      const float2 hf = __half22float2(*reinterpret_cast<const __half2*>(&h));
      const __half2 l = __floats2half2_rn(__fsub_rn(y[2 * j], hf.x), __fsub_rn(y[2 * j + 1], hf.y));
      hi[j] = h;
      lo[j] = *reinterpret_cast<const std::uint32_t*>(&l);
    }
  }
};
template <>
struct Fragment<float> {
  static constexpr int kElems = 4, kSteps = 4, kBK = 32;
  __device__ __forceinline__ static constexpr int row_half(int q) { return q & 1; }
  __device__ __forceinline__ static void split(const float (&y)[4], std::uint32_t (&hi)[4], std::uint32_t (&lo)[4]) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      std::uint32_t h, l;
      asm("cvt.rna.satfinite.tf32.f32 %0, %1;\n" : "=r"(h) : "f"(y[q]));
      asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(l) : "f"(__fsub_rn(y[q], __uint_as_float(h))));
      hi[q] = h;
      lo[q] = l;
    }
  }
};

/// Where a consumer thread finds its A-fragment elements in the streamed slice (128 rows x kBK
/// FP32, as the copy engine left it: K-major source in boxes of 32 K values x 128 rows, M-major in
/// boxes of 32 rows x kBK K values, 128-byte swizzle), in wgmma's register layout (per warp as
/// mma.m16n8k16 and m16n8k8), g = lane / 4, t = lane % 4, rows relative to the warp's 16:
/// FP16: element q = 2 j + h of K step ks (register j): row g + 8 (j & 1), k = 16 ks + 2 t + 8 (j >> 1) + h.
/// TF32: element q = 0..3: row g + 8 (q & 1), k = 8 ks + t + 4 (q >> 1).
/// Each address is stage + lane_offset(sel(ks, q)) + offset(ks, q): the swizzle makes a few
/// lane-dependent offsets (computed once per thread), the rest is a compile-time immediate, so a
/// slice costs one shared-memory load per element (per two elements where they are adjacent) and
/// a handful of additions.
template <class T, bool K_MAJOR>
struct SliceLayout;
/// K-major: box ks / 2; chunk 4 (ks % 2) + 2 (q >> 2) + t / 2, XOR g (= row & 7 for both rows).
template <>
struct SliceLayout<__half, true> {
  static constexpr int kOffsets = 4;
  __device__ static std::uint32_t lane_offset(int sel, int wrow, int g, int t) {
    return (wrow + g) * 128 + 8 * (t & 1) + (((4 * (sel >> 1) + 2 * (sel & 1) + t / 2) ^ g) << 4);
  }
  __device__ __forceinline__ static constexpr int sel(int ks, int q) { return 2 * (ks % 2) + (q >> 2); }
  __device__ __forceinline__ static constexpr std::uint32_t offset(int ks, int q) {
    return (ks / 2) * (kBM * 128) + 1024 * ((q >> 1) & 1) + 4 * (q & 1);
  }
};
/// M-major: k row 16 ks + 8 (q >> 2) + (q & 1) + 2 t; chunk (wrow % 32) / 4 + g / 4 + 2 h, XOR 2 t + (q & 1).
template <>
struct SliceLayout<__half, false> {
  static constexpr int kOffsets = 4;
  __device__ static std::uint32_t lane_offset(int sel, int wrow, int g, int t) {
    return (wrow / 32) * (Fragment<__half>::kBK * 128) + 2 * t * 128 + 4 * (g % 4) +
           ((((wrow % 32) / 4 + g / 4 + 2 * (sel >> 1)) ^ (2 * t + (sel & 1))) << 4);
  }
  __device__ __forceinline__ static constexpr int sel(int, int q) { return 2 * ((q >> 1) & 1) + (q & 1); }
  __device__ __forceinline__ static constexpr std::uint32_t offset(int ks, int q) {
    return (16 * ks + 8 * (q >> 2) + (q & 1)) * 128;
  }
};
/// K-major: chunk 2 ks + (q >> 1), XOR g; within it word t.
template <>
struct SliceLayout<float, true> {
  static constexpr int kOffsets = 8;
  __device__ static std::uint32_t lane_offset(int sel, int wrow, int g, int t) {
    return (wrow + g) * 128 + 4 * t + ((sel ^ g) << 4);
  }
  __device__ __forceinline__ static constexpr int sel(int ks, int q) { return 2 * ks + (q >> 1); }
  __device__ __forceinline__ static constexpr std::uint32_t offset(int, int q) { return 1024 * (q & 1); }
};
/// M-major: k row 8 ks + 4 (q >> 1) + t; chunk (wrow % 32) / 4 + g / 4 + 2 h, XOR t + 4 (q >> 1).
template <>
struct SliceLayout<float, false> {
  static constexpr int kOffsets = 4;
  __device__ static std::uint32_t lane_offset(int sel, int wrow, int g, int t) {
    return (wrow / 32) * (Fragment<float>::kBK * 128) + t * 128 + 4 * (g % 4) +
           ((((wrow % 32) / 4 + g / 4 + 2 * (sel >> 1)) ^ (t + 4 * (sel & 1))) << 4);
  }
  __device__ __forceinline__ static constexpr int sel(int, int q) { return 2 * (q & 1) + (q >> 1); }
  __device__ __forceinline__ static constexpr std::uint32_t offset(int ks, int q) {
    return (8 * ks + 4 * (q >> 1)) * 128;
  }
};

/// Shared-memory loads kept in program order with the barrier waits (both are volatile asm).
__device__ __forceinline__ float lds(std::uint32_t addr) {
  float x;
  asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(x) : "r"(addr));
  return x;
}
__device__ __forceinline__ void lds2(std::uint32_t addr, float& x0, float& x1) {
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(x0), "=f"(x1) : "r"(addr));
}

/// The thread's slice elements, loaded once from shared memory.
template <class T, bool K_MAJOR>
__device__ __forceinline__ void load_slice(std::uint32_t stage, const std::uint32_t (&lane)[SliceLayout<T, K_MAJOR>::kOffsets],
                                           float (&y)[Fragment<T>::kSteps][Fragment<T>::kElems]) {
  using L = SliceLayout<T, K_MAJOR>;
  using Fr = Fragment<T>;
  std::uint32_t base[L::kOffsets];
#pragma unroll
  for (int i = 0; i < L::kOffsets; ++i) base[i] = stage + lane[i];
#pragma unroll
  for (int ks = 0; ks < Fr::kSteps; ++ks)
#pragma unroll
    for (int q = 0; q < Fr::kElems; ++q) {
      const std::uint32_t a = base[L::sel(ks, q)] + L::offset(ks, q);
      constexpr bool kPairs = sizeof(T) == 2 && K_MAJOR;  // q, q + 1 adjacent for even q
      if (kPairs && q % 2 == 0)
        lds2(a, y[ks][q], y[ks][q + 1]);
      else if (!kPairs)
        y[ks][q] = lds(a);
    }
}
#endif

}  // namespace tc
}  // namespace cuda
}  // namespace randnla
