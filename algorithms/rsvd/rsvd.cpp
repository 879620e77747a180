#include "rsvd.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "randnla/common/checks.hpp"
#include "randnla/common/residual.hpp"
#include "rsvd_of_operator.hpp"
#include "randnla/sparse_projection/sparse_sign_projection.hpp"
#include "svd_through_gram.hpp"

namespace randnla {
namespace {

/// SVD of B = Bt^T (l x n, given as Bt, n x l): B = Uhat diag(s) V^T with Uhat l x l, V n x l.
/// Gram (and Auto): Bt = V diag(s) Uhat^T by svd_through_gram. Otherwise Bt = Q2 R,
/// R = Ur diag(s) Vr^T (Backend::svd), so V = Q2 Ur and Uhat = Vr.
void svd_of_wide(Backend& b, Matrix<float> bt, SmallSvd method, Matrix<float>& uhat, Matrix<float>& s, Matrix<float>& v,
                 RsvdReport& report) {
  const index_t n = bt.rows(), l = bt.cols();
  uhat = Matrix<float>(b, l, l, "Uhat");
  s = Matrix<float>(b, l, 1, "S");
  v = Matrix<float>(b, n, l, "V");
  if (method == SmallSvd::Gram || method == SmallSvd::Auto) {
    report.orthonormalizers.push_back(to_string(svd_through_gram(b, std::move(bt), v, s, uhat)));
    return;
  }
  Matrix<float> q2(b, n, l, "Q2");
  b.copy(bt, q2.view());
  report.orthonormalizers.push_back(to_string(orthonormalize(b, q2.view(), Orthonormalizer::Auto)));
  Matrix<float> r(b, l, l, "R"), ur(b, l, l, "Ur"), vrt(b, l, l, "VrT");
  b.product(Op::T, Op::N, 1.0f, q2, bt, 0.0f, r, ProductPrecision::fp32());
  b.svd(r.view(), s.view(), ur.view(), vrt.view(), parse_enum<SvdMethod>(to_string(method), "small_svd"));
  b.transpose(vrt, uhat.view());
  b.product(Op::N, Op::N, 1.0f, q2, ur, 0.0f, v, ProductPrecision::fp32());
}

/// U = Q Uhat(:, 1:k) (where form_u), S = s(1:k), V = V(:, 1:k), made by `outputs`.
void assemble(Backend& b, Products& prod, MatrixView<const float> q, const Matrix<float>& uhat, const Matrix<float>& s,
              const Matrix<float>& v, index_t k, bool form_u, const MatrixAllocator& outputs, RsvdResult& res) {
  if (form_u) {
    res.U = outputs(q.rows(), k, "U");
    prod.gemm(Op::N, Op::N, 1.0f, q, uhat.view().block(0, 0, uhat.rows(), k), 0.0f, res.U);
  }
  res.S = outputs(k, 1, "S");
  b.copy(MatrixView<const float>(s.view()).block(0, 0, k, 1), res.S.view());
  res.V = outputs(v.rows(), k, "V");
  b.copy(MatrixView<const float>(v.view()).block(0, 0, v.rows(), k), res.V.view());
}

/// A sketched by the very sparse sign operator S (l x n), never stored: Y = (S A^T)^T, A's rows
/// taken as the samples (sparse_sign_projection).
class SparseSignSketched final : public DenseOperator {
 public:
  SparseSignSketched(Products& prod, MatrixView<const float> a, std::uint64_t seed)
      : DenseOperator(prod, a), seed_(seed) {}

  void sketch(const RandomOperator& omega, MatrixView<float> y, std::string* kernel) override {
    require_no_nonfinite_entries(b_, stored());  // S reads only some of A: the sketch cannot vouch for the rest
    SparseProjectionOptions sparse;
    sparse.layout = SampleLayout::Rows;
    sparse.seed = seed_;
    const SparseProjectionResult st = sparse_sign_projection(b_, stored(), omega.distribution().cols, sparse);
    b_.transpose(st.Y, y);
    if (kernel) *kernel = "sparse sign, p = " + detail::to_text(st.report.density) + ": " + st.report.kernel;
  }

