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

  /// The largest n inverse_cholesky_factor takes; 0 where the backend has no kernel for it (the
  /// orthonormaliser then runs the backend's potrf and trsm).
  virtual index_t inverse_cholesky_max_order() const { return 0; }
  /// FP64 elements of the workspace inverse_cholesky_factor needs for an n x n G.
  virtual index_t inverse_cholesky_workspace(index_t /*n*/) const { return 0; }
  /// rinv := R^{-1}, R the upper triangular Cholesky factor of G = R^T R with a positive diagonal:
  /// G n x n FP64 (its lower triangle read, not written), rinv n x n FP64 (its strict lower
  /// triangle zeroed), 1 <= n <= inverse_cholesky_max_order(). Returns 0, or j + 1 where the
  /// j-th pivot (0-based) is not positive and finite (a breakdown; rinv is then undefined).
  /// `work`: inverse_cholesky_workspace(n) x 1, FP64. Waits for the device.
  int inverse_cholesky_factor(MatrixView<const double> g, MatrixView<double> rinv, MatrixView<double> work) {
    return queue_inverse_cholesky_factor(g, rinv, work)();
  }
  /// inverse_cholesky_factor queued without waiting: the returned function gives its result,
  /// waiting for the device then (the views must stay allocated until the work is done).
  std::function<int()> queue_inverse_cholesky_factor(MatrixView<const double> g, MatrixView<double> rinv,
                                                     MatrixView<double> work) {
    require_space(g, space_, "G"), require_space(rinv, space_, "R^-1"), require_space(work, space_, "work");
    require(g.rows() >= 1 && g.rows() <= inverse_cholesky_max_order(), "G.rows", g.rows(),
            "must lie in 1.." + std::to_string(inverse_cholesky_max_order()));
    require_shape(g, g.rows(), g.rows(), "G");
    require_shape(rinv, g.rows(), g.rows(), "R^-1");
    require_shape(work, inverse_cholesky_workspace(g.rows()), 1, "work");
    return do_queue_inverse_cholesky_factor(g, rinv, work);
  }

  /// Whether orthonormalize's Auto runs the Tensor Core CholeskyQR (FP32-accurate split products
  /// for the Gram matrix and Y R^{-1}, orthogonality_probe checking each pass) on this backend for
  /// an m x n Y: its measurements decide.
  virtual bool split_preferred(index_t /*m*/, index_t /*n*/) const { return false; }
  /// Whether split_gram and split_multiply_upper_triangular read Y where it lies; false where each
  /// would first copy it (the CUDA backend's streamed operand needs 16-byte-aligned columns), so
  /// that a caller making several of them copies Y once, into a Matrix::aligned buffer.
  virtual bool split_streams_in_place(MatrixView<const float> /*y*/) const { return true; }
  /// The lower triangle (the diagonal included) of G := Y^T Y as an FP32-accurate split product,
  /// the Gram matrix of split_preferred's CholeskyQR: Y m x n FP32, G n x n FP32 (not overlapping
  /// Y), as Backend::product's ProductPrecision::split_in(TensorCore::Auto) would give it (TCEC,
  /// Ootomo & Yokota 2022; FP16 or TF32 by Y's exponent range), at about the Tensor Core work of
  /// that triangle alone. G's strict upper triangle is unspecified on return. Where split_preferred.
  void split_gram(MatrixView<const float> y, MatrixView<float> g) {
    require_space(y, space_, "Y"), require_space(g, space_, "G");
    require_shape(g, y.cols(), y.cols(), "G");
    if (!g.empty()) do_split_gram(y, g);
  }
  /// Q := Y R as an FP32-accurate split product (as split_gram's), the product of
  /// split_preferred's CholeskyQR: Y m x n FP32, R n x n FP32 upper triangular, its strict lower
  /// triangle zero (as inverse_cholesky_factor leaves R^{-1}: the product relies on it), Q m x n
  /// FP32 (not overlapping Y), at about the Tensor Core work of R's nonzero tiles.
  void split_multiply_upper_triangular(MatrixView<const float> y, MatrixView<const float> r, MatrixView<float> q) {
    require_space(y, space_, "Y"), require_space(r, space_, "R"), require_space(q, space_, "Q");
    require_shape(r, y.cols(), y.cols(), "R");
    require_shape(q, y.rows(), y.cols(), "Q");
    if (!q.empty()) do_split_multiply_upper_triangular(y, r, q);
  }
  /// FP64 elements of the workspace orthogonality_probe needs for an m x n W and s probes.
  virtual index_t orthogonality_probe_workspace(index_t /*m*/, index_t /*n*/, index_t /*s*/) const { return 0; }
  /// ||W^T (W Omega) - Omega||_F^2 with every product summed in FP64: W m x n FP32, Omega n x s
  /// FP32 (1 <= s <= 8; Gaussian probes make it an estimate of ||W^T W - I||_F^2 times s:
  /// E ||E w||^2 = ||E||_F^2 for w ~ N(0, I), Hutchinson's estimator). With a non-empty `copy_to`
  /// (m x n FP32, not overlapping W), W is copied there on the way. `work`:
  /// orthogonality_probe_workspace(m, n, s) x 1, FP64. Waits for the device.
  double orthogonality_probe(MatrixView<const float> w, MatrixView<const float> omega, MatrixView<float> copy_to,
                             MatrixView<double> work) {
    require_space(w, space_, "W"), require_space(omega, space_, "Omega"), require_space(work, space_, "work");
    require(omega.cols() >= 1 && omega.cols() <= 8, "Omega.cols", omega.cols(), "must lie in 1..8");
    require_shape(omega, w.cols(), omega.cols(), "Omega");
    if (!copy_to.empty()) {
      require_space(copy_to, space_, "copy_to");
      require_shape(copy_to, w.rows(), w.cols(), "copy_to");
    }
    require_shape(work, orthogonality_probe_workspace(w.rows(), w.cols(), omega.cols()), 1, "work");
    return do_orthogonality_probe(w, omega, copy_to, work);
  }

  /// The most columns fused_cholesky_qr takes; 0 where the backend has no fused path.
  virtual index_t fused_max_columns() const { return 0; }
  /// Whether the fused path is this backend's faster one for an m x n Y (its measurements decide).
  virtual bool fused_preferred(index_t /*m*/, index_t /*n*/) const { return false; }
  /// FP64 elements of the workspace fused_cholesky_qr needs for an m x n Y.
  virtual index_t fused_workspace(index_t /*m*/, index_t /*n*/) const { return 0; }
  /// CholeskyQR of Y (m x n FP32, m >= n, 1 <= n <= fused_max_columns()) in place, without an FP64
  /// copy of Y: each pass sums G = Y^T Y in FP64, factors D G D (D = diag(G)^{-1/2}) in FP64 and
  /// writes Y := Y R^{-1} with FP64 arithmetic, rounded to FP32. passes = 1 (CholeskyQR), 2 (CholeskyQR2) or 0
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
    require(passes >= 0 && passes <= 2, "passes", passes, "must be 0 (Auto), 1 or 2");
    require_shape(work, fused_workspace(y.rows(), y.cols()), 1, "work");
    return do_queue_fused_cholesky_qr(y, passes, work);
  }

 protected:
  virtual std::function<int()> do_queue_fused_cholesky_qr(MatrixView<float>, int, MatrixView<double>) {
    throw UnsupportedConfiguration("fused CholeskyQR: not on this backend");
  }
  virtual void do_split_gram(MatrixView<const float>, MatrixView<float>) {
    throw UnsupportedConfiguration("split Gram matrix: not on this backend");
  }
  virtual void do_split_multiply_upper_triangular(MatrixView<const float>, MatrixView<const float>,
                                                  MatrixView<float>) {
    throw UnsupportedConfiguration("split triangular product: not on this backend");
  }
  virtual double do_orthogonality_probe(MatrixView<const float>, MatrixView<const float>, MatrixView<float>,
                                        MatrixView<double>) {
    throw UnsupportedConfiguration("orthogonality probe: not on this backend");
  }
  virtual std::function<int()> do_queue_inverse_cholesky_factor(MatrixView<const double>, MatrixView<double>,
                                                                MatrixView<double>) {
    throw UnsupportedConfiguration("inverse Cholesky factor: not on this backend");
  }
  virtual void do_equilibrate(MatrixView<double> g, MatrixView<double> d) = 0;
  virtual void do_multiply_upper_triangular(MatrixView<const double> y, MatrixView<const double> r,
                                            MatrixView<double> q) = 0;
  virtual void do_convert_scaled(MatrixView<const double> src, MatrixView<const double> s, MatrixView<float> dst) = 0;

 private:
  MemorySpace space_;
};

}  // namespace randnla
