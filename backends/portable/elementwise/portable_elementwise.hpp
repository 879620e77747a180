// The portable element-wise family: Kokkos loops over (i, j), i fastest.
#pragma once

#include "portable/context/portable_context.hpp"
#include "randnla/ops/elementwise.hpp"

namespace randnla {
namespace portable {

template <class Exec>
void transpose(const Exec& exec, MatrixView<const float> s, MatrixView<float> d) {
  for_each_element(exec, s.rows(), s.cols(), KOKKOS_LAMBDA(index_t i, index_t j) { d(j, i) = s(i, j); });
}

/// X(i, j) *= s[i] (by_row) or s[j]; s is a vector (n x 1 or 1 x n) of contiguous elements.
template <class Exec, class T>
void scale(const Exec& exec, MatrixView<const T> s, MatrixView<T> x, bool by_row) {
  const T* sv = s.data();
  for_each_element(exec, x.rows(), x.cols(), KOKKOS_LAMBDA(index_t i, index_t j) { x(i, j) *= sv[by_row ? i : j]; });
}

template <class Exec>
void add_to_diagonal(const Exec& exec, MatrixView<double> g, double shift) {
  Kokkos::parallel_for("randnla::portable::add_to_diagonal", Policy<Exec>(exec, 0, g.rows()),
                       KOKKOS_LAMBDA(index_t i) { g(i, i) += shift; });
}

/// Y := alpha X + beta Y.
template <class Exec>
void add(const Exec& exec, float alpha, MatrixView<const float> x, float beta, MatrixView<float> y) {
  for_each_element(exec, y.rows(), y.cols(), KOKKOS_LAMBDA(index_t i, index_t j) {
    y(i, j) = alpha * x(i, j) + (beta == 0.0f ? 0.0f : beta * y(i, j));
  });
}

/// C := beta C (BLAS's k = 0 case; beta = 0 writes zeros, whatever C held).
template <class Exec, class T>
void scale_all(const Exec& exec, T beta, MatrixView<T> c) {
  for_each_element(exec, c.rows(), c.cols(),
                   KOKKOS_LAMBDA(index_t i, index_t j) { c(i, j) = beta == T(0) ? T(0) : beta * c(i, j); });
}

template <class Exec>
class PortableElementwise : public virtual ElementwiseOps, public virtual PortableContext<Exec> {
 public:
  using PortableContext<Exec>::exec_;

  void do_transpose(MatrixView<const float> s, MatrixView<float> d) override { portable::transpose(exec_, s, d); }
  void do_scale(float alpha, MatrixView<float> x) override { portable::scale_all(exec_, alpha, x); }
  void do_scale(double alpha, MatrixView<double> x) override { portable::scale_all(exec_, alpha, x); }
  void do_add(float alpha, MatrixView<const float> x, float beta, MatrixView<float> y) override {
    portable::add(exec_, alpha, x, beta, y);
  }
  void do_scale(MatrixView<const float> s, MatrixView<float> x, bool by_row) override { portable::scale(exec_, s, x, by_row); }
  void do_scale(MatrixView<const double> s, MatrixView<double> x, bool by_row) override { portable::scale(exec_, s, x, by_row); }
  void do_add_to_diagonal(MatrixView<double> g, double shift) override { portable::add_to_diagonal(exec_, g, shift); }
};

}  // namespace portable
}  // namespace randnla
