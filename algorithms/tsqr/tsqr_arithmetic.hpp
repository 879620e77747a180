// The arithmetic of the Tensor Core TSQR variants (Ootomo & Yokota, "TSQR on TensorCores", SC
// poster; their tsqr-gpu): each Householder update is a product whose operands are rounded as the
// Tensor Cores take them, with FP32 sums. One definition for every backend that runs them.
#pragma once

#include "randnla/enum_names.hpp"
#include "randnla/precision.hpp"

namespace randnla {

enum class TsqrArithmetic {
  FP32,         ///< FP32 products, no Tensor Cores
  FP16Refined,  ///< FP16 Tensor Cores with refinement: a b = ah bh + (al bh + ah bl) 2^-11, x = xh + xl 2^-11
  TF32,         ///< TF32 Tensor Cores: operands rounded to TF32 (10 mantissa bits)
  FP16,         ///< FP16 Tensor Cores: operands rounded to FP16, no refinement
};

inline const EnumNames<TsqrArithmetic>& names_of(TsqrArithmetic) {
  static const EnumNames<TsqrArithmetic> names{{TsqrArithmetic::FP32, "fp32"},
                                               {TsqrArithmetic::FP16Refined, "fp16-refined"},
                                               {TsqrArithmetic::TF32, "tf32"},
                                               {TsqrArithmetic::FP16, "fp16"}};
  return names;
}

/// sum_k x_k y_k in `arithmetic`: the operands rounded (and split) as the Tensor Cores take them,
/// their products (exact in FP32, but for FP32's own) summed in FP32 in order of k, the same bits
/// on host and device; with refinement the correction terms in a sum of their own,
/// added once at the end (as TCEC-SGEMM keeps two accumulators). The operands must lie within
/// FP16's range for the FP16 arithmetics (callers scale by powers of two).
class TsqrDot {
 public:
  RANDNLA_HD explicit TsqrDot(TsqrArithmetic arithmetic) : arithmetic_(arithmetic) {}
  RANDNLA_HD void add(float x, float y) {
    switch (arithmetic_) {
      case TsqrArithmetic::FP32: main_ = exact::add(main_, exact::mul(x, y)); break;
      case TsqrArithmetic::TF32: main_ = exact::add(main_, round_to_tf32(x) * round_to_tf32(y)); break;
      case TsqrArithmetic::FP16: main_ = exact::add(main_, to_float(to_fp16(x)) * to_float(to_fp16(y))); break;
      case TsqrArithmetic::FP16Refined: {
        fp16 xh, xl, yh, yl;
        split_halfhalf(x, 0, xh, xl);
        split_halfhalf(y, 0, yh, yl);
        main_ = exact::add(main_, to_float(xh) * to_float(yh));
        correction_ = exact::add(correction_, to_float(xl) * to_float(yh));
        correction_ = exact::add(correction_, to_float(xh) * to_float(yl));
        break;
      }
    }
  }
  RANDNLA_HD float value() const { return exact::add(main_, correction_ * kSplitShiftInverse); }

 private:
  TsqrArithmetic arithmetic_;
  float main_ = 0.0f, correction_ = 0.0f;
};

/// LAPACK's slarfg for a column with head alpha and tail sum of squares `tail`: H = I - tau v v^T
/// maps it to beta e_1, v = (1, tail / (alpha - beta)); tau = 0 (H = I) where the tail is zero.
struct Reflector {
  float beta, tau, to_v;  ///< to_v: the factor that turns the tail into v's
};
RANDNLA_HD Reflector householder(float alpha, float tail) {
  if (tail == 0.0f) return {alpha, 0.0f, 0.0f};
  const float norm = exact::sqrt(alpha * alpha + tail), beta = alpha >= 0.0f ? -norm : norm;
  return {beta, (beta - alpha) / beta, 1.0f / (alpha - beta)};
}

/// H(i, k) = delta_ik - tau v_i v_k.
RANDNLA_HD float reflector_entry(bool diagonal, float tau, float vi, float vk) {
  return (diagonal ? 1.0f : 0.0f) - exact::mul(exact::mul(tau, vi), vk);
}

/// 2^-e for the block whose largest column norm is `norm`, e bringing it into [1/2, 1): the power
/// of two the Tensor Core variants scale a block by (1 where the norm is zero or not finite).
RANDNLA_HD float block_scale(float norm) {
  if (!(norm > 0.0f && norm <= 3.4028234e38f)) return 1.0f;
  const int e = static_cast<int>((exact::bits_of(norm) >> 23) & 0xffu) - 126;  // norm in [2^(e-1), 2^e)
  return exp2i(e < 127 ? -e : -127);
}

}  // namespace randnla
