// The dense factorization family: Householder QR (FP32 and FP64), Cholesky, triangular solves and the
// symmetric eigensolver of FP64 Gram matrices, and the small SVDs (LAPACK on the host, cuSOLVER and
// the library's own kernels on CUDA).
#pragma once

#include <string>

#include "randnla/context.hpp"
#include "randnla/ops/factorization_types.hpp"
#include "randnla/ops/product_types.hpp"

namespace randnla {

/// Householder QR and its thin Q in one precision T (float or double): the family's typed part,
/// so that a precision is a base class of FactorizationOps, not a new member.
template <class T>
class HouseholderQrOps : public virtual DeviceContext {
 public:
  /// Householder QR of A (m x n, m >= n; LAPACK/cuSOLVER geqrf): R in A's upper triangle, the
  /// reflectors below it, their scalars in tau (n x 1).
  void qr(MatrixView<T> a, MatrixView<T> tau) {
    mine(a, "A"), mine(tau, "tau");
    require_tall(a, "A");
    require_shape(tau, a.cols(), 1, "tau");
    if (a.cols() > 0) do_qr(a, tau);
  }
  /// A := the thin Q (m x n) from qr's reflectors and tau (orgqr).
  void form_q(MatrixView<T> a, MatrixView<const T> tau) {
    mine(a, "A"), mine(tau, "tau");
    require_tall(a, "A");
    require_shape(tau, a.cols(), 1, "tau");
    if (a.cols() > 0) do_form_q(a, tau);
  }

 protected:
  virtual void do_qr(MatrixView<T> a, MatrixView<T> tau) = 0;
  virtual void do_form_q(MatrixView<T> a, MatrixView<const T> tau) = 0;
};

/// Dense factorizations of matrices in the context's memory. Each public member checks its
/// arguments once (InvalidArgument naming the parameter and value) and handles the empty cases,
/// then calls the backend's unchecked hook.
class FactorizationOps : public virtual HouseholderQrOps<float>, public virtual HouseholderQrOps<double> {
 public:
  using HouseholderQrOps<float>::qr;
  using HouseholderQrOps<double>::qr;
  using HouseholderQrOps<float>::form_q;
  using HouseholderQrOps<double>::form_q;
  /// Cholesky factorization of the SPD matrix G (n x n, FP64; its upper triangle is read): R
  /// (upper, R^T R = G) in G's upper triangle, the strict lower triangle left as it was (potrf).
  /// Returns 0, or the 1-based index of the first pivot that is not positive and finite
  /// (LAPACK's info), without throwing; G is then unspecified.
  int cholesky(MatrixView<double> g) {
    mine(g, "G");
    require_square(g, "G");
    return g.rows() == 0 ? 0 : do_cholesky(g);
  }
  /// B := alpha op(R)^{-1} B (Side::Left) or alpha B op(R)^{-1} (Side::Right), R n x n upper
  /// triangular with a non-zero diagonal, FP64 (BLAS trsm; e.g. Q := Y R^{-1} after a Cholesky).
  void triangular_solve(Side side, Op op, double alpha, MatrixView<const double> r, MatrixView<double> b) {
    mine(r, "R"), mine(b, "B");
    require_square(r, "R");
    const bool left = side == Side::Left;
    require((left ? b.rows() : b.cols()) == r.rows(), left ? "B.rows" : "B.cols", left ? b.rows() : b.cols(),
            "must equal R.rows = " + std::to_string(r.rows()));
    if (!b.empty()) do_triangular_solve(side, op, alpha, r, b);
  }
  /// Eigendecomposition of the symmetric G (n x n, FP64; its upper triangle is read): G := V,
  /// w (n x 1) := the eigenvalues in descending order, G_in = V diag(w) V^T, V orthogonal.
  /// Divide and conquer: LAPACK dsyevd in the portable backend (on the host); on the CUDA backend
  /// the library's own FP64 tridiagonalisation in one thread-block cluster and divide and conquer
  /// (Cuppen; Gu & Eisenstat 1995) on compute 9.0 devices for 3 <= n <= 654, else cuSOLVER
  /// Xsyevd. Throws NumericalBreakdown if it does not converge.
  void symmetric_eig(MatrixView<double> g, MatrixView<double> w) {
    mine(g, "G"), mine(w, "w");
    require_eig_shapes(g, w);
    if (g.rows() > 0) do_symmetric_eig(g, w);
  }
  /// Thin SVD of A (m x n, m >= n; A is overwritten): A = U diag(s) VT, s descending.
  /// U is m x n, s is n x 1, VT is n x n. Throws NumericalBreakdown if it does not converge and
  /// UnsupportedConfiguration for a method capabilities() does not list.
  void svd(MatrixView<float> a, MatrixView<float> s, MatrixView<float> u, MatrixView<float> vt, SvdMethod method) {
    mine(a, "A"), mine(s, "s"), mine(u, "U"), mine(vt, "VT");
    require_svd_shapes(a, s, u, vt);
    if (!capabilities().supports(method))
      throw UnsupportedConfiguration(std::string("the SVD method ") + to_string(method) + " does not run on " +
                                     description());
    if (a.cols() > 0) do_svd(a, s, u, vt, method);
  }

 protected:
  virtual int do_cholesky(MatrixView<double> g) = 0;
  virtual void do_triangular_solve(Side side, Op op, double alpha, MatrixView<const double> r, MatrixView<double> b) = 0;
  virtual void do_symmetric_eig(MatrixView<double> g, MatrixView<double> w) = 0;
  virtual void do_svd(MatrixView<float> a, MatrixView<float> s, MatrixView<float> u, MatrixView<float> vt,
                      SvdMethod method) = 0;
};

}  // namespace randnla
