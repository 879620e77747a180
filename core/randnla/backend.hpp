// The backend interface: the device context and the operation families every algorithm may use.
// Algorithms speak only to this (and to the small interfaces of operations one algorithm alone
// needs, which DeviceContext::ops finds); backends/portable implements it in Kokkos (any execution
// space) with Kokkos Kernels and LAPACK, backends/cuda with CUDA kernels, cuBLAS and cuSOLVER.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "randnla/context.hpp"
#include "randnla/hostdevice.hpp"
#include "randnla/matrix_view.hpp"
#include "randnla/ops/factorizations.hpp"
#include "randnla/ops/products.hpp"
#include "randnla/philox.hpp"
#include "randnla/precision.hpp"
#include "randnla/random.hpp"

namespace randnla {

/// Throws InvalidArgument unless s holds one factor per row of X (by_row) or per column.
template <class S, class X>
void require_scale_shape(const MatrixView<S>& s, const MatrixView<X>& x, bool by_row) {
  const index_t lines = by_row ? x.rows() : x.cols();
  require(s.size() == lines, "s.size", s.size(), std::string("must equal X.") + (by_row ? "rows" : "cols") + " = " +
                                                     std::to_string(lines));
}

/// What a backend can do, asked before an operation instead of a rejection at run time.
struct Capabilities {
  /// ProductMode::Split runs on Tensor Cores. Without them a backend emulates it element by
  /// element (for validation, several times slower than its FP32 GEMM), and ProductMode::Auto
  /// runs FP32 there.
  bool tensor_cores = false;
  /// The Backend::svd methods this backend runs (SvdMethod::Auto always resolves to one of them).
  bool gesvd = true, gesdd = false, jacobi = true, polar = false;

  bool supports(SvdMethod m) const {
    switch (m) {
      case SvdMethod::Gesvd: return gesvd;
      case SvdMethod::Gesdd: return gesdd;
      case SvdMethod::Jacobi: return jacobi;
      case SvdMethod::Polar: return polar;
      default: return true;
    }
  }
};

/// The operation families, over the device context. Each public member checks its arguments once
/// (shapes, memory spaces, parameter ranges; InvalidArgument naming the parameter and value),
/// handles the empty cases and resolves Auto choices, then calls the backend's unchecked hook
/// (do_*). Backends implement only the hooks. All views passed to a backend live in its
/// memory_space(), except copy's, which may cross spaces.
class Backend : public DeviceContext {
 public:
  virtual Capabilities capabilities() const = 0;

