// The backend interface: everything an algorithm may ask of a machine. Algorithms speak only to
// this; backends/portable implements it in Kokkos (any execution space) with Kokkos Kernels and
// LAPACK, backends/cuda with CUDA kernels, cuBLAS and cuSOLVER.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "randnla/hostdevice.hpp"
#include "randnla/matrix_view.hpp"
#include "randnla/philox.hpp"
#include "randnla/precision.hpp"
#include "randnla/random.hpp"

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

inline const EnumNames<GemmPrecision>& names_of(GemmPrecision) {
  static const EnumNames<GemmPrecision> names{
      {GemmPrecision::FP32, "fp32"}, {GemmPrecision::TF32, "tf32"}, {GemmPrecision::FP16, "fp16"}};
  return names;
}

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

inline const EnumNames<SvdMethod>& names_of(SvdMethod) {
  static const EnumNames<SvdMethod> names{{SvdMethod::Gesvd, "gesvd"},   {SvdMethod::Gesdd, "gesdd"},
                                          {SvdMethod::Jacobi, "jacobi"}, {SvdMethod::Polar, "polar"},
                                          {SvdMethod::Gram, "gram"},     {SvdMethod::Auto, "auto"}};
  return names;
}

/// Throws InvalidArgument for SvdMethod::Gram, which Backend::svd does not take.
inline void require_backend_svd_method(SvdMethod m) {
  require(m != SvdMethod::Gram, "method", to_string(m), "is an algorithm (randnla::svd_through_gram), not a backend routine");
}

/// What a backend can do, asked before an operation instead of a rejection at run time.
struct Capabilities {
  /// Hardware split products: shgemm, hsgemm and tcec_sgemm run on Tensor Cores. Without them a
  /// backend emulates those products element by element (for validation, several times slower
  /// than its FP32 GEMM), so the algorithms' Auto precision runs FP32 GEMM there instead.
  bool tensor_cores = false;
  /// The Backend::svd methods this backend runs (SvdMethod::Auto always resolves to one of them).
  bool gesvd = true, gesdd = false, jacobi = true, polar = false;

  bool supports(SvdMethod m) const {
    switch (m) {
      case SvdMethod::Gesvd: return gesvd;
      case SvdMethod::Gesdd: return gesdd;
      case SvdMethod::Jacobi: return jacobi;
      case SvdMethod::Polar: return polar;
      case SvdMethod::Auto: return true;
      default: return false;
    }
  }
};

/// The operations an algorithm may ask of a machine. Each public member checks its arguments
/// once (shapes, memory spaces, parameter ranges; InvalidArgument naming the parameter and value)
/// and handles the empty cases, then calls the backend's unchecked hook (do_*). Backends implement
/// only the hooks: backends/portable in Kokkos on any execution space, backends/cuda with CUDA
/// kernels, cuBLAS and cuSOLVER. All views passed to a backend live in its memory_space(), except
/// copy's, which may cross spaces.
class Backend {
 public:
  virtual ~Backend() = default;

  virtual MemorySpace memory_space() const = 0;
  /// "portable (Kokkos Serial)" or the GPU's name.
  virtual std::string description() const = 0;
  virtual Capabilities capabilities() const = 0;

  // ---- memory ----------------------------------------------------------------------------
  /// Uninitialised bytes in memory_space(), freed when the last owner goes.
  virtual std::shared_ptr<void> allocate(std::size_t bytes) = 0;
  /// Waits for all work queued on this backend (its stream or execution-space instance).
  virtual void synchronize() = 0;
  /// dst := src for same-shape views, any spaces. Blocks until done.
  void copy(MatrixView<const float> src, MatrixView<float> dst) { checked_copy(src, dst); }
  void copy(MatrixView<const double> src, MatrixView<double> dst) { checked_copy(src, dst); }
  void copy(MatrixView<const fp16> src, MatrixView<fp16> dst) { checked_copy(src, dst); }

