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

}  // namespace randnla
