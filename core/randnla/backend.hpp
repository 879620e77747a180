// The backend interface: everything an algorithm may ask of a machine. Algorithms speak only to
// this; backends/host implements it with Kokkos + LAPACK, backends/cuda with CUDA kernels,
// cuBLAS and cuSOLVER. All views passed to a backend live in its memory_space().
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "randnla/hostdevice.hpp"
#include "randnla/matrix_view.hpp"
#include "randnla/philox.hpp"
#include "randnla/precision.hpp"

namespace randnla {

/// op(X) = X or X^T, as BLAS's transa/transb.
enum class Op { N, T };

/// Rows and columns of op(X) for X stored rows x cols.
inline index_t op_rows(Op op, index_t rows, index_t cols) { return op == Op::N ? rows : cols; }
inline index_t op_cols(Op op, index_t rows, index_t cols) { return op == Op::N ? cols : rows; }

/// Throws InvalidArgument unless C (m x n) = op(A) op(B) is well formed.
template <class A, class B, class C>
void require_gemm_shapes(Op ta, Op tb, const MatrixView<A>& a, const MatrixView<B>& b, const MatrixView<C>& c) {
  const index_t m = op_rows(ta, a.rows(), a.cols()), k = op_cols(ta, a.rows(), a.cols());
  const index_t kb = op_rows(tb, b.rows(), b.cols()), n = op_cols(tb, b.rows(), b.cols());
  require(kb == k, "B.rows (after op)", kb, "must equal op(A).cols = " + std::to_string(k));
  require(c.rows() == m, "C.rows", c.rows(), "must equal op(A).rows = " + std::to_string(m));
  require(c.cols() == n, "C.cols", c.cols(), "must equal op(B).cols = " + std::to_string(n));
}

/// Throws InvalidArgument unless s holds one factor per row of X (by_row) or per column.
template <class S, class X>
void require_scale_shape(const MatrixView<S>& s, const MatrixView<X>& x, bool by_row) {
  const index_t lines = by_row ? x.rows() : x.cols();
  require(s.size() == lines, "s.size", s.size(), std::string("must equal X.") + (by_row ? "rows" : "cols") + " = " +
                                                     std::to_string(lines));
}

/// g^{-1/2} for a positive finite diagonal entry g of a Gram matrix, 1 otherwise (Backend::equilibrate).
RANDNLA_HD double equilibration_factor(double g) {
  constexpr double kLargestDouble = 1.7976931348623157e308;
  return g > 0.0 && g <= kLargestDouble ? 1.0 / std::sqrt(g) : 1.0;
}

/// Throws InvalidArgument unless G is square.
template <class T>
void require_square(const MatrixView<T>& g, const std::string& name) {
  require(g.rows() == g.cols(), name + ".rows", g.rows(), "must equal " + name + ".cols = " + std::to_string(g.cols()));
}

/// Throws InvalidArgument unless the thin SVD A (m x n, m >= n) = U diag(s) VT is well formed.
template <class T>
void require_svd_shapes(const MatrixView<T>& a, const MatrixView<T>& s, const MatrixView<T>& u,
                        const MatrixView<T>& vt) {
  const index_t m = a.rows(), n = a.cols();
  require(m >= n, "A.rows", m, "must be >= A.cols = " + std::to_string(n) + " (transpose a wide matrix first)");
  require_shape(u, m, n, "U");
  require_shape(vt, n, n, "VT");
  require(s.size() == n, "s.size", s.size(), "must equal A.cols = " + std::to_string(n));
}

/// Throws InvalidArgument unless G (n x n) := V with w (n x 1) := eigenvalues is well formed.
template <class T>
void require_eig_shapes(const MatrixView<T>& g, const MatrixView<T>& w) {
  require_square(g, "G");
  require_shape(w, g.rows(), 1, "w");
}

/// The baseline GEMMs the mixed-precision kernels are compared with.
enum class GemmPrecision {
  FP32,  ///< SGEMM on FP32 cores (cuBLAS SGEMM, or host BLAS)
  TF32,  ///< operands rounded to TF32, FP32 accumulation (cuBLAS TF32 Tensor Core mode)
  FP16   ///< operands rounded to FP16, FP32 accumulation (cuBLAS GemmEx FP16 -> FP32); when an
         ///< operand has entries with |x| >= 2^15, which FP16 could not hold, it runs as TF32
         ///< instead of returning Inf
};

/// Which Tensor Core format a mixed-precision product actually used (filled when asked for).
struct GemmReport {
  TensorCore a_format = TensorCore::TF32;  ///< split format of the first FP32 operand
  TensorCore b_format = TensorCore::TF32;  ///< split format of the second FP32 operand (TCEC only)
  int a_scale_exponent = 0;                ///< A was scaled by 2^a_scale_exponent before its FP16 split
  int b_scale_exponent = 0;
};

/// Small-matrix SVD routine.
enum class SvdMethod {
  Gesvd,   ///< QR iteration (LAPACK / cuSOLVER gesvd)
  Gesdd,   ///< divide and conquer (LAPACK gesdd; the CUDA backend runs it on the host CPU)
  Jacobi,  ///< one-sided Jacobi (LAPACK gesvj / cuSOLVER gesvdj)
  Polar,   ///< polar decomposition (cuSOLVER Xgesvdp); GPU only
  Gram,    ///< through the FP64 Gram matrix: symmetric_eig, then CholeskyQR of A V (randnla::svd_through_gram
           ///< in algorithms/; Backend::svd does not take it)
  Auto     ///< Backend::svd: the fastest library routine measured, gesdd on the host, polar on the GPU
           ///< (6.0 ms against gesvd's 27 ms for 272 x 272 on the H100); the RSVD: Gram
};

inline const char* to_string(SvdMethod m) {
  switch (m) {
    case SvdMethod::Gesvd: return "gesvd";
    case SvdMethod::Gesdd: return "gesdd";
    case SvdMethod::Jacobi: return "jacobi";
    case SvdMethod::Polar: return "polar";
    case SvdMethod::Gram: return "gram";
    default: return "auto";
  }
}

/// Throws InvalidArgument for SvdMethod::Gram, which Backend::svd does not take.
inline void require_backend_svd_method(SvdMethod m) {
  require(m != SvdMethod::Gram, "method", to_string(m), "is an algorithm (randnla::svd_through_gram), not a backend routine");
}

/// Parses gesvd | gesdd | jacobi | polar | gram | auto; throws InvalidArgument naming `parameter` otherwise.
inline SvdMethod parse_svd_method(const std::string& text, const std::string& parameter = "svd") {
  for (auto m : {SvdMethod::Gesvd, SvdMethod::Gesdd, SvdMethod::Jacobi, SvdMethod::Polar, SvdMethod::Gram,
                 SvdMethod::Auto})
    if (text == to_string(m)) return m;
  throw InvalidArgument(parameter, text, "must be gesvd, gesdd, jacobi, polar, gram or auto");
}

class Backend {
 public:
  virtual ~Backend() = default;