  // ---- elementwise and reductions ---------------------------------------------------------------
  /// Fills X with the random matrix `spec` (Philox4x32-10; identical on every backend and for any
  /// thread count), or with the block of it that `block` names. FP16: each element rounded to
  /// nearest. Throws InvalidArgument for a SparseSign density outside (0, 1] or a block outside
  /// its operator.
  void fill_random(const RandomSpec& spec, MatrixView<float> x, const RandomBlock& block = {}) {
    mine(x, "X"), do_fill_random(random_draw(spec, block, x.rows()), x);
  }
  void fill_random(const RandomSpec& spec, MatrixView<fp16> x, const RandomBlock& block = {}) {
    mine(x, "X"), do_fill_random(random_draw(spec, block, x.rows()), x);
  }
  void convert(MatrixView<const float> src, MatrixView<double> dst) { same_shape(src, dst), do_convert(src, dst); }
  void convert(MatrixView<const double> src, MatrixView<float> dst) { same_shape(src, dst), do_convert(src, dst); }
  /// Rounded to nearest; beyond FP16's range -> +-Inf (callers that cannot accept that scale first).
  void convert(MatrixView<const float> src, MatrixView<fp16> dst) { same_shape(src, dst), do_convert(src, dst); }
  void convert(MatrixView<const fp16> src, MatrixView<float> dst) { same_shape(src, dst), do_convert(src, dst); }
  /// dst := src diag(s) rounded once to FP32: src m x n FP64, s n x 1 FP64.
  void convert_scaled(MatrixView<const double> src, MatrixView<const double> s, MatrixView<float> dst) {
    same_shape(src, dst);
    mine(s, "s");
    require_scale_shape(s, src, false);
    do_convert_scaled(src, s, dst);
  }
  /// dst := src^T.
  void transpose(MatrixView<const float> src, MatrixView<float> dst) {
    mine(src, "src"), mine(dst, "dst");
    require_shape(dst, src.cols(), src.rows(), "dst");
    do_transpose(src, dst);
  }
  /// X := alpha X (BLAS scal; alpha = 0 writes zeros, whatever X held).
  void scale(float alpha, MatrixView<float> x) { mine(x, "X"), x.empty() ? void() : do_scale(alpha, x); }
  void scale(double alpha, MatrixView<double> x) { mine(x, "X"), x.empty() ? void() : do_scale(alpha, x); }
  /// X(:, j) *= s[j] for each column j; s is a vector of length X.cols.
  void scale_columns(MatrixView<const float> s, MatrixView<float> x) { checked_scale(s, x, false); }
  void scale_columns(MatrixView<const double> s, MatrixView<double> x) { checked_scale(s, x, false); }
  /// X(i, :) *= s[i] for each row i.
  void scale_rows(MatrixView<const double> s, MatrixView<double> x) { checked_scale(s, x, true); }
  /// Symmetric equilibration of a Gram matrix G (n x n, FP64): d (n x 1) := diag(G)^{-1/2},
  /// G := D G D, so that G's diagonal is 1 (van der Sluis). d_i = 1 where G_ii is not positive
  /// and finite: that row and column are left as they are.
  void equilibrate(MatrixView<double> g, MatrixView<double> d) {
    mine(g, "G"), mine(d, "d");
    require_eig_shapes(g, d);
    do_equilibrate(g, d);
  }
  /// G(i, i) += shift for every i (G square, FP64).
  void add_to_diagonal(MatrixView<double> g, double shift) {
    mine(g, "G");
    require_square(g, "G");
    do_add_to_diagonal(g, shift);
  }
  /// Counts of X's non-zero elements per FP32 exponent (one pass; blocks to return it).
  ExponentHistogram exponent_histogram(MatrixView<const float> x) {
    mine(x, "X");
    return x.empty() ? ExponentHistogram{} : do_exponent_histogram(x);
  }
  /// ||X||_F, accumulated in FP64 (blocks).
  double frobenius_norm(MatrixView<const float> x) { return mine(x, "X"), x.empty() ? 0.0 : do_frobenius_norm(x); }
  double frobenius_norm(MatrixView<const double> x) { return mine(x, "X"), x.empty() ? 0.0 : do_frobenius_norm(x); }

