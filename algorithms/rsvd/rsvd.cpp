#include "rsvd.hpp"

#include <algorithm>
#include <cmath>

#include "common/checks.hpp"
#include "common/residual.hpp"
#include "sparse_projection/sparse_sign_projection.hpp"
#include "svd_through_gram.hpp"

namespace randnla {
namespace {

/// SVD of B = Bt^T (l x n, given as Bt, n x l): B = Uhat diag(s) V^T with Uhat l x l, V n x l.
/// Gram (and Auto): Bt = V diag(s) Uhat^T by svd_through_gram. Otherwise Bt = Q2 R,
/// R = Ur diag(s) Vr^T (Backend::svd), so V = Q2 Ur and Uhat = Vr.
void svd_of_wide(Backend& b, MatrixView<const float> bt, SmallSvd method, Matrix<float>& uhat, Matrix<float>& s,
                 Matrix<float>& v, RsvdReport& report) {
  const index_t n = bt.rows(), l = bt.cols();
  uhat = Matrix<float>(b, l, l, "Uhat");
  s = Matrix<float>(b, l, 1, "S");
  v = Matrix<float>(b, n, l, "V");
  if (method == SmallSvd::Gram || method == SmallSvd::Auto) {
    report.orthonormalizers.push_back(to_string(svd_through_gram(b, bt, v, s, uhat)));
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

/// The orthonormaliser of the bases between two products of a power iteration, which only carry
/// the span on to the next product (Halko, Martinsson & Tropp, Alg. 4.4; scikit-learn uses LU
/// there): Auto runs one CholeskyQR pass there, without the check that a second is not needed.
Orthonormalizer between_products(Orthonormalizer chosen) {
  return chosen == Orthonormalizer::Auto ? Orthonormalizer::CholeskyQR : chosen;
}

/// U = Q Uhat(:, 1:k), S = s(1:k), V = V(:, 1:k), made by `outputs`.
void assemble(Backend& b, Products& prod, MatrixView<const float> q, const Matrix<float>& uhat, const Matrix<float>& s,
              const Matrix<float>& v, index_t k, const MatrixAllocator& outputs, RsvdResult& res) {
  res.U = outputs(q.rows(), k, "U");
  prod.gemm(Op::N, Op::N, 1.0f, q, uhat.view().block(0, 0, uhat.rows(), k), 0.0f, res.U);
  res.S = outputs(k, 1, "S");
  b.copy(MatrixView<const float>(s.view()).block(0, 0, k, 1), res.S.view());
  res.V = outputs(v.rows(), k, "V");
  b.copy(MatrixView<const float>(v.view()).block(0, 0, v.rows(), k), res.V.view());
}

/// Y := A Omega (m x l). The sparse sign sketch is (S A^T)^T with S (l x n) the very sparse
/// operator, A's rows taken as the samples.
void sketch(Backend& b, Products& prod, MatrixView<const float> a, const RsvdOptions& o, Matrix<float>& y,
            RsvdReport& rep) {
  if (o.sketch_operator == SketchOperator::Gaussian) {
    const RandomOperator omega(RandomDistribution{a.cols(), y.cols(), Distribution::Gaussian}, RngState{o.seed, 0});
    return prod.sketch(a, omega, y, &rep.sketch_kernel);
  }
  require_no_nonfinite_entries(b, a);  // S reads only some of A: the sketch cannot vouch for the rest
  SparseProjectionOptions sparse;
  sparse.layout = SampleLayout::Rows;
  sparse.seed = o.seed;
  const SparseProjectionResult st = sparse_sign_projection(b, a, y.cols(), sparse);
  b.transpose(st.Y, y.view());
  rep.sketch_kernel = "sparse sign, p = " + detail::to_text(st.report.density) + ": " + st.report.kernel;
}

}  // namespace

RsvdResult rsvd(Backend& b, MatrixView<const float> a, index_t k, const RsvdOptions& o, const MatrixAllocator& out) {
  const index_t m = a.rows(), n = a.cols();
  require_rank_arguments(m, n, k, o.oversampling, o.power_iterations);
  require_space(a, b.memory_space(), "A");
  RsvdResult res;
  RsvdReport& rep = res.report;
  rep.backend = b.description();
  Stopwatch clock(b, &rep.phases, o.progress);
  const index_t l = k + o.oversampling;
  Products prod(b, o.sketch);
  Matrix<float> y(b, m, l, "Y");
  sketch(b, prod, a, o, y, rep);
  clock.lap("projection");
  require_finite_sketch(b, a, y);
  clock.lap("input check");
  const int q = o.power_iterations;
  const Orthonormalizer between = between_products(o.orthonormalizer);
  rep.orthonormalizers.push_back(to_string(orthonormalize(b, y.view(), q > 0 ? between : o.orthonormalizer)));
  clock.lap("orthonormalisation");
  Matrix<float> z(b, n, l, "Z");
  for (int i = 0; i < q; ++i) {
    prod.gemm(Op::T, Op::N, 1.0f, a, y, 0.0f, z);
    clock.lap("projection");
    rep.orthonormalizers.push_back(to_string(orthonormalize(b, z.view(), between)));
    clock.lap("orthonormalisation");
    prod.gemm(Op::N, Op::N, 1.0f, a, z, 0.0f, y);
    clock.lap("projection");
    rep.orthonormalizers.push_back(to_string(orthonormalize(b, y.view(), i + 1 < q ? between : o.orthonormalizer)));
    clock.lap("orthonormalisation");
  }

  Matrix<float> bt(b, n, l, "Bt");  // B^T = A^T Q: the orientation the small SVD reads
  prod.gemm(Op::T, Op::N, 1.0f, a, y, 0.0f, bt);
  clock.lap("Q^T A");
  Matrix<float> uhat, s, v;
  svd_of_wide(b, bt, o.small_svd, uhat, s, v, rep);
  clock.lap("small SVD");
  assemble(b, prod, y, uhat, s, v, k, out ? out : backend_matrices(b), res);
  clock.lap("U = Q Uhat");
  if (o.error_probes > 0) {
    rep.relative_error_estimate =
        residual_estimate(b, a, res.U, res.S, res.V, o.error_probes, o.seed, b.frobenius_norm(a));
    clock.lap("error estimate");
  }
  clock.finish();
  return res;
}

RsvdResult rsvd_fixed_accuracy(Backend& b, MatrixView<const float> a, const FixedAccuracyOptions& o,
                               const MatrixAllocator& out) {
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
  Stopwatch clock(b, &rep.phases, o.progress);
  const double norm_a = require_finite_norm(b, a);
  clock.lap("input check");

  Products prod(b, o.sketch);
  Matrix<float> q(b, m, max_rank, "Q"), bm(b, max_rank, n, "B");
  double remaining = norm_a * norm_a;  // ||A - Q B||_F^2 = ||A||_F^2 - ||B||_F^2 (Q orthonormal, B = Q^T A)
  index_t rank = 0;
  RngState state{o.seed, 0};  // each block's Omega_i is drawn from the state the last one left
  for (int step = 0; rank < max_rank && remaining > o.tolerance * o.tolerance * norm_a * norm_a; ++step) {
    const index_t bs = std::min(o.block_size, max_rank - rank);
    Matrix<float> yi(b, m, bs, "Y_i"), zi(b, n, bs, "Z_i");
    const RandomOperator omega_i(RandomDistribution{n, bs, Distribution::Gaussian}, state);
    prod.sketch(a, omega_i, yi, step == 0 ? &rep.sketch_kernel : nullptr);
    state = omega_i.next_state();
    const Orthonormalizer between = between_products(Orthonormalizer::Auto);
    for (int it = 0; it < o.power_iterations; ++it) {
      rep.orthonormalizers.push_back(to_string(orthonormalize(b, yi.view(), between)));
      prod.gemm(Op::T, Op::N, 1.0f, a, yi, 0.0f, zi);
      rep.orthonormalizers.push_back(to_string(orthonormalize(b, zi.view(), between)));
      prod.gemm(Op::N, Op::N, 1.0f, a, zi, 0.0f, yi);
    }
    clock.lap("projection");
    MatrixView<float> qk = q.view().block(0, 0, m, rank);
    for (int pass = 0; pass < 2; ++pass) {  // block Gram-Schmidt against Q, twice is enough
      if (rank > 0) {
        Matrix<float> c(b, rank, bs, "C");
        b.product(Op::T, Op::N, 1.0f, qk, yi, 0.0f, c, ProductPrecision::fp32());
        b.product(Op::N, Op::N, -1.0f, qk, c, 1.0f, yi, ProductPrecision::fp32());
      }
      rep.orthonormalizers.push_back(to_string(orthonormalize(b, yi.view(), Orthonormalizer::Auto)));
    }
    clock.lap("orthonormalisation");
    MatrixView<float> bi = bm.view().block(rank, 0, bs, n);
    prod.gemm(Op::T, Op::N, 1.0f, yi, a, 0.0f, bi);
    b.copy(yi.view(), q.view().block(0, rank, m, bs));
    const double nb = b.frobenius_norm(bi);
    remaining -= nb * nb;
    rank += bs;
    clock.lap("Q^T A");
  }
  Matrix<float> bt(b, n, rank, "Bt");
  b.transpose(MatrixView<const float>(bm.view()).block(0, 0, rank, n), bt.view());
  Matrix<float> uhat, s, v;
  svd_of_wide(b, bt, o.small_svd, uhat, s, v, rep);
  clock.lap("small SVD");
  assemble(b, prod, MatrixView<const float>(q.view()).block(0, 0, m, rank), uhat, s, v, rank,
           out ? out : backend_matrices(b), res);
  clock.lap("U = Q Uhat");
  rep.relative_error_estimate = std::sqrt(std::max(remaining, 0.0)) / (norm_a > 0 ? norm_a : 1.0);
  clock.finish();
  return res;
}

}  // namespace randnla