  virtual MemorySpace memory_space() const = 0;
  /// "host (Kokkos Serial, OpenBLAS)" or the GPU's name.
  virtual std::string description() const = 0;

  // ---- memory ----------------------------------------------------------------------------
  /// Uninitialised bytes in memory_space(), freed when the last owner goes.
  virtual std::shared_ptr<void> allocate(std::size_t bytes) = 0;
  /// dst := src for same-shape views of the same element size, any spaces. Blocks until done.
  virtual void copy(MatrixView<const float> src, MatrixView<float> dst) = 0;
  virtual void copy(MatrixView<const double> src, MatrixView<double> dst) = 0;
  virtual void copy(MatrixView<const fp16> src, MatrixView<fp16> dst) = 0;
  /// Waits for all work queued on this backend.
  virtual void synchronize() = 0;

  // ---- elementwise -------------------------------------------------------------------------
  /// Fills X with the random matrix `spec` (Philox4x32-10; identical on every backend).
  virtual void fill_random(const RandomSpec& spec, MatrixView<float> x) = 0;
  virtual void fill_random(const RandomSpec& spec, MatrixView<fp16> x) = 0;  ///< RN to FP16
  virtual void convert(MatrixView<const float> src, MatrixView<double> dst) = 0;
  virtual void convert(MatrixView<const double> src, MatrixView<float> dst) = 0;
  virtual void convert(MatrixView<const float> src, MatrixView<fp16> dst) = 0;  ///< RN, overflow -> Inf
  /// dst := src diag(s) rounded once to FP32: src m x n FP64, s n x 1 FP64, all in this backend's
  /// memory (CholeskyQR's last column scaling and its conversion in one pass).
  virtual void convert_scaled(MatrixView<const double> src, MatrixView<const double> s, MatrixView<float> dst) = 0;
  virtual void transpose(MatrixView<const float> src, MatrixView<float> dst) = 0;  ///< dst := src^T
  /// X(:, j) *= s[j] for each column j; s is a vector in this backend's memory of length X.cols.
  virtual void scale_columns(MatrixView<const float> s, MatrixView<float> x) = 0;
  virtual void scale_columns(MatrixView<const double> s, MatrixView<double> x) = 0;
  /// X(i, :) *= s[i] for each row i (FP64).
  virtual void scale_rows(MatrixView<const double> s, MatrixView<double> x) = 0;
  /// Symmetric equilibration of a Gram matrix G (n x n, FP64): d (n x 1) := diag(G)^{-1/2},
  /// G := D G D, so that G's diagonal is 1 (van der Sluis). d_i = 1 where G_ii is not positive
  /// and finite: that row and column are left as they are.
  virtual void equilibrate(MatrixView<double> g, MatrixView<double> d) = 0;
  /// G(i, i) += shift for every i (G square, FP64).
  virtual void add_to_diagonal(MatrixView<double> g, double shift) = 0;
  /// Counts of X's non-zero elements per FP32 exponent (one pass; blocks to return it).
  virtual ExponentHistogram exponent_histogram(MatrixView<const float> x) = 0;
  /// ||X||_F, accumulated in FP64 (blocks).
  virtual double frobenius_norm(MatrixView<const float> x) = 0;
  virtual double frobenius_norm(MatrixView<const double> x) = 0;