  // ---- products: C := alpha * op(A) * op(B) + beta * C -------------------------------------
  /// k = 0 gives C := beta * C, as in BLAS.
  void gemm(Op ta, Op tb, double alpha, MatrixView<const double> a, MatrixView<const double> b, double beta,
            MatrixView<double> c) {
    gemm_checks(ta, tb, a, b, c);
    if (!c.empty()) do_gemm(ta, tb, alpha, a, b, beta, c);
  }
  /// FP16 runs as TF32 when an operand has an entry with |x| >= 2^15, which FP16 could not hold.
  void gemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
            MatrixView<float> c, GemmPrecision precision) {
    gemm_checks(ta, tb, a, b, c);
    if (c.empty()) return;
    if (precision == GemmPrecision::FP16 &&
        !(fits_fp16_unscaled(exponent_histogram(a)) && fits_fp16_unscaled(exponent_histogram(b))))
      precision = GemmPrecision::TF32;  // FP16 would overflow: never return Inf for finite input
    do_gemm(ta, tb, alpha, a, b, beta, c, precision);
  }
  /// SHGEMM: A FP32 split into hi + lo, B FP16. Ootomo & Yokota, "Mixed-Precision Random
  /// Projection for RandNLA on Tensor Cores", Sec. 3: C = A_hi*B + (dA*B) / 2^11.
  void shgemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const fp16> b, float beta,
              MatrixView<float> c, TensorCore tc, GemmReport* report = nullptr) {
    gemm_checks(ta, tb, a, b, c);
    do_shgemm(ta, tb, alpha, a, b, beta, c, tc, report);
  }
  /// The mirror of shgemm: A FP16, B FP32 split.
  void hsgemm(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const float> b, float beta,
              MatrixView<float> c, TensorCore tc, GemmReport* report = nullptr) {
    gemm_checks(ta, tb, a, b, c);
    do_hsgemm(ta, tb, alpha, a, b, beta, c, tc, report);
  }
  /// TCEC-SGEMM: both split; C = A_hi*B_hi + (dA*B_hi + A_hi*dB) / 2^11, dA*dB dropped.
  /// Ootomo & Yokota, "Recovering single precision accuracy from Tensor Cores while surpassing
  /// the FP32 theoretical peak performance", Eq. (18)-(20).
  void tcec_sgemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
                  MatrixView<float> c, TensorCore tc, GemmReport* report = nullptr) {
    gemm_checks(ta, tb, a, b, c);
    do_tcec_sgemm(ta, tb, alpha, a, b, beta, c, tc, report);
  }

  // ---- dense factorizations -------------------------------------------------------------
  /// Householder QR (geqrf + orgqr): A (m x n, m >= n) := its thin Q factor.
  void householder_q(MatrixView<float> a) {
    mine(a, "A");
    require(a.rows() >= a.cols(), "A.rows", a.rows(), "must be >= A.cols = " + std::to_string(a.cols()));
    if (a.cols() > 0) do_householder_q(a);
  }
  /// The inverse of the Cholesky factor of the SPD matrix G (n x n, FP64, both triangles stored
  /// alike): rinv (n x n) := R^{-1}, upper triangular, with R^T R = G. G is overwritten (workspace).
  /// Returns 0, or the 1-based index of the first pivot that is not positive and finite (LAPACK's
  /// info), without throwing; rinv is then unspecified. Portable: LAPACK dpotrf + dtrtri (on the
  /// host, through a copy where G is device memory); CUDA: cuSOLVER potrf + cuBLAS trsm.
  int inverse_cholesky_factor(MatrixView<double> g, MatrixView<double> rinv) {
    mine(g, "G"), mine(rinv, "rinv");
    require_square(g, "G");
    require_shape(rinv, g.rows(), g.cols(), "rinv");
    return g.rows() == 0 ? 0 : do_inverse_cholesky_factor(g, rinv);
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
  /// U is m x n, s is n x 1, VT is n x n. Throws NumericalBreakdown if it does not converge,
  /// InvalidArgument for SvdMethod::Gram (an algorithm, not a backend routine), and
  /// UnsupportedConfiguration for a method capabilities() does not list.
  void svd(MatrixView<float> a, MatrixView<float> s, MatrixView<float> u, MatrixView<float> vt, SvdMethod method) {
    mine(a, "A"), mine(s, "s"), mine(u, "U"), mine(vt, "VT");
    require_svd_shapes(a, s, u, vt);
    require_backend_svd_method(method);
    if (!capabilities().supports(method))
      throw UnsupportedConfiguration(std::string("the SVD method ") + to_string(method) + " does not run on " +
                                     description());
    if (a.cols() > 0) do_svd(a, s, u, vt, method);
  }

 protected:
  // The unchecked hooks: arguments have passed the public member's checks, and views are not
  // empty unless the public member says otherwise.
  virtual void do_copy(MatrixView<const float> src, MatrixView<float> dst) = 0;
  virtual void do_copy(MatrixView<const double> src, MatrixView<double> dst) = 0;
  virtual void do_copy(MatrixView<const fp16> src, MatrixView<fp16> dst) = 0;
  virtual void do_fill_random(const RandomDraw& draw, MatrixView<float> x) = 0;
  virtual void do_fill_random(const RandomDraw& draw, MatrixView<fp16> x) = 0;
  virtual void do_convert(MatrixView<const float> src, MatrixView<double> dst) = 0;
  virtual void do_convert(MatrixView<const double> src, MatrixView<float> dst) = 0;
  virtual void do_convert(MatrixView<const float> src, MatrixView<fp16> dst) = 0;
  virtual void do_convert(MatrixView<const fp16> src, MatrixView<float> dst) = 0;
  virtual void do_convert_scaled(MatrixView<const double> src, MatrixView<const double> s, MatrixView<float> dst) = 0;
  virtual void do_transpose(MatrixView<const float> src, MatrixView<float> dst) = 0;
  virtual void do_scale(float alpha, MatrixView<float> x) = 0;
  virtual void do_scale(double alpha, MatrixView<double> x) = 0;
  virtual void do_scale(MatrixView<const float> s, MatrixView<float> x, bool by_row) = 0;
  virtual void do_scale(MatrixView<const double> s, MatrixView<double> x, bool by_row) = 0;
  virtual void do_equilibrate(MatrixView<double> g, MatrixView<double> d) = 0;
  virtual void do_add_to_diagonal(MatrixView<double> g, double shift) = 0;
  virtual ExponentHistogram do_exponent_histogram(MatrixView<const float> x) = 0;
  virtual double do_frobenius_norm(MatrixView<const float> x) = 0;
  virtual double do_frobenius_norm(MatrixView<const double> x) = 0;
  virtual void do_gemm(Op ta, Op tb, double alpha, MatrixView<const double> a, MatrixView<const double> b, double beta,
                       MatrixView<double> c) = 0;
  virtual void do_gemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
                       MatrixView<float> c, GemmPrecision precision) = 0;
  virtual void do_shgemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const fp16> b, float beta,
                         MatrixView<float> c, TensorCore tc, GemmReport* report) = 0;
  virtual void do_hsgemm(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const float> b, float beta,
                         MatrixView<float> c, TensorCore tc, GemmReport* report) = 0;
  virtual void do_tcec_sgemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b,
                             float beta, MatrixView<float> c, TensorCore tc, GemmReport* report) = 0;
  virtual void do_householder_q(MatrixView<float> a) = 0;
  virtual int do_inverse_cholesky_factor(MatrixView<double> g, MatrixView<double> rinv) = 0;
  virtual void do_symmetric_eig(MatrixView<double> g, MatrixView<double> w) = 0;
  virtual void do_svd(MatrixView<float> a, MatrixView<float> s, MatrixView<float> u, MatrixView<float> vt,
                      SvdMethod method) = 0;

 private:
  template <class T>
  void mine(const MatrixView<T>& v, const std::string& name) const {
    require_space(v, memory_space(), name);
  }
  /// The draw of `block` of the operator `spec` into a matrix of `rows` rows (any number of
  /// columns: an operator has as many as its blocks reach).
  static RandomDraw random_draw(const RandomSpec& spec, RandomBlock block, index_t rows) {
    if (block.rows == 0) block = RandomBlock{0, 0, rows};
    require(block.row0 >= 0 && block.col0 >= 0, "block.row0, block.col0",
            std::to_string(block.row0) + ", " + std::to_string(block.col0), "must be >= 0");
    require(block.row0 + rows <= block.rows, "block.row0 + X.rows", block.row0 + rows,
            "must be <= block.rows = " + std::to_string(block.rows));
    return RandomDraw(spec, block);
  }
  template <class S, class D>
  void same_shape(const MatrixView<S>& s, const MatrixView<D>& d) const {
    mine(s, "src"), mine(d, "dst");
    require_shape(d, s.rows(), s.cols(), "dst");
  }
  template <class T>
  void checked_copy(MatrixView<const T> s, MatrixView<T> d) {
    require_shape(d, s.rows(), s.cols(), "dst");
    if (!s.empty()) do_copy(s, d);
  }
  template <class T>
  void checked_scale(MatrixView<const T> s, MatrixView<T> x, bool by_row) {
    mine(s, "s"), mine(x, "X");
    require_scale_shape(s, x, by_row);
    if (!x.empty()) do_scale(s, x, by_row);
  }
  template <class A, class B, class C>
  void gemm_checks(Op ta, Op tb, const MatrixView<A>& a, const MatrixView<B>& b, const MatrixView<C>& c) const {
    mine(a, "A"), mine(b, "B"), mine(c, "C");
    require_gemm_shapes(ta, tb, a, b, c);
  }
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
  /// A matrix over memory that `owner` keeps alive (e.g. a Kokkos::View the caller keeps).
  Matrix(std::shared_ptr<void> owner, MatrixView<T> view) : storage_(std::move(owner)), view_(view) {}
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

/// Makes the matrices an algorithm returns (rows x cols, FP32, in the backend's memory): by default
/// new matrices of the backend; the Kokkos-native entry points pass one that allocates Kokkos
/// views, so that results are returned as views without a copy.
using MatrixAllocator = std::function<Matrix<float>(index_t rows, index_t cols, const std::string& name)>;

/// The default MatrixAllocator: Matrix<float>(backend, rows, cols, name).
inline MatrixAllocator backend_matrices(Backend& backend) {
  return [&backend](index_t rows, index_t cols, const std::string& name) {
    return Matrix<float>(backend, rows, cols, name);
  };
}

}  // namespace randnla
