// The operations CholeskyQR alone needs, behind their own small interface: the backends implement
// it beside their other code (backends/portable/cholesky_qr, backends/cuda/cholesky_qr) and register
// it on their device context, where the orthonormaliser finds it (DeviceContext::ops).
#pragma once

#include <cmath>
#include <string>

#include "randnla/backend.hpp"

namespace randnla {

/// g^{-1/2} for a positive finite diagonal entry g of a Gram matrix, 1 otherwise.
RANDNLA_HD double equilibration_factor(double g) {
  constexpr double kLargestDouble = 1.7976931348623157e308;
  return g > 0.0 && g <= kLargestDouble ? 1.0 / std::sqrt(g) : 1.0;
}

class CholeskyQrOps {
 public:
  static constexpr const char* kName = "CholeskyQrOps";
  explicit CholeskyQrOps(MemorySpace space) : space_(space) {}
  virtual ~CholeskyQrOps() = default;

  /// Symmetric equilibration of a Gram matrix G (n x n, FP64): d (n x 1) := diag(G)^{-1/2},
  /// G := D G D, so that G's diagonal is 1 (van der Sluis). d_i = 1 where G_ii is not positive
  /// and finite: that row and column are left as they are.
  void equilibrate(MatrixView<double> g, MatrixView<double> d) {
    require_space(g, space_, "G"), require_space(d, space_, "d");
    require_eig_shapes(g, d);
    if (g.rows() > 0) do_equilibrate(g, d);
  }
  /// dst := src diag(s), rounded once to FP32: src m x n FP64, s n x 1 FP64, dst m x n FP32.
  void convert_scaled(MatrixView<const double> src, MatrixView<const double> s, MatrixView<float> dst) {
    require_space(src, space_, "src"), require_space(s, space_, "s"), require_space(dst, space_, "dst");
    require_shape(dst, src.rows(), src.cols(), "dst");
    require_shape(s, src.cols(), 1, "s");
    if (!dst.empty()) do_convert_scaled(src, s, dst);
  }

 protected:
  virtual void do_equilibrate(MatrixView<double> g, MatrixView<double> d) = 0;
  virtual void do_convert_scaled(MatrixView<const double> src, MatrixView<const double> s, MatrixView<float> dst) = 0;

 private:
  MemorySpace space_;
};

}  // namespace randnla
