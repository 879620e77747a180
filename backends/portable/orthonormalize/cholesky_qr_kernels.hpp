// CholeskyQR's own operations (algorithms/orthonormalize/cholesky_qr_ops.hpp) as Kokkos kernels on
// the portable backend's execution space.
#pragma once

#include "randnla/orthonormalize/cholesky_qr_ops.hpp"
#include "portable/kernels.hpp"

namespace randnla {
namespace portable {

template <class Exec>
void equilibrate(const Exec& exec, MatrixView<double> g, MatrixView<double> d) {
  Kokkos::parallel_for("randnla::portable::equilibration_factors", Policy<Exec>(exec, 0, g.rows()),
                       KOKKOS_LAMBDA(index_t i) { d(i, 0) = equilibration_factor(g(i, i)); });
  for_each_element(exec, g.rows(), g.cols(), KOKKOS_LAMBDA(index_t i, index_t j) { g(i, j) *= d(i, 0) * d(j, 0); });
}

template <class Exec>
void convert_scaled(const Exec& exec, MatrixView<const double> src, MatrixView<const double> s, MatrixView<float> d) {
  for_each_element(exec, src.rows(), src.cols(),
                   KOKKOS_LAMBDA(index_t i, index_t j) { d(i, j) = static_cast<float>(src(i, j) * s(j, 0)); });
}

/// Q := Y R, R upper triangular (its strictly lower part not read): Y copied into Q, then trmm,
/// which is the vendor BLAS's dtrmm where Kokkos Kernels has the TPL (a loop per element of Q ran
/// at about 1 GFLOP/s on the host: most of the sparse RSVD's time there).
template <class Exec>
void multiply_upper_triangular(const Exec& exec, MatrixView<const double> y, MatrixView<const double> r,
                               MatrixView<double> q) {
  for_each_element(exec, q.rows(), q.cols(), KOKKOS_LAMBDA(index_t i, index_t j) { q(i, j) = y(i, j); });
  compat::trmm(exec, "R", "U", "N", "N", 1.0, kokkos_view<Exec>(r), kokkos_view<Exec>(q));
}

template <class Exec>
class CholeskyQrKernels final : public CholeskyQrOps {
 public:
  CholeskyQrKernels(const Exec& exec, MemorySpace space) : CholeskyQrOps(space), exec_(exec) {}

  // Public: nvcc takes no extended lambda in a protected member function.
  void do_equilibrate(MatrixView<double> g, MatrixView<double> d) override { portable::equilibrate(exec_, g, d); }
  void do_convert_scaled(MatrixView<const double> src, MatrixView<const double> s, MatrixView<float> d) override {
    portable::convert_scaled(exec_, src, s, d);
  }
  void do_multiply_upper_triangular(MatrixView<const double> y, MatrixView<const double> r,
                                    MatrixView<double> q) override {
    portable::multiply_upper_triangular(exec_, y, r, q);
  }

 private:
  Exec exec_;
};

}  // namespace portable
}  // namespace randnla
