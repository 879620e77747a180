// The operations CholeskyQR alone needs, behind their own small interface: the backends implement
// it beside their other code (backends/portable/cholesky_qr, backends/cuda/cholesky_qr) and register
// it on their device context, where the orthonormaliser finds it (DeviceContext::ops).
#pragma once

#include <cmath>
#include <functional>
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

  /// Q := Y R: Y m x n, R n x n upper triangular (its strict lower triangle is not read), Q m x n
  /// (not overlapping Y), all FP64: CholeskyQR's Y R^{-1}, at half a GEMM's flops (BLAS trmm on
  /// the GPU: 0.81 against 1.21 ms for the GEMM at 35840 x 1024 on the H100).
  void multiply_upper_triangular(MatrixView<const double> y, MatrixView<const double> r, MatrixView<double> q) {
    require_space(y, space_, "Y"), require_space(r, space_, "R"), require_space(q, space_, "Q");
    require_shape(r, y.cols(), y.cols(), "R");
    require_shape(q, y.rows(), y.cols(), "Q");
    if (!q.empty()) do_multiply_upper_triangular(y, r, q);
  }

  /// The most columns fused_cholesky_qr takes; 0 where the backend has no fused path.
  virtual index_t fused_max_columns() const { return 0; }
  /// Whether the fused path is this backend's faster one for an m x n Y (its measurements decide).
  virtual bool fused_preferred(index_t /*m*/, index_t /*n*/) const { return false; }
  /// FP64 elements of the workspace fused_cholesky_qr needs for an m x n Y.
  virtual index_t fused_workspace(index_t /*m*/, index_t /*n*/) const { return 0; }
  /// CholeskyQR of Y (m x n FP32, m >= n, 1 <= n <= fused_max_columns()) in place, without an FP64
  /// copy of Y: each pass sums G = Y^T Y in FP64, factors D G D (D = diag(G)^{-1/2}) in FP64 and
  /// writes Y := Y R^{-1} with FP64 arithmetic, rounded to FP32. passes = 2 (CholeskyQR2) or 0
  /// (Auto: at most two, each decided by the Gram sums of Y as it stands, which are computed
  /// anyway: none more where G is within 2^-24 (1 + 2 sqrt(n)) of I in the Frobenius norm, Y then
  /// orthonormal to FP32 rounding: the FP64 path's 2^-24 plus what rounding Y to FP32 adds to G;
  /// Y := Y D alone where D G D is). Stricter than the FP64 path: a second pass
  /// also breaks down where D G D is farther than 1/2 from I (the first left Y too ill conditioned
  /// for the second to be accurate). Returns the Cholesky passes run (0: Y's columns were
  /// orthogonal, at most scaled), or -1 on a breakdown, Y then as given or as
  /// the first pass left it (Y R_1^{-1}, the same span). Source: Fukaya, Nakatsukasa, Yanagisawa
  /// & Yamamoto (2014), CholeskyQR2, Algorithm 2. `work`: fused_workspace(m, n) x 1, FP64.
  int fused_cholesky_qr(MatrixView<float> y, int passes, MatrixView<double> work) {
    return queue_fused_cholesky_qr(y, passes, work)();
  }
  /// fused_cholesky_qr queued without waiting for the device: the returned function gives its
  /// result, waiting for the device then (Y and `work` must stay allocated until the work is done;
  /// frees queued after it are). Throws as fused_cholesky_qr.
  std::function<int()> queue_fused_cholesky_qr(MatrixView<float> y, int passes, MatrixView<double> work) {
    require_space(y, space_, "Y"), require_space(work, space_, "work");
    require(y.cols() >= 1 && y.cols() <= fused_max_columns(), "Y.cols", y.cols(),
            "must lie in 1.." + std::to_string(fused_max_columns()));
    require(y.rows() >= y.cols(), "Y.rows", y.rows(), "must be >= Y.cols = " + std::to_string(y.cols()));
    require(passes == 0 || passes == 2, "passes", passes, "must be 0 (Auto) or 2");
    require_shape(work, fused_workspace(y.rows(), y.cols()), 1, "work");
    return do_queue_fused_cholesky_qr(y, passes, work);
  }

 protected:
  virtual std::function<int()> do_queue_fused_cholesky_qr(MatrixView<float>, int, MatrixView<double>) {
    throw UnsupportedConfiguration("fused CholeskyQR: not on this backend");
  }
  virtual void do_equilibrate(MatrixView<double> g, MatrixView<double> d) = 0;
  virtual void do_multiply_upper_triangular(MatrixView<const double> y, MatrixView<const double> r,
                                            MatrixView<double> q) = 0;
  virtual void do_convert_scaled(MatrixView<const double> src, MatrixView<const double> s, MatrixView<float> dst) = 0;

 private:
  MemorySpace space_;
};

}  // namespace randnla
