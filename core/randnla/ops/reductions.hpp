// The reduction family: one number (or a histogram) from a whole matrix; each blocks to return it.
#pragma once

#include "randnla/context.hpp"
#include "randnla/precision.hpp"

namespace randnla {

/// Reductions over a matrix in the context's memory. Each public member checks its argument once
/// and handles the empty matrix, then calls the backend's unchecked hook.
class ReductionOps : public virtual DeviceContext {
 public:
  /// Counts of X's non-zero elements per FP32 exponent (one pass; blocks to return it).
  ExponentHistogram exponent_histogram(MatrixView<const float> x) {
    mine(x, "X");
    return x.empty() ? ExponentHistogram{} : do_exponent_histogram(x);
  }
  /// ||X||_F, accumulated in FP64 (blocks).
  double frobenius_norm(MatrixView<const float> x) { return mine(x, "X"), x.empty() ? 0.0 : do_frobenius_norm(x); }
  double frobenius_norm(MatrixView<const double> x) { return mine(x, "X"), x.empty() ? 0.0 : do_frobenius_norm(x); }

 protected:
  virtual ExponentHistogram do_exponent_histogram(MatrixView<const float> x) = 0;
  virtual double do_frobenius_norm(MatrixView<const float> x) = 0;
  virtual double do_frobenius_norm(MatrixView<const double> x) = 0;
};

}  // namespace randnla
