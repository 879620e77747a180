// The element-wise family: scalings, sums and transposes of matrices in the context's memory.
#pragma once

#include <string>

#include "randnla/context.hpp"

namespace randnla {

/// Throws InvalidArgument unless s holds one factor per row of X (by_row) or per column.
template <class S, class X>
void require_scale_shape(const MatrixView<S>& s, const MatrixView<X>& x, bool by_row) {
  const index_t lines = by_row ? x.rows() : x.cols();
  require(s.size() == lines, "s.size", s.size(), std::string("must equal X.") + (by_row ? "rows" : "cols") + " = " +
                                                     std::to_string(lines));
}

/// Element-wise operations. Each public member checks its arguments once (InvalidArgument naming
/// the parameter and value) and handles the empty cases, then calls the backend's unchecked hook.
class ElementwiseOps : public virtual DeviceContext {
 public:
  /// dst := src^T.
  void transpose(MatrixView<const float> src, MatrixView<float> dst) {
    mine(src, "src"), mine(dst, "dst");
    require_shape(dst, src.cols(), src.rows(), "dst");
    do_transpose(src, dst);
  }
  /// X := alpha X (BLAS scal; alpha = 0 writes zeros, whatever X held).
  void scale(float alpha, MatrixView<float> x) { mine(x, "X"), x.empty() ? void() : do_scale(alpha, x); }
  void scale(double alpha, MatrixView<double> x) { mine(x, "X"), x.empty() ? void() : do_scale(alpha, x); }
  /// Y := alpha X + beta Y (BLAS axpby; beta = 0 ignores what Y held), X and Y of one shape.
  void add(float alpha, MatrixView<const float> x, float beta, MatrixView<float> y) {
    mine(x, "X"), mine(y, "Y");
    require_shape(y, x.rows(), x.cols(), "Y");
    if (!y.empty()) do_add(alpha, x, beta, y);
  }
  /// X(:, j) *= s[j] for each column j; s is a vector of length X.cols.
  void scale_columns(MatrixView<const float> s, MatrixView<float> x) { checked_scale(s, x, false); }
  void scale_columns(MatrixView<const double> s, MatrixView<double> x) { checked_scale(s, x, false); }
  /// X(i, :) *= s[i] for each row i.
  void scale_rows(MatrixView<const float> s, MatrixView<float> x) { checked_scale(s, x, true); }
  void scale_rows(MatrixView<const double> s, MatrixView<double> x) { checked_scale(s, x, true); }
  /// G(i, i) += shift for every i (G square, FP64): a shift, or with scale(0, G) an identity.
  void add_to_diagonal(MatrixView<double> g, double shift) {
    mine(g, "G");
    require_square(g, "G");
    do_add_to_diagonal(g, shift);
  }

 protected:
  virtual void do_transpose(MatrixView<const float> src, MatrixView<float> dst) = 0;
  virtual void do_scale(float alpha, MatrixView<float> x) = 0;
  virtual void do_scale(double alpha, MatrixView<double> x) = 0;
  virtual void do_add(float alpha, MatrixView<const float> x, float beta, MatrixView<float> y) = 0;
  virtual void do_scale(MatrixView<const float> s, MatrixView<float> x, bool by_row) = 0;
  virtual void do_scale(MatrixView<const double> s, MatrixView<double> x, bool by_row) = 0;
  virtual void do_add_to_diagonal(MatrixView<double> g, double shift) = 0;

 private:
  template <class T>
  void checked_scale(MatrixView<const T> s, MatrixView<T> x, bool by_row) {
    mine(s, "s"), mine(x, "X");
    require_scale_shape(s, x, by_row);
    if (!x.empty()) do_scale(s, x, by_row);
  }
};

}  // namespace randnla