  // ---- products: C := alpha * op(A) * op(B) + beta * C -------------------------------------
  virtual void gemm(Op ta, Op tb, double alpha, MatrixView<const double> a, MatrixView<const double> b, double beta,
                    MatrixView<double> c) = 0;
  virtual void gemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
                    MatrixView<float> c, GemmPrecision precision) = 0;
  /// SHGEMM: A FP32 split into hi + lo, B FP16. Ootomo & Yokota, "Mixed-Precision Random
  /// Projection for RandNLA on Tensor Cores", Sec. 3: C = A_hi*B + (dA*B) / 2^11.
  virtual void shgemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const fp16> b, float beta,
                      MatrixView<float> c, TensorCore tc, GemmReport* report = nullptr) = 0;
  /// The mirror of shgemm: A FP16, B FP32 split (used for Q^T * A with an FP16 left factor).
  virtual void hsgemm(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const float> b, float beta,
                      MatrixView<float> c, TensorCore tc, GemmReport* report = nullptr) = 0;
  /// TCEC-SGEMM: both split; C = A_hi*B_hi + (dA*B_hi + A_hi*dB) / 2^11, dA*dB dropped.
  /// Ootomo & Yokota, "Recovering single precision accuracy from Tensor Cores while surpassing
  /// the FP32 theoretical peak performance", Eq. (18)-(20).
  virtual void tcec_sgemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b,
                          float beta, MatrixView<float> c, TensorCore tc, GemmReport* report = nullptr) = 0;

  // ---- dense factorizations -------------------------------------------------------------
  /// Householder QR (geqrf + orgqr): A (m x n, m >= n) := its thin Q factor.
  virtual void householder_q(MatrixView<float> a) = 0;
  /// The inverse of the Cholesky factor of the SPD matrix G (n x n, FP64, both triangles stored
  /// alike): rinv (n x n) := R^{-1}, upper triangular, with R^T R = G. G is overwritten (workspace).
  /// Returns 0, or the 1-based index of the first pivot that is not positive and finite (LAPACK's
  /// info), without throwing; rinv is then unspecified. Each column of R^{-1} is a backward-stable
  /// triangular solve. Host: LAPACK dpotrf + dtrtri; CUDA: cuSOLVER potrf + cuBLAS trsm.
  virtual int inverse_cholesky_factor(MatrixView<double> g, MatrixView<double> rinv) = 0;
  /// Eigendecomposition of the symmetric G (n x n, FP64; its upper triangle is read): G := V,
  /// w (n x 1) := the eigenvalues in descending order, G_in = V diag(w) V^T, V orthogonal.
  /// Divide and conquer: LAPACK dsyevd on the host; on the CUDA backend the library's own FP64
  /// tridiagonalisation in one thread-block cluster and divide and conquer (Cuppen; Gu & Eisenstat
  /// 1995) on compute 9.0 devices for 3 <= n <= 654, else cuSOLVER Xsyevd. Throws
  /// NumericalBreakdown if it does not converge.
  virtual void symmetric_eig(MatrixView<double> g, MatrixView<double> w) = 0;
  /// Thin SVD of A (m x n, m >= n; A is overwritten): A = U diag(s) VT, s descending.
  /// U is m x n, s is n x 1, VT is n x n. Throws NumericalBreakdown if it does not converge,
  /// InvalidArgument for SvdMethod::Gram (an algorithm, not a backend routine).
  virtual void svd(MatrixView<float> a, MatrixView<float> s, MatrixView<float> u, MatrixView<float> vt,
                   SvdMethod method) = 0;
};

/// An owning column-major matrix in a backend's memory space (ld = rows).
template <class T>
class Matrix {
 public:
  Matrix() = default;
  Matrix(Backend& backend, index_t rows, index_t cols, const std::string& name = "A") {
    require(rows >= 0, name + ".rows", rows, "must be >= 0");
    require(cols >= 0, name + ".cols", cols, "must be >= 0");
    storage_ = backend.allocate(static_cast<std::size_t>(rows * cols) * sizeof(T) + sizeof(T));
    view_ = MatrixView<T>(static_cast<T*>(storage_.get()), rows, cols, rows > 1 ? rows : 1, backend.memory_space(),
                          name);
  }
  const MatrixView<T>& view() const { return view_; }
  operator MatrixView<T>() const { return view_; }              // NOLINT: a matrix is usable as its view
  operator MatrixView<const T>() const { return view_; }        // NOLINT
  T* data() const { return view_.data(); }
  index_t rows() const { return view_.rows(); }
  index_t cols() const { return view_.cols(); }
  MemorySpace space() const { return view_.space(); }

 private:
  std::shared_ptr<void> storage_;
  MatrixView<T> view_;
};

}  // namespace randnla
