#include "rsvd.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "svd_through_gram.hpp"

namespace randnla {

const char* to_string(SketchPrecision s) {
  switch (s) {
    case SketchPrecision::FP32: return "fp32";
    case SketchPrecision::TF32: return "tf32";
    case SketchPrecision::ShgemmFP16: return "shgemm-fp16";
    case SketchPrecision::ShgemmTF32: return "shgemm-tf32";
    default: return "auto";
  }
}

SketchPrecision parse_sketch_precision(const std::string& text, const std::string& parameter) {
  for (auto s : {SketchPrecision::FP32, SketchPrecision::TF32, SketchPrecision::ShgemmFP16,
                 SketchPrecision::ShgemmTF32, SketchPrecision::Auto})
    if (text == to_string(s)) return s;
  throw InvalidArgument(parameter, text, "must be fp32, tf32, shgemm-fp16, shgemm-tf32 or auto");
}

namespace {

/// Wall-clock milliseconds of the work queued since the last lap, the device synchronised.
class Stopwatch {
 public:
  using Progress = std::function<void(const std::string&, double)>;
  Stopwatch(Backend& b, Progress progress = nullptr) : b_(b), progress_(std::move(progress)), t_(now()) {}
  /// Milliseconds since the last lap, after the device finished; reported as `phase`.
  double lap(const char* phase = "") {
    b_.synchronize();
    const auto t = now();
    const double ms = std::chrono::duration<double, std::milli>(t - t_).count();
    t_ = t;
    if (progress_) progress_(phase, ms);
    return ms;
  }

 private:
  static std::chrono::steady_clock::time_point now() { return std::chrono::steady_clock::now(); }
  Backend& b_;
  Progress progress_;
  std::chrono::steady_clock::time_point t_;
};

/// The products of one RSVD run, all in the precision the options ask for.
class Products {
 public:
  Products(Backend& b, SketchPrecision s) : b_(b), s_(s) {}

  bool fp16_omega() const { return s_ != SketchPrecision::FP32 && s_ != SketchPrecision::TF32; }

  /// Y := A * Omega(spec); names the kernel that ran in *kernel when non-null.
  void sketch(MatrixView<const float> a, const RandomSpec& spec, index_t l, MatrixView<float> y,
              std::string* kernel) {
    if (fp16_omega()) {
      Matrix<fp16> omega(b_, a.cols(), l, "Omega");
      b_.fill_random(spec, omega.view());
      GemmReport r;
      b_.shgemm(Op::N, Op::N, 1.0f, a, omega, 0.0f, y, tensor_core(), kernel ? &r : nullptr);
      if (kernel) {
        *kernel = std::string("shgemm ") + to_string(r.a_format) + "-TC";
        if (r.a_format == TensorCore::FP16 && r.a_scale_exponent != 0)
          *kernel += " (A scaled by 2^" + std::to_string(r.a_scale_exponent) + ")";
        if (r.a_format == TensorCore::TF32 && s_ != SketchPrecision::ShgemmTF32)
          *kernel += " (auto: A holds Inf/NaN or elements more than 2^38 below its largest, beyond FP16's range)";
      }
    } else {
      Matrix<float> omega(b_, a.cols(), l, "Omega");
      b_.fill_random(spec, omega.view());
      b_.gemm(Op::N, Op::N, 1.0f, a, omega, 0.0f, y, baseline());
      if (kernel) *kernel = s_ == SketchPrecision::FP32 ? "sgemm fp32" : "gemm tf32-TC";
    }
  }

  /// C := alpha op(A) op(B) + beta C for two FP32 operands.
  void gemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> bm, float beta,
            MatrixView<float> c) {
    if (fp16_omega())
      b_.tcec_sgemm(ta, tb, alpha, a, bm, beta, c, tensor_core());
    else
      b_.gemm(ta, tb, alpha, a, bm, beta, c, baseline());
  }

