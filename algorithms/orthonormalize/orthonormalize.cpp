#include "orthonormalize.hpp"

#include "cholesky_qr_ops.hpp"
#include "cholesky_step.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <type_traits>

#include "randnla/random_operator.hpp"
#include "randnla/sparse_projection/sparse_sign_projection.hpp"
#include "randnla/tsqr/tsqr.hpp"

namespace randnla {

namespace {

/// An FP64 panel Y (m x l) where the CholeskyQR chain reads it: column-major, or stored as Y^T
/// (l x m, column-major: a row-major Y's memory), every product then with the roles swapped
/// (G = Y^T Y as X X^T, Q^T = R^{-T} X for X = Y^T). Results of the chain keep the orientation.
struct Panel {
  MatrixView<const double> stored;
  bool transposed = false;
  index_t rows() const { return transposed ? stored.cols() : stored.rows(); }
  index_t cols() const { return transposed ? stored.rows() : stored.cols(); }
  Panel holding(MatrixView<const double> next) const { return {next, transposed}; }
};

Matrix<double> gram(Backend& b, const Panel& y) {
  Matrix<double> g(b, y.cols(), y.cols(), "G");
  if (y.transposed) b.product(Op::N, Op::T, 1.0, y.stored, y.stored, 0.0, g);
  else b.product(Op::T, Op::N, 1.0, y.stored, y.stored, 0.0, g);
  return g;
}

/// ||G - I||_F; G is left as it was (G ~ I, so subtracting and adding 1 back is exact on its diagonal).
double distance_from_identity(Backend& b, MatrixView<double> g) {
  b.add_to_diagonal(g, -1.0);
  const double d = b.frobenius_norm(MatrixView<const double>(g));
  b.add_to_diagonal(g, 1.0);
  return d;
}

enum class Pass { Cholesky, Scaled, Breakdown };

/// rinv := R^{-1}, R the Cholesky factor of G: the backend's kernel where it takes G's order (one
/// launch on the GPU), else potrf, then trsm on the identity (G overwritten). False on a breakdown
/// (a pivot not positive and finite).
bool inverse_cholesky_factor(Backend& b, MatrixView<double> g, MatrixView<double> rinv) {
  CholeskyQrOps& ops = b.ops<CholeskyQrOps>();
  if (g.rows() <= ops.inverse_cholesky_max_order()) {
    Matrix<double> work(b, ops.inverse_cholesky_workspace(g.rows()), 1, "inverse Cholesky workspace");
    return ops.inverse_cholesky_factor(g, rinv, work.view()) == 0;
  }
  if (b.cholesky(g) != 0) return false;
  b.scale(0.0, rinv);
  b.add_to_diagonal(rinv, 1.0);
  b.triangular_solve(Side::Left, Op::N, 1.0, g, rinv);
  return true;
}

/// Householder QR (geqrf, then orgqr): A (m x n, m >= n) := its thin Q factor.
template <class T>
void householder_q(Backend& b, MatrixView<T> a) {
  Matrix<T> tau(b, a.cols(), 1, "tau");
  b.qr(a, tau);
  b.form_q(a, tau);
}

/// Y R^{-1}, one triangular product with the inverse Cholesky factor, into a new matrix (stored as
/// Y is; transposed, R^{-T} Y^T as a GEMM: R^{-1}'s strict lower triangle is zero).
Matrix<double> multiply_by_inverse_factor(Backend& b, const Panel& y, MatrixView<const double> rinv) {
  Matrix<double> q(b, y.stored.rows(), y.stored.cols(), "Q");
  if (y.transposed) b.product(Op::T, Op::N, 1.0, rinv, y.stored, 0.0, q.view());
  else b.ops<CholeskyQrOps>().multiply_upper_triangular(y.stored, rinv, q.view());
  return q;
}

/// Q := Y in Q's precision: rounded to FP32 once, or copied.
void write_q(Backend& b, MatrixView<const double> y, MatrixView<float> q) { b.convert(y, q); }
void write_q(Backend& b, MatrixView<const double> y, MatrixView<double> q) { b.copy(y, q); }

/// Q := Y D in Q's precision (stored as Y is; D = diag(d)): one rounding to FP32, by the backend's
/// fused kernel where Y is column-major.
template <class T>
void write_scaled(Backend& b, const Panel& y, MatrixView<const double> d, MatrixView<T> q) {
  if constexpr (std::is_same<T, float>::value)
    if (!y.transposed) return b.ops<CholeskyQrOps>().convert_scaled(y.stored, d, q);
  Matrix<double> scaled(b, y.stored.rows(), y.stored.cols(), "Y D");
  b.copy(y.stored, scaled.view());
  if (y.transposed) b.scale_rows(d, scaled.view());
  else b.scale_columns(d, scaled.view());
  write_q(b, scaled.view(), q);
}

/// One CholeskyQR pass (cholesky_step): next := Y R^{-1}, or Pass::Scaled with Q = Y D (D in d).
/// Y is not written.
Pass cholesky_qr_pass(Backend& b, const Panel& y, Matrix<double>& next, Matrix<double>& d, double identity_tolerance) {
  Matrix<double> g = gram(b, y), rinv(b, y.cols(), y.cols(), "R^-1");
  switch (cholesky_step(b, g, d, rinv, identity_tolerance)) {
    case CholeskyStep::Scaled: return Pass::Scaled;
    case CholeskyStep::Breakdown: return Pass::Breakdown;
    case CholeskyStep::Factored: break;
  }
  next = multiply_by_inverse_factor(b, y, rinv);
  return Pass::Cholesky;
}

/// Shifted CholeskyQR's first pass: Fukaya, Kannan, Nakatsukasa, Yamamoto, Yanagisawa (2020),
/// Eq. (4.2): shift s = 11 (mn + n(n+1)) u ||Y||_2^2, with ||Y||_F >= ||Y||_2 and u the FP64 unit
/// roundoff. False on a breakdown.
bool shifted_cholesky_qr_pass(Backend& b, const Panel& y, Matrix<double>& next) {
  const double m = static_cast<double>(y.rows()), l = static_cast<double>(y.cols());
  const double norm = b.frobenius_norm(y.stored);
  const double u = std::numeric_limits<double>::epsilon() / 2;
  Matrix<double> g = gram(b, y), rinv(b, y.cols(), y.cols(), "R^-1");
  b.add_to_diagonal(g, 11.0 * (m * l + l * (l + 1)) * u * norm * norm);
  if (!inverse_cholesky_factor(b, g, rinv)) return false;
  next = multiply_by_inverse_factor(b, y, rinv);
  return true;
}

/// CholeskyQR in FP64 of Y (not written), Q := the result in Q's precision: `passes` passes, or with
/// passes = 0 (Auto) passes until the equilibrated Gram matrix is I to Q's unit roundoff, at most two with a Cholesky
/// factorisation; after a shifted first pass when `shifted`. Q is written only on success: when
/// ||Q||_F is finite and at most 2 sqrt(l) (an orthonormal Q has sqrt(l); a larger one is no
/// basis; a pass that ends in the scaling has ||Q||_F^2 = trace(D G D) within l 2^-24 of l
/// already). Returns the Cholesky passes run (0: Y's columns were orthogonal), -1 on failure.
template <class T>
int cholesky_qr(Backend& b, const Panel& y0, MatrixView<T> q, int passes, bool shifted) {
  Matrix<double> latest, d(b, y0.cols(), 1, "D");
  Panel y = y0;
  if (shifted) {
    if (!shifted_cholesky_qr_pass(b, y, latest)) return -1;
    y = y.holding(latest.view());
  }
  const bool adaptive = passes == 0;
  int ran = 0;
  for (int p = 0; p < (adaptive ? 2 : passes); ++p) {
    const Pass pass = cholesky_qr_pass(b, y, latest, d, adaptive ? unit_roundoff<T>() : 0.0);
    if (pass == Pass::Breakdown) return -1;
    if (pass == Pass::Scaled) {
      write_scaled(b, y, d, q);
      return ran;
    }
    y = y.holding(latest.view());
    ++ran;
  }
  const double norm = b.frobenius_norm(y.stored);
  if (!(norm <= 2.0 * std::sqrt(static_cast<double>(y.cols())))) return -1;
  write_q(b, y.stored, q);
  return ran;
}

/// The sketch Omega^T Y ((2l) x l, FP32) of Y (m x l, FP32; stored as Y^T, l x m, where
/// `transposed`): Omega Gaussian in FP16, the product SHGEMM on Tensor Cores; or, `sparse`, S Y
/// with S a sparse sign operator of density min(1, 8 / 2l) (about 8 non-zeros in each of its m
/// columns: an oblivious subspace embedding; Meng & Mahoney 2013, Cohen 2016), never stored.
Matrix<float> sketch_of(Backend& b, MatrixView<const float> y32, index_t s, bool sparse, bool transposed) {
  const index_t m = transposed ? y32.cols() : y32.rows(), l = transposed ? y32.rows() : y32.cols();
  Matrix<float> sketch(b, s, l, "Omega^T Y");
  if (sparse) {
    SparseProjectionOptions o;
    o.layout = transposed ? SampleLayout::Rows : SampleLayout::Columns;  // the same samples, S and S Y
    o.density = SparseDensity::Given;
    o.density_value = std::min(1.0, 8.0 / static_cast<double>(s));
    o.seed = kPreconditionerSketchSeed;
    b.copy(MatrixView<const float>(sparse_sign_projection(b, y32, s, o).Y.view()), sketch.view());
    return sketch;
  }
  Matrix<float> sketch_t(b, l, s, "Omega^T Y^T");
  const RandomOperator omega({m, s, Distribution::Gaussian}, RngState{kPreconditionerSketchSeed, 0});
  b.product(transposed ? Op::N : Op::T, Op::N, 1.0f, y32, omega.materialize<fp16>(b), 0.0f, sketch_t,
            ProductPrecision::automatic());
  b.transpose(sketch_t, sketch.view());
  return sketch;
}

/// Z := Y R0^{-1} (FP64, stored as Y is), R0 the R of a Householder QR of the sketch of Y
/// (sketch_of): range(Y) embedded with distortion O(1), so Z is well conditioned whatever Y's
/// condition number (Higgins et al., Algorithm 2).
Matrix<double> sketch_preconditioned(Backend& b, const Panel& y, bool sparse) {
  const index_t l = y.cols(), s = std::min(y.rows(), 2 * l);
  Matrix<float> y32(b, y.stored.rows(), y.stored.cols(), "Y"), tau(b, l, 1, "tau");
  b.convert(y.stored, y32.view());
  Matrix<float> sketch = sketch_of(b, y32, s, sparse, y.transposed);
  b.qr(sketch.view(), tau.view());
  Matrix<double> r0(b, l, l, "R0"), z(b, y.stored.rows(), y.stored.cols(), "Z");
  b.convert(MatrixView<const float>(sketch.view().block(0, 0, l, l)), r0.view());  // trsm reads the upper triangle
  b.copy(y.stored, z.view());
  if (y.transposed) b.triangular_solve(Side::Left, Op::T, 1.0, r0, z.view());  // Z^T = R0^{-T} Y^T
  else b.triangular_solve(Side::Right, Op::N, 1.0, r0, z.view());
  return z;
}

/// Q (m x l, FP32, column-major) := Q of Householder QR, or of the TSQR where `tree`, of Q as given.
Orthonormalizer householder_or_tsqr(Backend& b, MatrixView<float> q, bool tree) {
  if (!tree) {
    householder_q(b, q);
    return Orthonormalizer::Householder;
  }
  TsqrOptions o;
  o.q_buffer = q;
  tsqr(b, q, o);
  return Orthonormalizer::Tsqr;
}
/// The same in FP64, which has no tree: Householder QR for both.
Orthonormalizer householder_or_tsqr(Backend& b, MatrixView<double> q, bool /*tree*/) {
  householder_q(b, q);
  return Orthonormalizer::Householder;
}

/// Householder QR (or the TSQR, `tree`) of Q stored as Y is: a transposed Q goes through an m x l
/// buffer (LAPACK and cuSOLVER factor column-major memory).
Orthonormalizer householder_or_tsqr(Backend& b, const Panel& y, MatrixView<float> q, bool tree) {
  if (!y.transposed) return householder_or_tsqr(b, q, tree);
  Matrix<float> column_major(b, y.rows(), y.cols(), "Y");
  b.transpose(MatrixView<const float>(q), column_major.view());
  const Orthonormalizer ran = householder_or_tsqr(b, column_major.view(), tree);
  b.transpose(MatrixView<const float>(column_major.view()), q);
  return ran;
}
Orthonormalizer householder_or_tsqr(Backend& b, const Panel& /*column-major*/, MatrixView<double> q, bool tree) {
  return householder_or_tsqr(b, q, tree);
}

/// The fallback chain CholeskyQR/CholeskyQR2/Auto -> ShiftedCholeskyQR3 -> Householder on the FP64
/// panel Y (which no attempt writes); Q (FP32 or FP64) is stored as Y is; `y_into_q` puts Y into Q
/// for Householder QR.
template <class T>
Orthonormalizer orthonormalize_with_fallback(Backend& b, const Panel& y, const std::function<void()>& y_into_q,
                                             MatrixView<T> q, Orthonormalizer method) {
  if (method == Orthonormalizer::RandCholeskyQR || method == Orthonormalizer::RandCholeskyQRSparse) {
    const Matrix<double> z = sketch_preconditioned(b, y, method == Orthonormalizer::RandCholeskyQRSparse);
    if (cholesky_qr(b, y.holding(z.view()), q, 0, false) >= 0) return method;
  } else if (method != Orthonormalizer::Householder && method != Orthonormalizer::ShiftedCholeskyQR3 &&
             method != Orthonormalizer::Tsqr) {
    const int asked = method == Orthonormalizer::CholeskyQR || method == Orthonormalizer::OnePass ? 1
                      : method == Orthonormalizer::CholeskyQR2                                    ? 2
                                                                                                  : 0;
    switch (cholesky_qr(b, y, q, asked, false)) {
      case 0: return Orthonormalizer::ColumnScaling;
      case 1: return Orthonormalizer::CholeskyQR;
      case 2: return Orthonormalizer::CholeskyQR2;
      default: break;
    }
  }
  const bool householder = method == Orthonormalizer::Householder || method == Orthonormalizer::Tsqr;
  if (!householder && cholesky_qr(b, y, q, 2, true) >= 0) return Orthonormalizer::ShiftedCholeskyQR3;
  y_into_q();
  return householder_or_tsqr(b, y, q, method == Orthonormalizer::Tsqr);
}

/// The fused path's passes for `method` (0: Auto's adaptive passes), or -1 where it has none.
int fused_passes(Orthonormalizer method) {
  switch (method) {
    case Orthonormalizer::Auto: return 0;
    case Orthonormalizer::CholeskyQR:
    case Orthonormalizer::OnePass: return 1;
    case Orthonormalizer::CholeskyQR2: return 2;
    default: return -1;
  }
}

/// Auto, CholeskyQR and CholeskyQR2 queued on the backend's fused path (no FP64 copy of Y, no
/// wait), where the backend prefers it for Y's shape; null where it does not take Y.
OrthonormalizationVerdict queue_fused_cholesky_qr(Backend& b, MatrixView<float> y, Orthonormalizer method) {
  CholeskyQrOps& ops = b.ops<CholeskyQrOps>();
  if (fused_passes(method) < 0 || !ops.fused_preferred(y.rows(), y.cols())) return nullptr;
  Matrix<double> work(b, ops.fused_workspace(y.rows(), y.cols()), 1, "fused CholeskyQR workspace");
  const std::function<int()> passes = ops.queue_fused_cholesky_qr(y, fused_passes(method), work.view());
  return [passes]() -> std::optional<Orthonormalizer> {
    switch (passes()) {
      case 0: return Orthonormalizer::ColumnScaling;
      case 1: return Orthonormalizer::CholeskyQR;
      case 2: return Orthonormalizer::CholeskyQR2;
      default: return std::nullopt;
    }
  };
}

/// One Tensor Core CholeskyQR pass, Q := Y R^{-1} (Q not overlapping Y), queued: G = Y^T Y (its
/// lower triangle) and Y R^{-1} (R^{-1} upper triangular) as FP32-accurate split products (TCEC:
/// Ootomo & Yokota 2022; FP16 or TF32 by the operands' exponent ranges), R^{-1} from the
/// equilibrated G in FP64. Returns the pass's verdict, read when called (after the next wait it
/// costs none): false on a Cholesky breakdown (Q then holds no result).
std::function<bool()> queue_split_cholesky_qr_pass(Backend& b, MatrixView<const float> y, MatrixView<float> q) {
  const index_t l = y.cols();
  CholeskyQrOps& ops = b.ops<CholeskyQrOps>();
  Matrix<float> g32(b, l, l, "G"), rinv32(b, l, l, "R^-1");
  Matrix<double> g(b, l, l, "G"), d(b, l, 1, "D"), rinv(b, l, l, "R^-1");
  Matrix<double> work(b, ops.inverse_cholesky_workspace(l), 1, "inverse Cholesky workspace");
  ops.split_gram(y, g32);
  b.convert(MatrixView<const float>(g32.view()), g.view());
  ops.equilibrate(g, d);
  const std::function<int()> breakdown = ops.queue_inverse_cholesky_factor(g, rinv, work);
  b.scale_rows(d, rinv);
  b.convert(MatrixView<const double>(rinv.view()), rinv32.view());
  ops.split_multiply_upper_triangular(y, rinv32, q);
  return [breakdown] { return breakdown() == 0; };
}

/// The same pass, its verdict waited for.
bool split_cholesky_qr_pass(Backend& b, MatrixView<const float> y, MatrixView<float> q) {
  return queue_split_cholesky_qr_pass(b, y, q)();
}

/// The Tensor Core CholeskyQR's bound on ||Q^T Q - I||_F: 2^-20 sqrt(l), about 6x what FP32
/// Householder QR reaches (2.7 2^-24 sqrt(l) in perf_tests/results/bench_qr.md) and 9x what one
/// pass reaches on a well-conditioned Y (2.5e-6 at 65536 x 512).
double split_orthogonality_bound(index_t l) { return 0x1p-20 * std::sqrt(static_cast<double>(l)); }

/// ||Q^T Q - I||_F estimated from eight Gaussian probes in FP64 (CholeskyQrOps::orthogonality_probe);
/// Q copied into `copy_to` on the way where it is not empty.
double estimated_orthogonality_loss(Backend& b, MatrixView<const float> q, MatrixView<float> copy_to) {
  constexpr index_t kProbes = 8;
  CholeskyQrOps& ops = b.ops<CholeskyQrOps>();
  const index_t l = q.cols();
  Matrix<float> omega(b, l, kProbes, "Omega");
  Matrix<double> work(b, ops.orthogonality_probe_workspace(q.rows(), l, kProbes), 1, "work");
  b.fill_random(RandomSpec{Distribution::Gaussian, kPreconditionerSketchSeed, 1}, omega.view());
  return std::sqrt(ops.orthogonality_probe(q, omega, copy_to, work) / kProbes);
}

/// Y where the split products stream it in place, else its copy in `copy` (Matrix::aligned): one
/// copy instead of one inside each product.
MatrixView<const float> streamed(Backend& b, MatrixView<const float> y, Matrix<float>& copy) {
  if (b.ops<CholeskyQrOps>().split_streams_in_place(y)) return y;
  copy = Matrix<float>::aligned(b, y.rows(), y.cols(), "Y, aligned");
  b.copy(y, copy.view());
  return copy.view();
}

/// Auto's Tensor Core CholeskyQR of Y in place (where CholeskyQrOps::split_preferred): one split
/// pass into a buffer, accepted (and copied into Y) where the probes put ||Q^T Q - I||_F within
/// split_orthogonality_bound; else a second pass from the buffer into Y (CholeskyQR2, Yamamoto et
/// al. 2015), checked the same way. Nothing on a breakdown or a failed check: Y then spans
/// range(Y) as given (Y itself, or a pass's Q), for the FP64 path to take over.
std::optional<Orthonormalizer> split_cholesky_qr(Backend& b, MatrixView<float> y) {
  Matrix<float> copy, w = Matrix<float>::aligned(b, y.rows(), y.cols(), "Y R^-1");
  if (!split_cholesky_qr_pass(b, streamed(b, y, copy), w.view())) return std::nullopt;
  if (estimated_orthogonality_loss(b, w.view(), y) <= split_orthogonality_bound(y.cols()))
    return Orthonormalizer::CholeskyQR;
  if (!split_cholesky_qr_pass(b, w.view(), y)) return std::nullopt;
  if (!(estimated_orthogonality_loss(b, y, {}) <= split_orthogonality_bound(y.cols()))) return std::nullopt;
  return Orthonormalizer::CholeskyQR2;
}

/// OnePass's Tensor Core pass, Y := Y R^{-1} (queue_split_cholesky_qr_pass), kept where it neither
/// broke down nor left ||Q||_F above 2 sqrt(l) (as the FP64 path's check: a larger Q is no basis);
/// false otherwise, Y then as given. The norm's wait is the only one: the verdict is read after it.
/// Q and Y must not overlap, so one of them is a buffer W: Q, copied into Y once kept, or, where
/// the split products would copy Y (split_streams_in_place), Y's copy, and Q is written into Y.
bool split_one_pass(Backend& b, MatrixView<float> y) {
  Matrix<float> w = Matrix<float>::aligned(b, y.rows(), y.cols(), "W");
  const bool w_holds_y = !b.ops<CholeskyQrOps>().split_streams_in_place(y);
  if (w_holds_y) b.copy(MatrixView<const float>(y), w.view());
  const MatrixView<float> q = w_holds_y ? y : w.view();
  const std::function<bool()> factored = queue_split_cholesky_qr_pass(b, w_holds_y ? w.view() : y, q);
  const double norm = b.frobenius_norm(MatrixView<const float>(q));
  const bool kept = factored() && norm <= 2.0 * std::sqrt(static_cast<double>(y.cols()));
  if (kept != w_holds_y) b.copy(MatrixView<const float>(w.view()), y);  // Q into Y, or Y restored
  return kept;
}

/// R0^{-1} (l x l, FP32, upper triangular with a zero strict lower triangle) of the R that a
/// Householder QR left in the upper triangle of `factored` (s x l, s >= l).
Matrix<float> inverse_of_sketch_factor(Backend& b, MatrixView<const float> factored) {
  const index_t l = factored.cols();
  Matrix<double> r0(b, l, l, "R0"), r0inv(b, l, l, "R0^-1");
  b.convert(factored.block(0, 0, l, l), r0.view());  // trsm reads the upper triangle
  b.scale(0.0, r0inv.view());
  b.add_to_diagonal(r0inv.view(), 1.0);
  b.triangular_solve(Side::Left, Op::N, 1.0, r0, r0inv.view());
  Matrix<float> r0inv32(b, l, l, "R0^-1");
  b.convert(MatrixView<const double>(r0inv.view()), r0inv32.view());
  return r0inv32;
}

/// Whether the fused or the Tensor Core CholeskyQR takes an m x l panel on this backend.
bool tensor_core_path_takes(Backend& b, index_t m, index_t l) {
  const CholeskyQrOps& ops = b.ops<CholeskyQrOps>();
  return ops.fused_preferred(m, l) || ops.split_preferred(m, l);
}

/// The sketch-preconditioned CholeskyQR without an FP64 copy of Y, where tensor_core_path_takes
/// Y's shape: R0 from an FP32 Householder QR of the sketch of Y (sketch_of: a subspace embedding,
/// so Z = Y R0^{-1} is well conditioned whatever cond(Y) up to about 1/u: Higgins, Szyld, Boman &
/// Yamazaki, Algorithm 2; the sketch and its small QR need only low precision), Z as an
/// FP32-accurate split product, then Auto's fused or Tensor Core CholeskyQR on Z, Y := its Q (two
/// m x l FP32 buffers at most, a third of the FP64 path's working memory).
/// Nothing where a step breaks down (an exactly rank-deficient Y makes R0 singular): Y is then
/// as given, for the FP64 path to take over.
std::optional<Orthonormalizer> tensor_core_preconditioned_cholesky_qr(Backend& b, MatrixView<float> y, bool sparse) {
  const index_t m = y.rows(), l = y.cols();
  Matrix<float> sketch = sketch_of(b, y, std::min(m, 2 * l), sparse, false), tau(b, l, 1, "tau");
  b.qr(sketch.view(), tau.view());
  const Matrix<float> r0inv = inverse_of_sketch_factor(b, sketch.view());
  Matrix<float> z = Matrix<float>::aligned(b, m, l, "Y R0^-1");
  b.product(Op::N, Op::N, 1.0f, MatrixView<const float>(y), r0inv.view(), 0.0f, z.view(),
            ProductPrecision::split_in(TensorCore::Auto));
  std::optional<Orthonormalizer> ran;
  if (const OrthonormalizationVerdict fused = queue_fused_cholesky_qr(b, z.view(), Orthonormalizer::Auto))
    ran = fused();
  else if (b.ops<CholeskyQrOps>().split_preferred(m, l))
    ran = split_cholesky_qr(b, z.view());
  if (!ran) return std::nullopt;
  b.copy(MatrixView<const float>(z.view()), y);
  return sparse ? Orthonormalizer::RandCholeskyQRSparse : Orthonormalizer::RandCholeskyQR;
}

/// The two preconditioned methods on the Tensor Cores, where that path takes Y's shape. Auto does
/// not take it where its own passes break down: the FP64 path's CholeskyQR2 is faster there (its
/// Gram matrix survives any FP32 Y short of exact rank deficiency, whose rounding caps cond(Y)) and
/// more accurate (perf_tests/results/bench_qr.md, --conditions).
std::optional<Orthonormalizer> preconditioned_on_tensor_cores(Backend& b, MatrixView<float> y, Orthonormalizer method) {
  const bool asked = method == Orthonormalizer::RandCholeskyQR || method == Orthonormalizer::RandCholeskyQRSparse;
  if (!asked || !tensor_core_path_takes(b, y.rows(), y.cols())) return std::nullopt;
  return tensor_core_preconditioned_cholesky_qr(b, y, method == Orthonormalizer::RandCholeskyQRSparse);
}

void require_tall(MatrixView<const float> y) {
  require(y.rows() >= y.cols(), "Y.rows", y.rows(), "must be >= Y.cols = " + std::to_string(y.cols()));
}

}  // namespace

CholeskyStep cholesky_step(Backend& b, MatrixView<double> g, MatrixView<double> d, MatrixView<double> rinv,
                           double identity_tolerance) {
  b.ops<CholeskyQrOps>().equilibrate(g, d);
  if (identity_tolerance > 0 && distance_from_identity(b, g) <= identity_tolerance) return CholeskyStep::Scaled;
  if (!inverse_cholesky_factor(b, g, rinv)) return CholeskyStep::Breakdown;
  b.scale_rows(d, rinv);
  return CholeskyStep::Factored;
}

Orthonormalizer orthonormalize(Backend& backend, MatrixView<float> y, Orthonormalizer method) {
  require_tall(y);
  if (y.cols() == 0) return method;
  if (const OrthonormalizationVerdict fused = queue_fused_cholesky_qr(backend, y, method))
    if (const std::optional<Orthonormalizer> ran = fused()) return *ran;
  if (method == Orthonormalizer::Auto && backend.ops<CholeskyQrOps>().split_preferred(y.rows(), y.cols()))
    if (const std::optional<Orthonormalizer> ran = split_cholesky_qr(backend, y)) return *ran;
  if (method == Orthonormalizer::OnePass && backend.ops<CholeskyQrOps>().split_preferred(y.rows(), y.cols()) &&
      split_one_pass(backend, y))
    return Orthonormalizer::CholeskyQR;
  if (const std::optional<Orthonormalizer> ran = preconditioned_on_tensor_cores(backend, y, method)) return *ran;
  Matrix<double> yd(backend, y.rows(), y.cols(), "Y");
  backend.convert(MatrixView<const float>(y), yd.view());
  return orthonormalize_with_fallback(backend, Panel{yd.view()}, [] {}, y, method);
}

Orthonormalizer orthonormalize(Backend& backend, MatrixView<double> y, Orthonormalizer method) {
  require(y.rows() >= y.cols(), "Y.rows", y.rows(), "must be >= Y.cols = " + std::to_string(y.cols()));
  if (y.cols() == 0) return method;
  return orthonormalize_with_fallback(backend, Panel{y}, [] {}, y, method);  // Q is written once found
}

Orthonormalizer orthonormalize(Backend& backend, Transposed<float> y, Orthonormalizer method) {
  const MatrixView<float> yt = y.stored;
  require(yt.cols() >= yt.rows(), "Y.rows", yt.cols(), "must be >= Y.cols = " + std::to_string(yt.rows()));
  if (yt.rows() == 0) return method;
  Matrix<double> yd(backend, yt.rows(), yt.cols(), "Y^T");
  backend.convert(MatrixView<const float>(yt), yd.view());
  return orthonormalize_with_fallback(backend, Panel{yd.view(), true}, [] {}, yt, method);
}

OrthonormalizationVerdict orthonormalize_queued(Backend& backend, MatrixView<float> y, Orthonormalizer method) {
  require_tall(y);
  if (y.cols() > 0)
    if (OrthonormalizationVerdict fused = queue_fused_cholesky_qr(backend, y, method)) return fused;
  const Orthonormalizer ran = orthonormalize(backend, y, method);
  return [ran] { return std::optional<Orthonormalizer>(ran); };
}

double orthogonality_loss(Backend& b, MatrixView<const float> q) {
  Matrix<double> qd(b, q.rows(), q.cols(), "Q"), g(b, q.cols(), q.cols(), "G");
  b.convert(q, qd.view());
  b.product(Op::T, Op::N, 1.0, qd, qd, 0.0, g.view());
  b.add_to_diagonal(g.view(), -1.0);
  return b.frobenius_norm(MatrixView<const double>(g.view()));
}

double factorization_residual(Backend& b, MatrixView<const float> a, MatrixView<const float> q,
                              MatrixView<const float> r) {
  Matrix<float> e(b, a.rows(), a.cols(), "E");
  b.copy(a, e.view());
  b.product(Op::N, Op::N, -1.0f, q, r, 1.0f, e, ProductPrecision::fp32());
  const double norm = b.frobenius_norm(a);
  return norm > 0 ? b.frobenius_norm(e) / norm : 0.0;
}

Orthonormalizer orthonormalize(Backend& backend, MatrixView<const double> y, MatrixView<float> q,
                               Orthonormalizer method) {
  require(y.rows() >= y.cols(), "Y.rows", y.rows(), "must be >= Y.cols = " + std::to_string(y.cols()));
  require_shape(q, y.rows(), y.cols(), "Q");
  if (y.cols() == 0) return method;
  return orthonormalize_with_fallback(backend, Panel{y}, [&] { backend.convert(y, q); }, q, method);
}

}  // namespace randnla
