// The conversion family: a matrix in another precision, rounded to nearest.
#pragma once

#include <cmath>

#include "randnla/context.hpp"
#include "randnla/precision.hpp"

namespace randnla {

/// Conversions between FP64, FP32 and FP16 matrices of one shape in the context's memory.
/// Each public member checks its arguments once (InvalidArgument naming the parameter and value),
/// then calls the backend's unchecked hook.
class ConversionOps : public virtual DeviceContext {
 public:
  void convert(MatrixView<const float> src, MatrixView<double> dst) { same_shape(src, dst), do_convert(src, dst); }
  void convert(MatrixView<const double> src, MatrixView<float> dst) { same_shape(src, dst), do_convert(src, dst); }
  /// Rounded to nearest; beyond FP16's range -> +-Inf (callers that cannot accept that scale first).
  void convert(MatrixView<const float> src, MatrixView<fp16> dst) { same_shape(src, dst), do_convert(src, dst); }
  void convert(MatrixView<const fp16> src, MatrixView<float> dst) { same_shape(src, dst), do_convert(src, dst); }
  /// dst := 2^exponent src rounded to FP16 (to nearest; the power of two is exact in FP32, and
  /// what leaves FP16's range goes to +-Inf or below its normal range as convert() has it),
  /// returning src's own exponent histogram, unscaled (blocks, as ReductionOps::exponent_histogram
  /// does): one pass over src where the backend fuses the two (the CUDA backend), so that a check
  /// of src's range, or scaling it into FP16's, costs no other pass over a large operand. Throws
  /// InvalidArgument for an exponent outside [-126, 127].
  ExponentHistogram convert_measured(MatrixView<const float> src, MatrixView<fp16> dst, int exponent = 0) {
    same_shape(src, dst);
    require(exponent >= -126 && exponent <= 127, "exponent", exponent, "must be in [-126, 127]");
    return src.empty() ? ExponentHistogram{} : do_convert_measured(src, dst, std::ldexp(1.0f, exponent));
  }

 protected:
  virtual void do_convert(MatrixView<const float> src, MatrixView<double> dst) = 0;
  virtual void do_convert(MatrixView<const double> src, MatrixView<float> dst) = 0;
  virtual void do_convert(MatrixView<const float> src, MatrixView<fp16> dst) = 0;
  virtual void do_convert(MatrixView<const fp16> src, MatrixView<float> dst) = 0;
  /// scale: a power of two.
  virtual ExponentHistogram do_convert_measured(MatrixView<const float> src, MatrixView<fp16> dst, float scale) = 0;

 private:
  template <class S, class D>
  void same_shape(const MatrixView<S>& s, const MatrixView<D>& d) const {
    mine(s, "src"), mine(d, "dst");
    require_shape(d, s.rows(), s.cols(), "dst");
  }
};

}  // namespace randnla
