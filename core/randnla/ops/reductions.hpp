// The reduction family: one number (or a histogram) from a whole matrix; each blocks to return it.
#pragma once

#include <vector>

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
  /// For each column of X (m x k), the sign (+1 or -1) of its entry of largest magnitude, the first
  /// one on ties (numpy's argmax of |x|, which scikit-learn's svd_flip takes); +1 for a zero
  /// column. One pass over X (blocks to return the k signs).
  std::vector<float> signs_of_largest(MatrixView<const float> x) {
    mine(x, "X");
    return x.empty() ? std::vector<float>(static_cast<std::size_t>(x.cols()), 1.0f) : do_signs_of_largest(x);
  }

 protected:
  virtual ExponentHistogram do_exponent_histogram(MatrixView<const float> x) = 0;
  virtual double do_frobenius_norm(MatrixView<const float> x) = 0;
  virtual double do_frobenius_norm(MatrixView<const double> x) = 0;
  virtual std::vector<float> do_signs_of_largest(MatrixView<const float> x) = 0;
};

}  // namespace randnla