 private:
  TensorCore tensor_core() const {
    return s_ == SketchPrecision::ShgemmFP16 ? TensorCore::FP16
                                             : s_ == SketchPrecision::ShgemmTF32 ? TensorCore::TF32 : TensorCore::Auto;
  }
  GemmPrecision baseline() const { return s_ == SketchPrecision::TF32 ? GemmPrecision::TF32 : GemmPrecision::FP32; }
  Backend& b_;
  SketchPrecision s_;
};

void require_no_nonfinite_entries(Backend& b, MatrixView<const float> a) {
  const std::int64_t bad = b.exponent_histogram(a).nonfinite();
  require(bad == 0, "A", std::to_string(bad) + " non-finite entries", "must be finite");
}

/// Any Inf or NaN in a row of A makes that row of Y = A Omega non-finite (every product of the
/// library keeps IEEE semantics for them), so A itself is scanned only when Y is not finite, to
/// say why: non-finite entries, or entries so large that the product overflows FP32.
void require_finite_sketch(Backend& b, MatrixView<const float> a, MatrixView<const float> y) {
  if (b.exponent_histogram(y).nonfinite() == 0) return;
  require_no_nonfinite_entries(b, a);
  throw InvalidArgument("A", "a matrix with ||A||_F = " + detail::to_text(b.frobenius_norm(a)),
                        "is too large: the sketch A * Omega overflows FP32 (scale A down; its SVD scales with it)");
}

/// ||A||_F in FP64, which no finite FP32 matrix can overflow: it is finite exactly when A is.
double require_finite_norm(Backend& b, MatrixView<const float> a) {
  const double norm = b.frobenius_norm(a);
  if (!std::isfinite(norm)) require_no_nonfinite_entries(b, a);
  return norm;
}

/// SVD of B = Bt^T (l x n, given as Bt, n x l): B = Uhat diag(s) V^T with Uhat l x l, V n x l.
/// Gram (and Auto): Bt = V diag(s) Uhat^T by svd_through_gram. Otherwise Bt = Q2 R,
/// R = Ur diag(s) Vr^T (Backend::svd), so V = Q2 Ur and Uhat = Vr.
void svd_of_wide(Backend& b, MatrixView<const float> bt, SvdMethod method, Matrix<float>& uhat, Matrix<float>& s,
                 Matrix<float>& v, RsvdReport& report) {
  const index_t n = bt.rows(), l = bt.cols();
  uhat = Matrix<float>(b, l, l, "Uhat");
  s = Matrix<float>(b, l, 1, "S");
  v = Matrix<float>(b, n, l, "V");
  if (method == SvdMethod::Gram || method == SvdMethod::Auto) {
    report.orthonormalizers.push_back(to_string(svd_through_gram(b, bt, v, s, uhat)));
    return;
  }
  Matrix<float> q2(b, n, l, "Q2");
  b.copy(bt, q2.view());
  report.orthonormalizers.push_back(to_string(orthonormalize(b, q2.view(), Orthonormalizer::Auto)));
  Matrix<float> r(b, l, l, "R"), ur(b, l, l, "Ur"), vrt(b, l, l, "VrT");
  b.gemm(Op::T, Op::N, 1.0f, q2, bt, 0.0f, r, GemmPrecision::FP32);
  b.svd(r.view(), s.view(), ur.view(), vrt.view(), method);
  b.transpose(vrt, uhat.view());
  b.gemm(Op::N, Op::N, 1.0f, q2, ur, 0.0f, v, GemmPrecision::FP32);
}

/// The orthonormaliser of the bases between two products of a power iteration, which only carry
/// the span on to the next product (Halko, Martinsson & Tropp, Alg. 4.4; scikit-learn uses LU
/// there): Auto runs one CholeskyQR pass there, without the check that a second is not needed.
Orthonormalizer between_products(Orthonormalizer chosen) {
  return chosen == Orthonormalizer::Auto ? Orthonormalizer::CholeskyQR : chosen;
}

/// Leading k columns (or rows for S) copied into a matrix of their own.
Matrix<float> leading_columns(Backend& b, MatrixView<const float> x, index_t k, const std::string& name) {
  Matrix<float> out(b, x.rows(), k, name);
  b.copy(x.block(0, 0, x.rows(), k), out.view());
  return out;
}

/// ||A - U diag(S) V^T||_F / ||A||_F estimated with r Gaussian probes g: E||E g||^2 = ||E||_F^2.
double residual_estimate(Backend& b, MatrixView<const float> a, const RsvdResult& res, int probes,
                         std::uint64_t seed, double norm_a) {
  if (probes <= 0 || norm_a == 0.0) return probes <= 0 ? -1.0 : 0.0;
  const index_t m = a.rows(), n = a.cols(), k = res.S.rows();
  Matrix<float> g(b, n, probes, "G"), y(b, m, probes, "Y"), t(b, k, probes, "T"), us(b, m, k, "US");
  b.fill_random(RandomSpec{Distribution::Gaussian, seed, 0xE5717A7Eull}, g.view());
  b.gemm(Op::N, Op::N, 1.0f, a, g, 0.0f, y, GemmPrecision::FP32);
  b.gemm(Op::T, Op::N, 1.0f, res.V, g, 0.0f, t, GemmPrecision::FP32);
  b.copy(res.U.view(), us.view());
  b.scale_columns(res.S, us.view());
  b.gemm(Op::N, Op::N, -1.0f, us, t, 1.0f, y, GemmPrecision::FP32);
  return b.frobenius_norm(y) / std::sqrt(static_cast<double>(probes)) / norm_a;
}

/// U = Q Uhat(:, 1:k), S = s(1:k), V = V(:, 1:k).
void assemble(Backend& b, Products& prod, MatrixView<const float> q, const Matrix<float>& uhat, const Matrix<float>& s,
              const Matrix<float>& v, index_t k, RsvdResult& res) {
  res.U = Matrix<float>(b, q.rows(), k, "U");
  prod.gemm(Op::N, Op::N, 1.0f, q, uhat.view().block(0, 0, uhat.rows(), k), 0.0f, res.U);
  res.S = leading_columns(b, MatrixView<const float>(s.view()).block(0, 0, k, 1), 1, "S");
  res.V = leading_columns(b, v, k, "V");
}

}  // namespace

