// FP16 / TF32 rounding and the FP32 splits of the seed papers, bit-exact on host and device.
//   halfhalf: hi = RN_fp16(x),  lo = RN_fp16((x - hi) * 2^11)      (Ootomo & Yokota, TCEC, Sec. 3)
//   tf32tf32: hi = RNA_tf32(x), lo = RNA_tf32((x - hi) * 2^11)
// so that x ~ hi + lo * 2^-11. The 2^11 shift keeps lo out of FP16's subnormal range.
#pragma once

#include <cstdint>

#include "randnla/enum_names.hpp"
#include "randnla/hostdevice.hpp"
#include "randnla/matrix_view.hpp"

namespace randnla {

/// FP32 -> FP16 bits, round to nearest even; identical to CUDA's __float2half_rn for every input
/// (NaN becomes 0x7fff, overflow becomes +-Inf). On the device, that one instruction: the bit by
/// bit version made the split of a product's packed operand compute-bound (2.0 TB/s, H100).
RANDNLA_HD std::uint16_t float_to_half_bits(float f) {
#if defined(__CUDA_ARCH__)
  std::uint16_t h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  const std::uint32_t x = exact::bits_of(f);
  std::uint32_t u = x & 0x7fffffffu;
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  std::uint32_t result, remainder;
  if (u >= 0x7f800000u) {
    remainder = 0u;
    result = (u == 0x7f800000u) ? (sign | 0x7c00u) : 0x7fffu;
  } else if (u > 0x477fefffu) {  // rounds to Inf
    remainder = 0x80000000u;
    result = sign | 0x7bffu;
  } else if (u >= 0x38800000u) {  // normal FP16
    remainder = u << 19;
    u -= 0x38000000u;
    result = sign | (u >> 13);
  } else if (u < 0x33000001u) {  // rounds to +-0
    remainder = u;
    result = sign;
  } else {  // subnormal FP16
    const std::uint32_t exponent = u >> 23;
    const std::uint32_t shift = 0x7eu - exponent;
    const std::uint32_t mantissa = (u & 0x7fffffu) | 0x800000u;
    remainder = mantissa << (32u - shift);
    result = (sign | (mantissa >> shift)) & 0xffffu;
  }
  if (remainder > 0x80000000u || (remainder == 0x80000000u && (result & 1u))) ++result;
  return static_cast<std::uint16_t>(result);
#endif
}

/// FP16 bits -> FP32, exact (on the device, one instruction).
RANDNLA_HD float half_bits_to_float(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#else
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return exact::float_of(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) return exact::float_of(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0) return exact::float_of(sign);
  int e = 113;  // normalise the subnormal
  while (!(mantissa & 0x400u)) {
    mantissa <<= 1;
    --e;
  }
  return exact::float_of(sign | (static_cast<std::uint32_t>(e) << 23) | ((mantissa & 0x3ffu) << 13));
#endif
}

RANDNLA_HD fp16 to_fp16(float x) { return fp16{float_to_half_bits(x)}; }
RANDNLA_HD float to_float(fp16 h) { return half_bits_to_float(h.bits); }

/// FP32 -> TF32 (10 explicit mantissa bits), round to nearest with ties away from zero, as
/// cvt.rna.tf32.f32; returned as an FP32 value whose low 13 bits are zero. Inf and NaN pass.
RANDNLA_HD float round_to_tf32(float x) {
  const std::uint32_t u = exact::bits_of(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;
  return exact::float_of((u + 0x1000u) & 0xffffe000u);
}

/// 2^e as float for e in [-126, 127].
RANDNLA_HD float exp2i(int e) { return exact::float_of(static_cast<std::uint32_t>(e + 127) << 23); }

constexpr float kSplitShift = 2048.0f;        ///< 2^11, the lo scaling of both splits
constexpr float kSplitShiftInverse = 1.0f / 2048.0f;

/// hi of a split: like to_fp16 / round_to_tf32, but what would round to +-Inf (an infinity, or a
/// finite value beyond the format's range) becomes the largest finite value of that sign, so that
/// the rest x - hi carries the infinity into lo. An infinite hi would give the cross term
/// hi_a * lo_b = Inf * 0 = NaN wherever the other operand is exact in the format (lo_b = 0), where
/// SGEMM gives +-Inf; this way every product term is what SGEMM's x * y is (Inf, or NaN for Inf * 0).
RANDNLA_HD fp16 to_fp16_saturating(float x) {
  const std::uint16_t h = float_to_half_bits(x);
  return fp16{static_cast<std::uint16_t>((h & 0x7fffu) == 0x7c00u ? (h & 0x8000u) | 0x7bffu : h)};
}
RANDNLA_HD float round_to_tf32_saturating(float x) {
  const float r = round_to_tf32(x);
  const std::uint32_t u = exact::bits_of(r);
  return (u & 0x7fffffffu) == 0x7f800000u ? exact::float_of((u & 0x80000000u) | 0x7f7fe000u) : r;
}

/// halfhalf split of x * 2^scale_exponent (the power-of-two scaling is exact): lo holds the rest
/// times lo_scale, 2^11 in the papers' scheme (lo stays clear of FP16's subnormals), 1 where lo
/// shares hi's accumulator (the packed operand of the sm_90 kernel). For a finite x in range,
/// hi + lo / lo_scale = x to 22 bits; an infinite x gives the largest finite hi and an infinite
/// lo (see to_fp16_saturating), a NaN gives NaN in both, so Inf and NaN propagate as in SGEMM.
RANDNLA_HD void split_halfhalf(float x, int scale_exponent, fp16& hi, fp16& lo, float lo_scale = kSplitShift) {
  const float xs = exact::mul(x, exp2i(scale_exponent));
  hi = to_fp16_saturating(xs);
  lo = to_fp16(exact::mul(exact::sub(xs, to_float(hi)), lo_scale));
}

/// tf32tf32 split of x (TF32 has FP32's exponent range: no scaling needed); lo_scale and the
/// non-finite values as above.
RANDNLA_HD void split_tf32(float x, float& hi, float& lo, float lo_scale = kSplitShift) {
  hi = round_to_tf32_saturating(x);
  lo = round_to_tf32(exact::mul(exact::sub(x, hi), lo_scale));
}

/// Which Tensor Core format a product runs on.
enum class TensorCore {
  FP16,  ///< FP16 operands with power-of-two scaling of each split operand into FP16 range
  TF32,  ///< TF32 operands: FP32's whole exponent range, half FP16's Tensor Core rate
  Auto   ///< FP16 when the exponent histograms say nothing is lost, else TF32 (ExponentHistogram);
         ///< the sm_90 kernel scales its streamed operand per row and K slice, so only the other counts
};

inline const EnumNames<TensorCore>& names_of(TensorCore) {
  static const EnumNames<TensorCore> names{{TensorCore::FP16, "fp16"}, {TensorCore::TF32, "tf32"}, {TensorCore::Auto, "auto"}};
  return names;
}

/// Number of FP32 biased-exponent classes: 0 (zero, subnormal) .. 255 (Inf, NaN).
constexpr int kExponentBins = 256;

/// How an FP32 operand enters a Tensor Core product.
struct OperandPlan {
  bool use_fp16 = false;       ///< halfhalf split (else tf32tf32)
  int scale_exponent = 0;      ///< halfhalf: the operand is multiplied by 2^scale_exponent before splitting
};

/// Exponent statistics of a matrix: counts of its non-zero elements per FP32 biased exponent
/// (bin 0 holds FP32 subnormals, bin 255 Inf and NaN; exact zeros are not counted).
/// Derived: the largest exponent present and how many elements lie below a threshold.
struct ExponentHistogram {
  std::int64_t count[kExponentBins] = {};

  RANDNLA_HD int max_biased_exponent() const {  // of finite values; -1 when all are zero
    for (int b = kExponentBins - 2; b >= 0; --b)
      if (count[b] != 0) return b;
    return -1;
  }
  RANDNLA_HD std::int64_t nonfinite() const { return count[kExponentBins - 1]; }
  /// Finite non-zero elements whose biased exponent is below `biased`.
  RANDNLA_HD std::int64_t count_below(int biased) const {
    std::int64_t n = 0;
    for (int b = 0; b < biased && b < kExponentBins - 1; ++b) n += count[b];
    return n;
  }
};

RANDNLA_HD int biased_exponent(float x) { return static_cast<int>((exact::bits_of(x) >> 23) & 0xffu); }

/// True when rounding every finite element to FP16 cannot overflow: none has |x| >= 2^15
/// (a conservative bound; FP16's largest is 65504). Inf and NaN pass through unchanged.
RANDNLA_HD bool fits_fp16_unscaled(const ExponentHistogram& h) {
  return h.count_below(kExponentBins - 1) - h.count_below(127 + 15) == 0;
}

/// FP16 scaling moves the largest element's exponent to this (|x| < 2^15 <= 65504 after scaling).
constexpr int kFp16TargetExponent = 14;
/// After scaling, an element below 2^(kFp16TargetExponent - kFp16Span) = 2^-24 is an FP16
/// subnormal or zero in both hi and lo: it keeps none of its relative accuracy.
constexpr int kFp16Span = 38;

/// Chooses FP16 (with scaling) or TF32 for one operand from its histogram.
/// TF32 when requested or when the operand holds Inf/NaN (IEEE propagation over FP32's range).
/// Otherwise the operand is scaled by 2^s, s = 14 - max exponent (|s| <= 126 so that 2^-s is a
/// normal float), and FP16 is used when requested, or under Auto when no element falls below
/// 2^-24 after scaling. Exactly zero matrices use FP16 unscaled.
RANDNLA_HD OperandPlan plan_operand(const ExponentHistogram& h, TensorCore requested) {
  OperandPlan p;
  if (requested == TensorCore::TF32 || h.nonfinite() != 0) return p;
  p.use_fp16 = true;
  const int top = h.max_biased_exponent();
  if (top < 0) return p;
  int s = kFp16TargetExponent - (top - 127);
  s = s > 126 ? 126 : (s < -126 ? -126 : s);
  p.scale_exponent = s;
  const int lost_below = kFp16TargetExponent - kFp16Span + 127 - s;
  p.use_fp16 = requested == TensorCore::FP16 || h.count_below(lost_below) == 0;
  return p;
}

}  // namespace randnla