  // ---- element-wise operations and reductions ---------------------------------------------
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
  /// dst := 2^exponent src rounded to FP16 (to nearest; the power of two is exact in FP32, and
  /// what leaves FP16's range goes to +-Inf or below its normal range as convert() has it),
  /// returning src's own exponent_histogram, unscaled (blocks, as exponent_histogram does): one
  /// pass over src where the backend fuses the two (the CUDA backend), so that a check of src's
  /// range, or scaling it into FP16's, costs no other pass over a large operand. Throws
  /// InvalidArgument for an exponent outside [-126, 127].
  ExponentHistogram convert_measured(MatrixView<const float> src, MatrixView<fp16> dst, int exponent = 0) {
    same_shape(src, dst);
    require(exponent >= -126 && exponent <= 127, "exponent", exponent, "must be in [-126, 127]");
    return src.empty() ? ExponentHistogram{} : do_convert_measured(src, dst, std::ldexp(1.0f, exponent));
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
  /// Counts of X's non-zero elements per FP32 exponent (one pass; blocks to return it).
  ExponentHistogram exponent_histogram(MatrixView<const float> x) {
    mine(x, "X");
    return x.empty() ? ExponentHistogram{} : do_exponent_histogram(x);
  }
  /// ||X||_F, accumulated in FP64 (blocks).
  double frobenius_norm(MatrixView<const float> x) { return mine(x, "X"), x.empty() ? 0.0 : do_frobenius_norm(x); }
  double frobenius_norm(MatrixView<const double> x) { return mine(x, "X"), x.empty() ? 0.0 : do_frobenius_norm(x); }

  // ---- products: C := alpha op(A) op(B) + beta C ---------------------------------------------
  /// FP32 operands in the precision `precision` names (ProductMode). k = 0 gives C := beta C, as
  /// in BLAS. Auto runs Split where capabilities().tensor_cores, else FP32; FP16 runs as TF32
  /// when an operand has an entry with |x| >= 2^15. `report`, when given, says what ran and why.
  void product(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
               MatrixView<float> c, ProductPrecision precision = {}, ProductReport* report = nullptr);
  /// A FP32, B FP16 (e.g. an FP16 sketch Omega). Split is SHGEMM (A split, B taken as it is); every
  /// other mode multiplies the exact FP32 widening of B.
  void product(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const fp16> b, float beta,
               MatrixView<float> c, ProductPrecision precision = {}, ProductReport* report = nullptr);
  /// A and B FP16, sums and C FP32: FP16 Tensor Cores (cuBLAS GemmEx) on the GPU, BLAS on the
  /// exact FP32 widening elsewhere. For an operand rounded to FP16 once and used by several
  /// products (the randomized LRA's "16|32"). k = 0 gives C := beta C.
  void product(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const fp16> b, float beta,
               MatrixView<float> c) {
    product_checks(ta, tb, a, b, c);
    if (c.empty()) return;
    if (op_cols(ta, a.rows(), a.cols()) == 0) return scale(beta, c);
    do_product(ta, tb, alpha, a, b, beta, c);
  }
  /// A, B, the sums and C all FP16 (the randomized LRA's "16|16"): cuBLAS with FP16 compute on the
  /// GPU; elsewhere each partial sum is rounded to FP16 in order of k (a reference that costs
  /// m n k element operations; Tensor Cores round in another order, so results differ by rounding).
  /// A partial sum beyond FP16's range gives +-Inf: callers keep the operands' scale in range.
  void product(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const fp16> b, float beta,
               MatrixView<fp16> c) {
    product_checks(ta, tb, a, b, c);
    if (!c.empty()) do_product(ta, tb, alpha, a, b, beta, c);
  }
  /// FP64: DGEMM.
  void product(Op ta, Op tb, double alpha, MatrixView<const double> a, MatrixView<const double> b, double beta,
               MatrixView<double> c) {
    product_checks(ta, tb, a, b, c);
    if (!c.empty()) do_product(ta, tb, alpha, a, b, beta, c);
  }
  /// C_i := alpha op(A_i) op(B_i) + beta C_i for i < C.count (BLAS's strided-batched GEMM; a
  /// stride of 0 reuses one matrix for every i). A.count and B.count must equal C.count.
  void product_strided_batched(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const float> b,
                               float beta, StridedBatch<float> c, ProductPrecision precision = {}) {
    batch_checks(ta, tb, a, b, c);
    if (c.count > 0 && !c.first.empty()) do_product_strided_batched(ta, tb, alpha, a, b, beta, c, resolve(precision));
  }
  /// A FP32, B FP16 (e.g. blocks of an FP16 sketch Omega): SHGEMM per matrix where `precision`
  /// resolves to Split, else the product of the exact FP32 widening of each B_i.
  void product_strided_batched(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const fp16> b,
                               float beta, StridedBatch<float> c, ProductPrecision precision = {}) {
    batch_checks(ta, tb, a, b, c);
    if (c.count == 0 || c.first.empty()) return;
    precision = resolve(precision);
    if (precision.mode == ProductMode::Split)
      return do_product_split_strided_batched(ta, tb, alpha, a, b, beta, c, precision.split);
    for (index_t i = 0; i < c.count; ++i) product(ta, tb, alpha, a.at(i), b.at(i), beta, c.at(i), precision);
  }
  void product_strided_batched(Op ta, Op tb, double alpha, StridedBatch<const double> a, StridedBatch<const double> b,
                               double beta, StridedBatch<double> c) {
    batch_checks(ta, tb, a, b, c);
    if (c.count > 0 && !c.first.empty()) do_product_strided_batched(ta, tb, alpha, a, b, beta, c);
  }

  /// C := alpha sum_i op(A_i) op(B_i) + beta C over i < C's batch count: one product whose K runs
  /// over the batches' matrices in turn (a tensor's middle-mode unfolding times a sketch: A_i its
  /// slices). A backend with a kernel for it runs one product (the CUDA backend: split products
  /// whose op(A_i) have a K of a multiple of 64 and whose B_i follow one another in B's rows);
  /// otherwise batches of products into partial sums, at most |A| / 16 elements of them, added up
  /// by one FP32 product with a vector of ones. count = A.count = B.count >= 1.
  void product_summed(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const fp16> b, float beta,
                      MatrixView<float> c, ProductPrecision precision = {}) {
    summed_checks(ta, tb, a, b, c);
    if (!c.empty()) do_product_summed(ta, tb, alpha, a, b, beta, c, resolve(precision));
  }
  void product_summed(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const float> b, float beta,
                      MatrixView<float> c, ProductPrecision precision = {}) {
    summed_checks(ta, tb, a, b, c);
    if (!c.empty()) do_product_summed(ta, tb, alpha, a, b, beta, c, resolve(precision));
  }

  // ---- dense factorizations -------------------------------------------------------------
  /// Householder QR of A (m x n, m >= n; LAPACK/cuSOLVER geqrf): R in A's upper triangle, the
  /// reflectors below it, their scalars in tau (n x 1).
  void qr(MatrixView<float> a, MatrixView<float> tau) {
    mine(a, "A"), mine(tau, "tau");
    require_tall(a, "A");
    require_shape(tau, a.cols(), 1, "tau");
    if (a.cols() > 0) do_qr(a, tau);
  }
  /// A := the thin Q (m x n) from qr's reflectors and tau (orgqr).
  void form_q(MatrixView<float> a, MatrixView<const float> tau) {
    mine(a, "A"), mine(tau, "tau");
    require_tall(a, "A");
    require_shape(tau, a.cols(), 1, "tau");
    if (a.cols() > 0) do_form_q(a, tau);
  }
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
  // The unchecked hooks: arguments have passed the public member's checks, views are not empty
  // unless the public member says otherwise, and a product's precision is resolved (no Auto).
  virtual void do_fill_random(const RandomDraw& draw, MatrixView<float> x) = 0;
  virtual void do_fill_random(const RandomDraw& draw, MatrixView<fp16> x) = 0;
  virtual void do_convert(MatrixView<const float> src, MatrixView<double> dst) = 0;
  virtual void do_convert(MatrixView<const double> src, MatrixView<float> dst) = 0;
  virtual void do_convert(MatrixView<const float> src, MatrixView<fp16> dst) = 0;
  virtual void do_convert(MatrixView<const fp16> src, MatrixView<float> dst) = 0;
  virtual void do_transpose(MatrixView<const float> src, MatrixView<float> dst) = 0;
  virtual void do_scale(float alpha, MatrixView<float> x) = 0;
  virtual void do_scale(double alpha, MatrixView<double> x) = 0;
  virtual void do_add(float alpha, MatrixView<const float> x, float beta, MatrixView<float> y) = 0;
  virtual void do_scale(MatrixView<const float> s, MatrixView<float> x, bool by_row) = 0;
  virtual void do_scale(MatrixView<const double> s, MatrixView<double> x, bool by_row) = 0;
  virtual void do_add_to_diagonal(MatrixView<double> g, double shift) = 0;
  virtual ExponentHistogram do_exponent_histogram(MatrixView<const float> x) = 0;
  /// scale: a power of two.
  virtual ExponentHistogram do_convert_measured(MatrixView<const float> src, MatrixView<fp16> dst, float scale) = 0;
  virtual double do_frobenius_norm(MatrixView<const float> x) = 0;
  virtual double do_frobenius_norm(MatrixView<const double> x) = 0;
  /// precision.mode is FP32, TF32, FP16 (operands known to fit) or Split.
  virtual void do_product(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
                          MatrixView<float> c, const ProductPrecision& precision, ProductReport* report) = 0;
  /// SHGEMM: A split in the format `format`, B FP16.
  virtual void do_product_split(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const fp16> b,
                                float beta, MatrixView<float> c, TensorCore format, ProductReport* report) = 0;
  virtual void do_product(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const fp16> b, float beta,
                          MatrixView<float> c) = 0;
  virtual void do_product(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const fp16> b, float beta,
                          MatrixView<fp16> c) = 0;
  virtual void do_product(Op ta, Op tb, double alpha, MatrixView<const double> a, MatrixView<const double> b,
                          double beta, MatrixView<double> c) = 0;
  /// One do_product per matrix of the batch; backends with a batched library call override these.
  virtual void do_product_strided_batched(Op ta, Op tb, float alpha, StridedBatch<const float> a,
                                          StridedBatch<const float> b, float beta, StridedBatch<float> c,
                                          const ProductPrecision& precision) {
    for (index_t i = 0; i < c.count; ++i) do_product(ta, tb, alpha, a.at(i), b.at(i), beta, c.at(i), precision, nullptr);
  }
  /// SHGEMM per matrix of the batch; backends with a batched kernel override it.
  virtual void do_product_split_strided_batched(Op ta, Op tb, float alpha, StridedBatch<const float> a,
                                                StridedBatch<const fp16> b, float beta, StridedBatch<float> c,
                                                TensorCore format) {
    for (index_t i = 0; i < c.count; ++i) do_product_split(ta, tb, alpha, a.at(i), b.at(i), beta, c.at(i), format, nullptr);
  }
  virtual void do_product_strided_batched(Op ta, Op tb, double alpha, StridedBatch<const double> a,
                                          StridedBatch<const double> b, double beta, StridedBatch<double> c) {
    for (index_t i = 0; i < c.count; ++i) do_product(ta, tb, alpha, a.at(i), b.at(i), beta, c.at(i));
  }
  /// Partial sums (summed_by_parts); backends with a kernel for it override these.
  virtual void do_product_summed(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const fp16> b,
                                 float beta, MatrixView<float> c, const ProductPrecision& precision) {
    summed_by_parts(ta, tb, alpha, a, b, beta, c, precision);
  }
  virtual void do_product_summed(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const float> b,
                                 float beta, MatrixView<float> c, const ProductPrecision& precision) {
    summed_by_parts(ta, tb, alpha, a, b, beta, c, precision);
  }
  /// Batches of products into `parts` partial sums (part j takes matrices j, j + parts, ...),
  /// then C := alpha (partial sums) 1 + beta C in FP32.
  template <class B>
  void summed_by_parts(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const B> b, float beta,
                       MatrixView<float> c, const ProductPrecision& precision);
  virtual void do_qr(MatrixView<float> a, MatrixView<float> tau) = 0;
  virtual void do_form_q(MatrixView<float> a, MatrixView<const float> tau) = 0;
  virtual int do_cholesky(MatrixView<double> g) = 0;
  virtual void do_triangular_solve(Side side, Op op, double alpha, MatrixView<const double> r, MatrixView<double> b) = 0;
  virtual void do_symmetric_eig(MatrixView<double> g, MatrixView<double> w) = 0;
  virtual void do_svd(MatrixView<float> a, MatrixView<float> s, MatrixView<float> u, MatrixView<float> vt,
                      SvdMethod method) = 0;

 private:
  /// Auto -> Split with Tensor Cores, FP32 without (the split products are only emulated there).
  ProductPrecision resolve(ProductPrecision p, ProductReport* report = nullptr) const {
    if (p.mode != ProductMode::Auto) return p;
    if (capabilities().tensor_cores) return ProductPrecision::split_in(p.split);
    if (report) report->why = "auto: " + description() + " has no Tensor Cores";
    return ProductPrecision::fp32();
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
  void checked_scale(MatrixView<const T> s, MatrixView<T> x, bool by_row) {
    mine(s, "s"), mine(x, "X");
    require_scale_shape(s, x, by_row);
    if (!x.empty()) do_scale(s, x, by_row);
  }
  template <class A, class B, class C>
  void product_checks(Op ta, Op tb, const MatrixView<A>& a, const MatrixView<B>& b, const MatrixView<C>& c) const {
    mine(a, "A"), mine(b, "B"), mine(c, "C");
    require_product_shapes(ta, tb, a, b, c);
  }
  /// What every FP32 product does first: the checks, the empty C, k = 0 (C := beta C), a fresh
  /// report and Auto resolved. False when nothing is left to compute.
  template <class B>
  bool product_prologue(Op ta, Op tb, const MatrixView<const float>& a, const MatrixView<B>& b, float beta,
                        MatrixView<float> c, ProductPrecision& precision, ProductReport* report) {
    product_checks(ta, tb, a, b, c);
    if (c.empty()) return false;
    if (report) {
      const bool later = report->settle_later;
      *report = ProductReport{};
      report->settle_later = later;
    }
    if (op_cols(ta, a.rows(), a.cols()) == 0) return scale(beta, c), false;
    precision = resolve(precision, report);
    return true;
  }
  template <class B>
  void summed_checks(Op ta, Op tb, const StridedBatch<const float>& a, const StridedBatch<const B>& b,
                     const MatrixView<float>& c) const {
    require_batch(a, "A", false), require_batch(b, "B", false);
    require(a.count >= 1, "A.count", a.count, "must be >= 1");
    require(b.count == a.count, "B.count", b.count, "must equal A.count = " + std::to_string(a.count));
    product_checks(ta, tb, a.first, b.first, c);
  }
  template <class A, class B, class C>
  void batch_checks(Op ta, Op tb, const StridedBatch<A>& a, const StridedBatch<B>& b, const StridedBatch<C>& c) const {
    require_batch(a, "A", false), require_batch(b, "B", false), require_batch(c, "C", true);
    require(a.count == c.count, "A.count", a.count, "must equal C.count = " + std::to_string(c.count));
    require(b.count == c.count, "B.count", b.count, "must equal C.count = " + std::to_string(c.count));
    product_checks(ta, tb, a.first, b.first, c.first);
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
  /// The same elements, sharing the memory, as a packed rows x cols matrix. Throws InvalidArgument
  /// where this matrix is not packed (ld = rows) or holds another number of elements.
  Matrix<T> reshaped(index_t rows, index_t cols, const std::string& name = "A") const {
    require(view_.ld() == view_.rows() || view_.cols() <= 1, name + ".ld", view_.ld(),
            "must equal the rows " + std::to_string(view_.rows()) + " to reshape");
    require(rows * cols == view_.size(), name + ".size", rows * cols, "must equal " + std::to_string(view_.size()));
    return Matrix<T>(storage_, MatrixView<T>(view_.data(), rows, cols, rows > 1 ? rows : 1, view_.space(), name));
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

template <class B>
void Backend::summed_by_parts(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const B> b,
                              float beta, MatrixView<float> c, const ProductPrecision& precision) {
  const index_t m = c.rows(), n = c.cols(), count = a.count;
  const index_t budget = std::max<index_t>(m * n, a.first.rows() * a.first.cols() * count / 16);
  const index_t parts = std::min(count, std::max<index_t>(1, budget / std::max<index_t>(m * n, 1)));
  Matrix<float> partial(*this, m * n, parts, "partial sums");
  const MatrixView<float> first(partial.data(), m, n, std::max<index_t>(m, 1), memory_space());
  const auto from = [](auto x, index_t i0, index_t count) {
    const auto& f = x.first;
    return decltype(x){decltype(x.first)(f.data() + i0 * x.stride, f.rows(), f.cols(), f.ld(), f.space()), x.stride,
                       count};
  };
  for (index_t i0 = 0; i0 < count; i0 += parts) {
    const index_t batch = std::min(parts, count - i0);
    product_strided_batched(ta, tb, 1.0f, from(a, i0, batch), from(b, i0, batch), i0 == 0 ? 0.0f : 1.0f,
                            StridedBatch<float>{first, m * n, batch}, precision);
  }
  Matrix<float> ones(*this, parts, 1, "ones"), sum(*this, m * n, 1, "sum");
  const std::vector<float> host(static_cast<std::size_t>(parts), 1.0f);
  copy(MatrixView<const float>(host.data(), parts, 1, parts, MemorySpace::Host), ones.view());
  product(Op::N, Op::N, 1.0f, partial, ones, 0.0f, sum, ProductPrecision::fp32());
  add(alpha, MatrixView<const float>(sum.data(), m, n, std::max<index_t>(m, 1), memory_space()), beta, c);
}

inline void Backend::product(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b,
                             float beta, MatrixView<float> c, ProductPrecision precision, ProductReport* report) {
  if (!product_prologue(ta, tb, a, b, beta, c, precision, report)) return;
  if (precision.mode == ProductMode::FP16 &&
      !(fits_fp16_unscaled(exponent_histogram(a)) && fits_fp16_unscaled(exponent_histogram(b)))) {
    precision = ProductPrecision::tf32();  // never Inf from finite input
    if (report) report->why = "fp16: an operand has entries with |x| >= 2^15, beyond FP16's range";
  }
  if (report) report->mode = precision.mode;
  do_product(ta, tb, alpha, a, b, beta, c, precision, report);
}

inline void Backend::product(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const fp16> b,
                             float beta, MatrixView<float> c, ProductPrecision precision, ProductReport* report) {
  if (!product_prologue(ta, tb, a, b, beta, c, precision, report)) return;
  if (precision.mode != ProductMode::Split) {
    const std::string why = report ? report->why : std::string();
    Matrix<float> wide(*this, b.rows(), b.cols(), "B");  // exact: every FP16 value is an FP32 value
    convert(b, wide.view());
    product(ta, tb, alpha, a, wide, beta, c, precision, report);
    if (report && report->why.empty()) report->why = why;
    return;
  }
  if (report) report->mode = ProductMode::Split;
  do_product_split(ta, tb, alpha, a, b, beta, c, precision.split, report);
}

}  // namespace randnla