 private:
  std::uint64_t seed_;
};

std::unique_ptr<DenseOperator> sketched_operator(Products& prod, MatrixView<const float> a, const RsvdOptions& o) {
  if (o.sketch_operator == SketchOperator::Gaussian) return std::make_unique<DenseOperator>(prod, a);
  return std::make_unique<SparseSignSketched>(prod, a, o.seed);
}

}  // namespace

void rsvd_of_operator(LinearOperator& a, Products& prod, index_t k, const RangeFinderOptions& range,
                      SmallSvd small_svd, bool form_u, Stopwatch& clock, const MatrixAllocator& outputs,
                      RsvdResult& res) {
  Backend& b = a.backend();
  RsvdReport& rep = res.report;
  RangeFinder finder(a, &clock, rep.orthonormalizers);
  const Matrix<float> q = finder.basis(sketch_columns(k, range.oversampling), range, RngState{range.seed, 0},
                                       &rep.sketch_kernel);
  Matrix<float> bt = a.apply_transpose(q);  // B^T = A^T Q: the orientation the small SVD reads
  clock.lap("Q^T A");
  Matrix<float> uhat, s, v;
  svd_of_wide(b, std::move(bt), small_svd, uhat, s, v, rep);  // B^T goes in it: 15 GB at 14.3M x 266
  clock.lap("small SVD");
  assemble(b, prod, q, uhat, s, v, k, form_u, outputs, res);
  if (form_u) clock.lap("U = Q Uhat");
}

RsvdResult rsvd(Backend& b, MatrixView<const float> a, index_t k, const RsvdOptions& o, const MatrixAllocator& out) {
  const index_t m = a.rows(), n = a.cols();
  require_rank_arguments(m, n, k, o.oversampling, o.power_iterations);
  require_space(a, b.memory_space(), "A");
  RsvdResult res;
  RsvdReport& rep = res.report;
  rep.backend = b.description();
  Stopwatch clock(b, &rep.phases, o.progress);
  Products prod(b, o.products);
  const std::unique_ptr<DenseOperator> op = sketched_operator(prod, a, o);
  rsvd_of_operator(*op, prod, k, range_options(o), o.small_svd, /*form_u=*/true, clock,
                   out ? out : backend_matrices(b), res);
  if (o.error_probes > 0) {
    rep.relative_error_estimate =
        residual_estimate(b, a, res.U, res.S, res.V, o.error_probes, o.seed, b.frobenius_norm(a));
    clock.lap("error estimate");
  }
  clock.finish();
  return res;
}

void require_fixed_accuracy_arguments(index_t m, index_t n, const FixedAccuracyOptions& o) {
  require(o.tolerance > 0.0 && o.tolerance < 1.0, "tolerance", o.tolerance, "must lie in (0, 1)");
  require(o.block_size > 0, "block_size", o.block_size, "must be > 0");
  const index_t max_rank = o.max_rank < 0 ? std::min(m, n) : o.max_rank;
  require(max_rank > 0 && max_rank <= std::min(m, n), "max_rank", max_rank,
          "must lie in 1..min(m, n) = " + std::to_string(std::min(m, n)));
  require(o.power_iterations >= 0, "power_iterations", o.power_iterations, "must be >= 0");
}

void rsvd_fixed_accuracy_of_operator(LinearOperator& a, Products& prod, const FixedAccuracyOptions& o, double norm_a,
                                     Stopwatch& clock, const MatrixAllocator& outputs, RsvdResult& res) {
  Backend& b = a.backend();
  const index_t m = a.rows(), n = a.cols();
  const index_t max_rank = o.max_rank < 0 ? std::min(m, n) : o.max_rank;
  RsvdReport& rep = res.report;
  RangeFinder range(a, &clock, rep.orthonormalizers);
  Matrix<float> q(b, m, max_rank, "Q"), bm(b, max_rank, n, "B");
  double remaining = norm_a * norm_a;  // ||A - Q B||_F^2 = ||A||_F^2 - ||B||_F^2 (Q orthonormal, B = Q^T A)
  index_t rank = 0;
  RngState state{o.seed, 0};  // each block's Omega_i is drawn from the state the last one left
  for (int step = 0; rank < max_rank && remaining > o.tolerance * o.tolerance * norm_a * norm_a; ++step) {
    const index_t bs = std::min(o.block_size, max_rank - rank);
    Matrix<float> yi(b, m, bs, "Y_i");
    state = range.sketch(state, yi.view(), step == 0 ? &rep.sketch_kernel : nullptr);
    range.power_iterations(yi.view(), o.power_iterations, Orthonormalizer::Auto);
    MatrixView<float> qk = q.view().block(0, 0, m, rank);
    for (int pass = 0; pass < 2; ++pass) {  // block Gram-Schmidt against Q, twice is enough
      if (rank > 0) {
        Matrix<float> c(b, rank, bs, "C");
        b.product(Op::T, Op::N, 1.0f, qk, yi, 0.0f, c, ProductPrecision::fp32());
        b.product(Op::N, Op::N, -1.0f, qk, c, 1.0f, yi, ProductPrecision::fp32());
      }
      range.orthonormalize_range(yi.view(), Orthonormalizer::Auto);
    }
    clock.lap("orthonormalisation");
    MatrixView<float> bi = bm.view().block(rank, 0, bs, n);
    a.project_rows(yi, bi);
    b.copy(yi.view(), q.view().block(0, rank, m, bs));
    const double nb = b.frobenius_norm(bi);
    remaining -= nb * nb;
    rank += bs;
    clock.lap("Q^T A");
  }
  Matrix<float> bt(b, n, rank, "Bt");
  b.transpose(MatrixView<const float>(bm.view()).block(0, 0, rank, n), bt.view());
  Matrix<float> uhat, s, v;
  svd_of_wide(b, std::move(bt), o.small_svd, uhat, s, v, rep);
  clock.lap("small SVD");
  assemble(b, prod, MatrixView<const float>(q.view()).block(0, 0, m, rank), uhat, s, v, rank, /*form_u=*/true, outputs,
           res);
  clock.lap("U = Q Uhat");
  rep.relative_error_estimate = std::sqrt(std::max(remaining, 0.0)) / (norm_a > 0 ? norm_a : 1.0);
  clock.finish();
}

RsvdResult rsvd_fixed_accuracy(Backend& b, MatrixView<const float> a, const FixedAccuracyOptions& o,
                               const MatrixAllocator& out) {
  require_fixed_accuracy_arguments(a.rows(), a.cols(), o);
  require_space(a, b.memory_space(), "A");
  RsvdResult res;
  res.report.backend = b.description();
  Stopwatch clock(b, &res.report.phases, o.progress);
  const double norm_a = require_finite_norm(b, a);
  clock.lap("input check");
  Products prod(b, o.products);
  DenseOperator op(prod, a, Op::N, /*checked=*/true);
  rsvd_fixed_accuracy_of_operator(op, prod, o, norm_a, clock, out ? out : backend_matrices(b), res);
  return res;
}

}  // namespace randnla