RsvdResult rsvd(Backend& b, MatrixView<const float> a, index_t k, const RsvdOptions& o) {
  const index_t m = a.rows(), n = a.cols(), p = o.oversampling;
  require(k > 0, "k", k, "must be > 0");
  require(p >= 0, "oversampling", p, "must be >= 0");
  require(o.power_iterations >= 0, "power_iterations", o.power_iterations, "must be >= 0");
  require(k + p <= std::min(m, n), "k + oversampling", k + p,
          "must be <= min(m, n) = " + std::to_string(std::min(m, n)));
  require_space(a, b.memory_space(), "A");
  RsvdResult res;
  RsvdReport& rep = res.report;
  rep.backend = b.description();
  Stopwatch clock(b, o.progress);
  const index_t l = k + p;
  Products prod(b, o.sketch);
  Matrix<float> y(b, m, l, "Y");
  prod.sketch(a, RandomSpec{Distribution::Gaussian, o.seed, 0}, l, y, &rep.sketch_kernel);
  rep.ms_projection += clock.lap("projection");
  require_finite_sketch(b, a, y);
  rep.ms_check = clock.lap("input check");
  const int q = o.power_iterations;
  const Orthonormalizer between = between_products(o.orthonormalizer);
  rep.orthonormalizers.push_back(to_string(orthonormalize(b, y.view(), q > 0 ? between : o.orthonormalizer)));
  rep.ms_orthonormalization += clock.lap("orthonormalisation");
  Matrix<float> z(b, n, l, "Z");
  for (int i = 0; i < q; ++i) {
    prod.gemm(Op::T, Op::N, 1.0f, a, y, 0.0f, z);
    rep.ms_projection += clock.lap("projection");
    rep.orthonormalizers.push_back(to_string(orthonormalize(b, z.view(), between)));
    rep.ms_orthonormalization += clock.lap("orthonormalisation");
    prod.gemm(Op::N, Op::N, 1.0f, a, z, 0.0f, y);
    rep.ms_projection += clock.lap("projection");
    rep.orthonormalizers.push_back(to_string(orthonormalize(b, y.view(), i + 1 < q ? between : o.orthonormalizer)));
    rep.ms_orthonormalization += clock.lap("orthonormalisation");
  }

  Matrix<float> bt(b, n, l, "Bt");  // B^T = A^T Q: the orientation the small SVD reads
  prod.gemm(Op::T, Op::N, 1.0f, a, y, 0.0f, bt);
  rep.ms_qt_a = clock.lap("Q^T A");
  Matrix<float> uhat, s, v;
  svd_of_wide(b, bt, o.small_svd, uhat, s, v, rep);
  rep.ms_small_svd = clock.lap("small SVD");
  assemble(b, prod, y, uhat, s, v, k, res);
  rep.ms_u = clock.lap("U = Q Uhat");
  if (o.error_probes > 0)
    rep.relative_error_estimate = residual_estimate(b, a, res, o.error_probes, o.seed, b.frobenius_norm(a));
  rep.ms_error = clock.lap("error estimate");
  return res;
}

