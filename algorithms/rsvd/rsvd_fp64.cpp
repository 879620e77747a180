// The randomized SVD of FP64 data with FP32 and FP16 sketches (rsvd.hpp).
#include <algorithm>
#include <cmath>
#include <memory>

#include "randnla/common/checks.hpp"
#include "randnla/common/range_finder.hpp"
#include "rsvd.hpp"
#include "svd_through_gram.hpp"

namespace randnla {
namespace {

/// The power of two e such that 2^e ||A||_F lies in [1, 2), or 0 where ||A||_F is already within
/// 2^+-60 of 1: FP32 then holds every entry of any size that matters to the sketch (those below
/// 2^-126 of ||A||_F lie far below its rounding).
int fp32_scale_exponent(double norm) {
  if (norm == 0.0 || (norm >= 0x1p-60 && norm <= 0x1p60)) return 0;
  return -std::ilogb(norm);
}

/// step(j0, 2^e A(:, j0 : j0 + c)) for blocks of A's columns of 8 MiB, scaled in one FP64 buffer.
template <class Step>
void for_scaled_columns(Backend& b, MatrixView<const double> a, int e, Step step) {
  const index_t m = a.rows(), n = a.cols();
  const index_t cols = std::max<index_t>(1, std::min<index_t>(n, (8 << 20) / (8 * std::max<index_t>(m, 1))));
  Matrix<double> buffer(b, m, cols, "columns of A, scaled");
  for (index_t j0 = 0; j0 < n; j0 += cols) {
    const MatrixView<double> part = buffer.view().block(0, 0, m, std::min(cols, n - j0));
    b.copy(a.block(0, j0, m, part.cols()), part);
    b.scale(std::ldexp(1.0, e), part);
    step(j0, MatrixView<const double>(part));
  }
}

/// ||A||_F, measured again on 2^-600 A or 2^600 A where its sum of squares overflows or underflows
/// FP64 (entries beyond about 1e154, or all below about 1e-154). Not finite exactly when A is not.
double frobenius_norm_of(Backend& b, MatrixView<const double> a) {
  const double norm = b.frobenius_norm(a);
  const bool overflowed = std::isinf(norm), underflowed = norm < 0x1p-500;
  if (!overflowed && !underflowed) return norm;
  const int e = overflowed ? -600 : 600;
  double squares = 0;
  for_scaled_columns(b, a, e, [&](index_t, MatrixView<const double> part) {
    const double p = b.frobenius_norm(part);
    squares += p * p;
  });
  return std::ldexp(std::sqrt(squares), -e);
}

/// A32 := 2^e A rounded once to FP32 (m x n), e from fp32_scale_exponent: one pass over A.
Matrix<float> rounded_to_fp32(Backend& b, MatrixView<const double> a, int e) {
  Matrix<float> a32 = Matrix<float>::aligned(b, a.rows(), a.cols(), "A in FP32");
  if (e == 0) {
    b.convert(a, a32.view());
    return a32;
  }
  for_scaled_columns(b, a, e, [&](index_t j0, MatrixView<const double> part) {
    b.convert(part, a32.view().block(0, j0, part.rows(), part.cols()));
  });
  return a32;
}

/// One FP64 step of subspace iteration, on 2^e A (`scale`, so that no Gram matrix over- or underflows), from the FP32 basis Q0 (Halko, Martinsson & Tropp 2011,
/// Alg. 4.4's step): Z = orth(A^T Q0), Q = orth(A Z), DGEMMs and FP64 orthonormalisations. Q0
/// spans A's dominant subspace up to FP32 rounding; A A^T maps what it missed of range(A) back
/// into range(A) in FP64, so an exactly rank-k A is recovered to FP64 rounding.
Matrix<double> refined_basis(Backend& b, MatrixView<const double> a, double scale, MatrixView<const float> q0,
                             Orthonormalizer method, RsvdReport& rep) {
  const index_t m = a.rows(), n = a.cols(), l = q0.cols();
  Matrix<double> q(b, m, l, "Q"), z(b, n, l, "Z");
  b.convert(q0, q.view());
  b.product(Op::T, Op::N, scale, a, q, 0.0, z.view());
  rep.orthonormalizers.push_back(to_string(orthonormalize(b, z.view(), Orthonormalizer::Auto)));
  b.product(Op::N, Op::N, scale, a, z, 0.0, q.view());
  rep.orthonormalizers.push_back(to_string(orthonormalize(b, q.view(), method)));
  return q;
}

/// U = Q Uhat(:, 1:k), S = s(1:k), V = V(:, 1:k), made by `outputs`.
void assemble(Backend& b, MatrixView<const double> q, const Matrix<double>& uhat, const Matrix<double>& s,
              const Matrix<double>& v, index_t k, const MatrixAllocatorOf<double>& outputs, RsvdResultOf<double>& res) {
  res.U = outputs(q.rows(), k, "U");
  b.product(Op::N, Op::N, 1.0, q, MatrixView<const double>(uhat.view()).block(0, 0, uhat.rows(), k), 0.0, res.U.view());
  res.S = outputs(k, 1, "S");
  b.copy(MatrixView<const double>(s.view()).block(0, 0, k, 1), res.S.view());
  res.V = outputs(v.rows(), k, "V");
  b.copy(MatrixView<const double>(v.view()).block(0, 0, v.rows(), k), res.V.view());
}

/// sqrt(||A||_F^2 - sum_i S_i^2) / ||A||_F: ||A - U diag(S) V^T||_F / ||A||_F exactly where
/// U diag(S) V^T = U U^T A (the truncated SVD of the projection); it cancels below about 1e-8.
/// Both factors relative to ||A||_F, so that no product leaves FP64's range (||A||_F ~ 1e200).
double residual_from_norms(Backend& b, MatrixView<const double> s, double norm_a) {
  if (norm_a == 0.0) return 0.0;
  const double kept = frobenius_norm_of(b, s) / norm_a;
  return std::sqrt(std::max(0.0, (1.0 - kept) * (1.0 + kept)));
}

}  // namespace

RsvdResultOf<double> rsvd(Backend& b, MatrixView<const double> a, index_t k, const RsvdOptions& o,
                          const MatrixAllocatorOf<double>& out) {
  const index_t m = a.rows(), n = a.cols();
  require_rank_arguments(m, n, k, o.oversampling, o.power_iterations);
  require_space(a, b.memory_space(), "A");
  require(o.sketch_operator == SketchOperator::Gaussian, "sketch_operator", to_string(o.sketch_operator),
          "must be gaussian for FP64 data");
  RsvdResultOf<double> res;
  RsvdReport& rep = res.report;
  rep.backend = b.description();
  Stopwatch clock(b, &rep.phases, o.progress);
  const double norm_a = frobenius_norm_of(b, a);
  require(std::isfinite(norm_a), "A", "||A||_F = " + detail::to_text(norm_a),
          "must be finite (no Inf or NaN entries, and ||A||_F within FP64's range)");
  const int e = fp32_scale_exponent(norm_a);
  const Matrix<float> a32 = rounded_to_fp32(b, a, e);
  clock.lap("input check and A in FP32");
  Products prod(b, o.products);
  DenseOperator op(prod, a32, Op::N, /*checked=*/true);
  RangeFinder finder(op, &clock, rep.orthonormalizers);
  const RangeFinderOptions range = range_options(o);
  const Matrix<float> q0 = finder.basis(sketch_columns(k, o.oversampling), range, RngState{o.seed, 0},
                                        &rep.sketch_kernel);
  rep.sketch_kernel += e == 0 ? " (A rounded to FP32)" : " (A scaled by 2^" + std::to_string(e) + ", rounded to FP32)";
  const double scale = std::ldexp(1.0, e);  // the FP64 products too: their Gram matrices square A's scale
  const Matrix<double> q = refined_basis(b, a, scale, q0, o.orthonormalizer, rep);
  clock.lap("FP64 refinement");
  Matrix<double> bt(b, n, q.cols(), "B^T");
  b.product(Op::T, Op::N, scale, a, q, 0.0, bt.view());  // B^T = 2^e A^T Q: the orientation the small SVD reads
  clock.lap("Q^T A");
  const index_t l = q.cols();
  Matrix<double> uhat(b, l, l, "Uhat"), s(b, l, 1, "S"), v(b, n, l, "V");
  rep.orthonormalizers.push_back(to_string(svd_through_gram(b, std::move(bt), v.view(), s.view(), uhat.view())));
  clock.lap("small SVD");
  b.scale(1.0 / scale, s.view());
  assemble(b, q, uhat, s, v, k, out ? out : backend_matrices<double>(b), res);
  clock.lap("U = Q Uhat");
  rep.relative_error_estimate = residual_from_norms(b, res.S.view(), norm_a);
  clock.finish();
  return res;
}

}  // namespace randnla