RsvdResult rsvd_fixed_accuracy(Backend& b, MatrixView<const float> a, const FixedAccuracyOptions& o) {
  const index_t m = a.rows(), n = a.cols();
  require(o.tolerance > 0.0 && o.tolerance < 1.0, "tolerance", o.tolerance, "must lie in (0, 1)");
  require(o.block_size > 0, "block_size", o.block_size, "must be > 0");
  const index_t max_rank = o.max_rank < 0 ? std::min(m, n) : o.max_rank;
  require(max_rank > 0 && max_rank <= std::min(m, n), "max_rank", max_rank,
          "must lie in 1..min(m, n) = " + std::to_string(std::min(m, n)));
  require(o.power_iterations >= 0, "power_iterations", o.power_iterations, "must be >= 0");
  require_space(a, b.memory_space(), "A");
  RsvdResult res;
  RsvdReport& rep = res.report;
  rep.backend = b.description();
  Stopwatch clock(b);
  const double norm_a = require_finite_norm(b, a);
  rep.ms_check = clock.lap();

  Products prod(b, o.sketch);
  Matrix<float> q(b, m, max_rank, "Q"), bm(b, max_rank, n, "B");
  double remaining = norm_a * norm_a;  // ||A - Q B||_F^2 = ||A||_F^2 - ||B||_F^2 (Q orthonormal, B = Q^T A)
  index_t rank = 0;
  for (std::uint64_t step = 0; rank < max_rank && remaining > o.tolerance * o.tolerance * norm_a * norm_a; ++step) {
    const index_t bs = std::min(o.block_size, max_rank - rank);
    Matrix<float> yi(b, m, bs, "Y_i"), zi(b, n, bs, "Z_i");
    prod.sketch(a, RandomSpec{Distribution::Gaussian, o.seed, step}, bs, yi, step == 0 ? &rep.sketch_kernel : nullptr);
    const Orthonormalizer between = between_products(Orthonormalizer::Auto);
    for (int it = 0; it < o.power_iterations; ++it) {
      rep.orthonormalizers.push_back(to_string(orthonormalize(b, yi.view(), between)));
      prod.gemm(Op::T, Op::N, 1.0f, a, yi, 0.0f, zi);
      rep.orthonormalizers.push_back(to_string(orthonormalize(b, zi.view(), between)));
      prod.gemm(Op::N, Op::N, 1.0f, a, zi, 0.0f, yi);
    }
    rep.ms_projection += clock.lap();
    MatrixView<float> qk = q.view().block(0, 0, m, rank);
    for (int pass = 0; pass < 2; ++pass) {  // block Gram-Schmidt against Q, twice is enough
      if (rank > 0) {
        Matrix<float> c(b, rank, bs, "C");
        b.gemm(Op::T, Op::N, 1.0f, qk, yi, 0.0f, c, GemmPrecision::FP32);
        b.gemm(Op::N, Op::N, -1.0f, qk, c, 1.0f, yi, GemmPrecision::FP32);
      }
      rep.orthonormalizers.push_back(to_string(orthonormalize(b, yi.view(), Orthonormalizer::Auto)));
    }
    rep.ms_orthonormalization += clock.lap();
    MatrixView<float> bi = bm.view().block(rank, 0, bs, n);
    prod.gemm(Op::T, Op::N, 1.0f, yi, a, 0.0f, bi);
    b.copy(yi.view(), q.view().block(0, rank, m, bs));
    const double nb = b.frobenius_norm(bi);
    remaining -= nb * nb;
    rank += bs;
    rep.ms_qt_a += clock.lap();
  }
  Matrix<float> bt(b, n, rank, "Bt");
  b.transpose(MatrixView<const float>(bm.view()).block(0, 0, rank, n), bt.view());
  Matrix<float> uhat, s, v;
  svd_of_wide(b, bt, o.small_svd, uhat, s, v, rep);
  rep.ms_small_svd = clock.lap();
  assemble(b, prod, MatrixView<const float>(q.view()).block(0, 0, m, rank), uhat, s, v, rank, res);
  rep.ms_u = clock.lap();
  rep.relative_error_estimate = std::sqrt(std::max(remaining, 0.0)) / (norm_a > 0 ? norm_a : 1.0);
  return res;
}

}  // namespace randnla
