// The RSVD's dense steps: orthonormalisers (orthogonality, span, the adaptive second pass, the
// breakdown fallback), the symmetric eigensolver and the SVD through the Gram matrix.
#include <cmath>

#include "randnla/backends.hpp"
#include "randnla/orthonormalize/cholesky_qr_ops.hpp"
#include "randnla/orthonormalize/orthonormalize.hpp"
#include "randnla/rsvd/svd_through_gram.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

// Y = U diag(sigma) V^T with sigma from 1 down to 1/cond.
test::HostMatrix<float> graded(index_t m, index_t l, double cond) {
  std::vector<double> sigma(static_cast<std::size_t>(l));
  for (index_t i = 0; i < l; ++i) sigma[i] = std::pow(cond, -static_cast<double>(i) / (l - 1));
  return test::matrix_with_spectrum(m, l, sigma, 99);
}

/// Q of Y, orthonormalised by `method` on b (Y copied into b's memory and Q back); *used := what ran.
test::HostMatrix<float> orthonormalized(Backend& b, const test::HostMatrix<float>& y, Orthonormalizer method,
                                        Orthonormalizer* used = nullptr) {
  Matrix<float> q = test::to_backend(b, y);
  const Orthonormalizer ran = orthonormalize(b, q.view(), method);
  if (used) *used = ran;
  return test::to_host(b, q);
}

// The orthonormaliser tests run on the portable backend of every execution space of this Kokkos
// (Serial, OpenMP; Cuda in the CUDA-enabled Kokkos configuration, on the GPU).
TEST(Orthonormalize, EachMethodOnWellConditionedInput) {
  const auto y = graded(2000, 40, 1e3);
  for (const auto& [name, b] : test::portable_backends())
    for (auto method : {Orthonormalizer::Householder, Orthonormalizer::CholeskyQR, Orthonormalizer::CholeskyQR2,
                        Orthonormalizer::ShiftedCholeskyQR3, Orthonormalizer::RandCholeskyQR, Orthonormalizer::RandCholeskyQRSparse,
                        Orthonormalizer::Tsqr}) {
      Orthonormalizer used;
      const auto q = orthonormalized(*b, y, method, &used);
      EXPECT_EQ(used, method) << name;
      EXPECT_LT(test::orthogonality_loss(q.cview()), 5e-6) << to_string(method) << " on " << name;
      EXPECT_LT(test::span_residual(y, q), 1e-5) << to_string(method) << " on " << name;
    }
}

TEST(Orthonormalize, IllConditionedCholeskyQRBreaksDownAndFallsBack) {
  auto y = graded(1500, 30, 1e12);  // Gram matrix cond 1e24: FP64 Cholesky fails
  for (index_t i = 0; i < y.rows; ++i) y(i, 29) = y(i, 28);  // exactly rank deficient too
  for (const auto& [name, b] : test::portable_backends()) {
    Orthonormalizer used;
    const auto q = orthonormalized(*b, y, Orthonormalizer::CholeskyQR2, &used);
    EXPECT_NE(used, Orthonormalizer::CholeskyQR2) << name;
    EXPECT_LT(test::orthogonality_loss(q.cview()), 1e-5) << to_string(used) << " on " << name;
  }
}

// The sketch-preconditioned CholeskyQR, with the Gaussian FP16 sketch and with the sparse sign one,
// keeps FP32-level orthogonality up to cond(Y) = 1e7 with no shift and no fallback, where one plain
// CholeskyQR pass loses it (cond^2 2^-53 ~ 1e-2), and returns an orthonormal basis of an exactly
// rank-deficient Y's range.
TEST(Orthonormalize, SketchPreconditionedCholeskyQRUpToFp32ConditionNumbers) {
  for (const auto& [name, b] : test::portable_backends())
    for (Orthonormalizer method : {Orthonormalizer::RandCholeskyQR, Orthonormalizer::RandCholeskyQRSparse}) {
      for (double cond : {1e2, 1e5, 1e7}) {
        const auto y = graded(4000, 64, cond);
        Orthonormalizer used;
        const auto q = orthonormalized(*b, y, method, &used);
        EXPECT_EQ(used, method) << cond << " " << name;
        EXPECT_LT(test::orthogonality_loss(q.cview()), 1e-6) << to_string(method) << " " << cond << " " << name;
        EXPECT_LT(test::span_residual(y, q), 1e-5) << to_string(method) << " " << cond << " " << name;
        if (cond == 1e7) {
          const auto plain = orthonormalized(*b, y, Orthonormalizer::CholeskyQR, &used);
          if (used == Orthonormalizer::CholeskyQR) EXPECT_GT(test::orthogonality_loss(plain.cview()), 1e-4) << name;
        }
      }
      auto deficient = graded(1500, 30, 1e3);
      for (index_t i = 0; i < deficient.rows; ++i) deficient(i, 29) = deficient(i, 28);
      // Whether the preconditioned pass breaks down here depends on the last bits of R0's tiny
      // diagonal entry (the host BLAS's rounding): either way Q is an orthonormal basis holding range(Y).
      Orthonormalizer used;
      const auto q = orthonormalized(*b, deficient, method, &used);
      EXPECT_LT(test::orthogonality_loss(q.cview()), 1e-5) << to_string(used) << " on " << name;
      EXPECT_LT(test::span_residual(deficient, q), 1e-5) << to_string(used) << " on " << name;
    }
}

TEST(Orthonormalize, AutoRunsTheSecondPassOnlyWhenTheFirstFallsShortOfFp32) {
  // cond 10: one FP64 pass leaves ||Q^T Q - I|| ~ 1e-14; cond 1e6: ~ 2^-53 1e12 ~ 1e-4, so a second pass.
  for (const auto& [name, b] : test::portable_backends())
    for (double cond : {1e1, 1e6}) {
      const auto y = graded(3000, 48, cond);
      Orthonormalizer used;
      const auto q = orthonormalized(*b, y, Orthonormalizer::Auto, &used);
      EXPECT_EQ(used, cond < 10.5 ? Orthonormalizer::CholeskyQR : Orthonormalizer::CholeskyQR2) << cond << " " << name;
      EXPECT_LT(test::orthogonality_loss(q.cview()), 1e-6) << cond << " " << name;
      EXPECT_LT(test::span_residual(y, q), 1e-5) << cond << " " << name;
    }
}

TEST(Orthonormalize, AutoOnlyScalesColumnsThatAreOrthogonalAlready) {
  const index_t m = 3000, l = 40;
  const auto q0 = graded(m, l, 1.0);  // orthonormal columns
  auto y = q0;
  for (index_t j = 0; j < l; ++j)
    for (index_t i = 0; i < m; ++i) y(i, j) *= static_cast<float>(std::pow(10.0, -6.0 * j / (l - 1)));
  auto moved = y;  // one element of one column moved by 5e-3: no longer orthogonal to FP32's precision
  moved(0, 1) += 5e-3f;
  for (const auto& [name, b] : test::portable_backends()) {
    Orthonormalizer used;
    const auto q = orthonormalized(*b, y, Orthonormalizer::Auto, &used);
    EXPECT_EQ(used, Orthonormalizer::ColumnScaling) << name;
    double worst = 0;
    for (std::size_t i = 0; i < q.data.size(); ++i) worst = std::max(worst, std::abs(double(q.data[i]) - q0.data[i]));
    EXPECT_LT(worst, 1e-6) << name;  // the columns of Q0 themselves, signs kept
    EXPECT_LT(test::orthogonality_loss(q.cview()), 1e-6) << name;
    const auto q2 = orthonormalized(*b, moved, Orthonormalizer::Auto, &used);
    EXPECT_EQ(used, Orthonormalizer::CholeskyQR) << name;
    EXPECT_LT(test::orthogonality_loss(q2.cview()), 1e-6) << name;
  }
}

TEST(Equilibrate, UnitDiagonalAndUnscaledNonPositiveOrNonFiniteEntries) {
  auto b = make_backend(BackendKind::Host);
  const double g0[4][4] = {{4, 2, 0, 1}, {2, 9, 3, 0}, {0, 3, 0, 5}, {1, 0, 5, INFINITY}};
  Matrix<double> g(*b, 4, 4), d(*b, 4, 1);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) g.view()(i, j) = g0[i][j];
  b->ops<CholeskyQrOps>().equilibrate(g.view(), d.view());
  const double expect_d[4] = {0.5, 1.0 / 3.0, 1.0, 1.0};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(d.view()(i, 0), expect_d[i]) << i;
    for (int j = 0; j < 4; ++j)
      if (std::isfinite(g0[i][j])) EXPECT_DOUBLE_EQ(g.view()(i, j), g0[i][j] * expect_d[i] * expect_d[j]) << i << j;
  }
  EXPECT_EQ(g.view()(0, 0), 1.0);
  EXPECT_EQ(g.view()(1, 1), 1.0);
  Matrix<double> short_d(*b, 3, 1);
  EXPECT_THROW(b->ops<CholeskyQrOps>().equilibrate(g.view(), short_d.view()), InvalidArgument);
}

// Y R with R upper triangular: the strict lower triangle (NaN here) is never read, the sums match
// an FP64 reference to rounding, and a Q of the wrong shape is refused by name.
TEST(CholeskyQrOps, UpperTriangularProductReadsOnlyTheUpperTriangle) {
  auto b = make_backend(BackendKind::Host);
  const index_t m = 53, n = 9;
  const auto ry = test::random_matrix(m, n, test::Elements::Normal, 31);
  const auto rr = test::random_matrix(n, n, test::Elements::Normal, 32);
  Matrix<double> y(*b, m, n), r(*b, n, n), q(*b, m, n);
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i < m; ++i) y.view()(i, j) = ry(i, j);
    for (index_t i = 0; i < n; ++i) r.view()(i, j) = i <= j ? double(rr(i, j)) : NAN;
  }
  b->ops<CholeskyQrOps>().multiply_upper_triangular(y, r, q.view());
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) {
      double want = 0.0, size = 0.0;
      for (index_t l = 0; l <= j; ++l) {
        want += y.view()(i, l) * r.view()(l, j);
        size += std::fabs(y.view()(i, l) * r.view()(l, j));
      }
      EXPECT_NEAR(q.view()(i, j), want, 1e-15 * size) << i << ", " << j;
    }
  Matrix<double> wide(*b, m, n + 1);
  EXPECT_THROW(b->ops<CholeskyQrOps>().multiply_upper_triangular(y, r, wide.view()), InvalidArgument);
}

// The factorization family: potrf gives R with R^T R = G, trsm applies R^{-1} from either side,
// a non-positive pivot is reported by its 1-based index.
TEST(Factorizations, CholeskyAndTriangularSolveFromBothSides) {
  auto b = make_backend(BackendKind::Host);
  for (index_t n : {1, 7, 40}) {
    const auto x = test::random_matrix(n + 5, n, test::Elements::Normal, 12);
    const auto g0 = test::reference_gemm(Op::T, Op::N, x, x);
    Matrix<double> g(*b, n, n), rinv(*b, n, n), y(*b, 3, n);
    b->copy(g0.cview(), g.view());
    ASSERT_EQ(b->cholesky(g), 0);
    auto r = [&](index_t i, index_t j) { return i <= j ? g.view()(i, j) : 0.0; };
    double factor = 0, inverse = 0, right = 0;
    for (index_t i = 0; i < n; ++i)
      for (index_t j = 0; j < n; ++j) {
        double s = 0;
        for (index_t p = 0; p < n; ++p) s += r(p, i) * r(p, j);
        factor = std::max(factor, std::abs(s - g0(i, j)) / g0(i, i));
      }
    b->scale(0.0, rinv.view());
    b->add_to_diagonal(rinv, 1.0);
    b->triangular_solve(Side::Left, Op::N, 1.0, g, rinv);  // R^{-1}
    for (index_t i = 0; i < n; ++i)
      for (index_t j = 0; j < n; ++j) {  // X^T G X = I exactly when X is the inverse of a factor of G
        double s = 0;
        for (index_t p = 0; p < n; ++p)
          for (index_t q = 0; q < n; ++q) s += rinv.view()(p, i) * g0(p, q) * rinv.view()(q, j);
        inverse = std::max(inverse, std::abs(s - (i == j ? 1.0 : 0.0)));
      }
    for (index_t i = 0; i < 3; ++i)
      for (index_t j = 0; j < n; ++j) y.view()(i, j) = x(i, j);
    b->triangular_solve(Side::Right, Op::N, 2.0, g, y);  // Y := 2 X(0:3, :) R^{-1}
    for (index_t i = 0; i < 3; ++i)
      for (index_t j = 0; j < n; ++j) {
        double s = 0;
        for (index_t p = 0; p <= j; ++p) s += y.view()(i, p) * r(p, j);
        right = std::max(right, std::abs(s - 2.0 * x(i, j)));
      }
    EXPECT_LT(factor, 1e-13) << n;
    EXPECT_LT(inverse, 1e-12) << n;
    EXPECT_LT(right, 1e-12) << n;
  }
  Matrix<double> g(*b, 3, 3), wrong(*b, 2, 3);
  const double bad[3][3] = {{4, 2, 0}, {2, 1, 0}, {0, 0, 1}};  // second pivot 1 - 1 = 0
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) g.view()(i, j) = bad[i][j];
  EXPECT_EQ(b->cholesky(g), 2);
  EXPECT_THROW(b->triangular_solve(Side::Left, Op::N, 1.0, g, wrong), InvalidArgument);
  EXPECT_THROW(b->cholesky(wrong), InvalidArgument);
}

// geqrf returns R in A's upper triangle, orgqr forms Q from the reflectors: Q R = A, Q^T Q = I.
TEST(Factorizations, QrReturnsRAndFormsQ) {
  auto b = make_backend(BackendKind::Host);
  const index_t m = 50, n = 12;
  auto a0 = test::random_matrix(m, n, test::Elements::Uniform01, 13);
  Matrix<float> a(*b, m, n), tau(*b, n, 1);
  b->copy(a0.cview(), a.view());
  b->qr(a, tau);
  test::HostMatrix<double> r(n, n);
  for (index_t i = 0; i < n; ++i)
    for (index_t j = i; j < n; ++j) r(i, j) = a.view()(i, j);
  b->form_q(a, tau);
  double worst = 0;
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) {
      double s = 0;
      for (index_t p = 0; p <= j; ++p) s += a.view()(i, p) * r(p, j);
      worst = std::max(worst, std::abs(s - a0(i, j)));
    }
  EXPECT_LT(worst, 1e-5);
  EXPECT_LT(test::orthogonality_loss(MatrixView<const float>(a.view())), 1e-5);
  Matrix<float> short_tau(*b, n - 1, 1);
  EXPECT_THROW(b->qr(a, short_tau), InvalidArgument);
}

TEST(Orthonormalize, RejectsWideInputAndParsesNames) {
  auto b = make_backend(BackendKind::Host);
  test::HostMatrix<float> wide(3, 5);
  EXPECT_THROW(orthonormalize(*b, wide.view(), Orthonormalizer::Householder), InvalidArgument);
  EXPECT_EQ(parse_enum<Orthonormalizer>("scholqr3", "orthonormalizer"), Orthonormalizer::ShiftedCholeskyQR3);
  EXPECT_EQ(parse_enum<Orthonormalizer>("auto", "orthonormalizer"), Orthonormalizer::Auto);
  EXPECT_THROW(parse_enum<Orthonormalizer>("qr", "orthonormalizer"), InvalidArgument);
}

TEST(SymmetricEig, DescendingEigenpairsOfAKnownSpectrum) {
  auto b = make_backend(BackendKind::Host);
  const index_t n = 60;
  std::vector<double> lambda(n);
  for (index_t i = 0; i < n; ++i) lambda[i] = std::pow(10.0, -8.0 * i / (n - 1));
  // G = Q diag(lambda) Q^T, Q orthogonal: the Gram matrix of diag(sqrt(lambda)) Q^T.
  std::vector<double> root(n);
  for (index_t i = 0; i < n; ++i) root[i] = std::sqrt(lambda[i]);
  const auto x = test::matrix_with_spectrum(n, n, root, 5);
  Matrix<double> g(*b, n, n), w(*b, n, 1);
  b->copy(test::reference_gemm(Op::T, Op::N, x, x).cview(), g.view());
  const Matrix<double> g0 = [&] {
    Matrix<double> c(*b, n, n);
    b->copy(MatrixView<const double>(g.view()), c.view());
    return c;
  }();
  b->symmetric_eig(g.view(), w.view());
  const auto sx = test::singular_values(x.cview());
  double worst_residual = 0, worst_orth = 0;
  for (index_t i = 0; i < n; ++i) {
    EXPECT_NEAR(w.view()(i, 0), sx[i] * sx[i], 1e-13) << i;  // descending, as the SVD of x gives
    for (index_t j = 0; j < n; ++j) {
      double gv = 0, vv = 0;
      for (index_t t = 0; t < n; ++t) {
        gv += g0.view()(j, t) * g.view()(t, i);
        vv += g.view()(t, i) * g.view()(t, j);
      }
      worst_residual = std::max(worst_residual, std::abs(gv - w.view()(i, 0) * g.view()(j, i)));
      worst_orth = std::max(worst_orth, std::abs(vv - (i == j ? 1.0 : 0.0)));
    }
  }
  EXPECT_LT(worst_residual, 1e-13);
  EXPECT_LT(worst_orth, 1e-13);
}

// The small SVD of the RSVD: accurate to FP32's rounding of A whatever A's condition, and with
// orthonormal factors when A is rank deficient: numerically (CholeskyQR orthonormalises the noise
// columns of A V) or exactly (zero columns: CholeskyQR breaks down, Householder's signs are repaired).
TEST(SvdThroughGram, MatchesLapackOnGradedAndRankDeficientMatrices) {
  auto b = make_backend(BackendKind::Host);
  const index_t m = 1500, n = 64;
  struct Case { double cond; index_t rank; bool zero_columns; };
  for (const Case c : {Case{1e2, n, false}, Case{1e7, n, false}, Case{1e3, 40, false}, Case{1e3, 40, true}}) {
    std::vector<double> sigma(c.rank);
    for (index_t i = 0; i < c.rank; ++i) sigma[i] = std::pow(c.cond, -static_cast<double>(i) / (c.rank - 1));
    auto a = test::matrix_with_spectrum(m, n, sigma, 17);
    if (c.zero_columns) {
      const auto x = test::matrix_with_spectrum(m, c.rank, sigma, 17);
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) a(i, j) = j < c.rank ? x(i, j) : 0.0f;
    }
    Matrix<float> u(*b, m, n), s(*b, n, 1), v(*b, n, n);
    const Orthonormalizer used = svd_through_gram(*b, a.cview(), u.view(), s.view(), v.view());
    const auto exact = test::singular_values(a.cview());
    for (index_t i = 0; i < n; ++i) EXPECT_NEAR(s.data()[i], exact[i], 1e-6 * exact[0]) << i << " cond " << c.cond;
    for (index_t i = 1; i < n; ++i) EXPECT_LE(s.data()[i], s.data()[i - 1]);
    EXPECT_LT(test::lowrank_relative_error(a.cview(), u.view(), s.view(), v.view()), 1e-6) << c.cond;
    EXPECT_LT(test::orthogonality_loss(u.view()), 1e-5) << c.cond << " " << to_string(used);
    EXPECT_LT(test::orthogonality_loss(v.view()), 1e-6) << c.cond;
    if (c.zero_columns) EXPECT_EQ(used, Orthonormalizer::Householder);  // the sign repair is exercised
    // A V's columns are orthogonal to 2^-53 s_1^2 / (s_i s_j) after scaling: below 2^-24 at
    // cond 1e2, not at cond 1e7, where CholeskyQR runs.
    if (c.cond == 1e2) EXPECT_EQ(used, Orthonormalizer::ColumnScaling);
    if (c.cond == 1e7) EXPECT_EQ(used, Orthonormalizer::CholeskyQR);
  }
}

// U of a large A formed a block of rows at a time (140000 x 240 in FP64 is above
// svd_through_gram's 64 MiB a block: five blocks, the last of 192 rows), checked against
// the exact SVD of A = C V^T: C's columns of disjoint supports (rows i = j mod n) and norms sigma_j,
// so U = C diag(sigma)^-1; V orthogonal. Rows of U from either block that are wrong show in U.
TEST(SvdThroughGram, LargeUFormedInBlocksOfRowsMatchesTheExactSvd) {
  auto b = make_backend(BackendKind::Host);
  const index_t m = 140000, n = 240;
  std::vector<double> sigma(n), ones(n, 1.0);
  for (index_t j = 0; j < n; ++j) sigma[j] = 1.0 - 0.9 * static_cast<double>(j) / n;
  const auto v_exact = test::matrix_with_spectrum(n, n, ones, 23);
  std::vector<double> support(n, 0.0);
  for (index_t i = 0; i < m; ++i) support[i % n] += 1.0;
  test::HostMatrix<float> a(m, n);
  test::HostMatrix<double> u_exact(m, n);
  for (index_t i = 0; i < m; ++i) {
    const index_t j = i % n;
    u_exact(i, j) = 1.0 / std::sqrt(support[j]);
    for (index_t c = 0; c < n; ++c) a(i, c) = static_cast<float>(sigma[j] * u_exact(i, j) * v_exact(c, j));
  }
  Matrix<float> u(*b, m, n), s(*b, n, 1), v(*b, n, n);
  svd_through_gram(*b, a.cview(), u.view(), s.view(), v.view());
  for (index_t j = 0; j < n; ++j) {
    EXPECT_NEAR(s.data()[j], sigma[j], 1e-5) << j;
    double along = 0, u_error = 0, v_along = 0, v_error = 0;
    for (index_t i = j; i < m; i += n) along += u.view()(i, j) * u_exact(i, j);
    for (index_t c = 0; c < n; ++c) v_along += v.view()(c, j) * v_exact(c, j);
    const double sign = along < 0 ? -1.0 : 1.0, v_sign = v_along < 0 ? -1.0 : 1.0;
    for (index_t i = 0; i < m; ++i) u_error += std::pow(u.view()(i, j) - sign * u_exact(i, j), 2);
    for (index_t c = 0; c < n; ++c) v_error += std::pow(v.view()(c, j) - v_sign * v_exact(c, j), 2);
    EXPECT_LT(std::sqrt(u_error), 1e-3) << "column " << j;
    EXPECT_LT(std::sqrt(v_error), 1e-3) << "column " << j;
  }
}

// A given up (moved in) is released once its FP64 copy is made: the same U, s and V bit for bit as
// from a view of it, at a peak of the library's memory lower by A's m n floats.
TEST(SvdThroughGram, AGivenUpIsReleasedBeforeUIsFormed) {
  auto b = make_backend(BackendKind::Host);
  const index_t m = 20000, n = 64;
  const auto a = test::random_matrix(m, n, test::Elements::Normal, 29);
  const auto peak_of = [&](auto&& run) {
    const std::size_t before = b->memory_use().bytes;
    b->reset_peak_memory();
    run();
    return b->memory_use().peak_bytes - before;
  };
  Matrix<float> u(*b, m, n), s(*b, n, 1), v(*b, n, n), u2(*b, m, n), s2(*b, n, 1), v2(*b, n, n);
  const std::size_t from_view = peak_of([&] { svd_through_gram(*b, a.cview(), u.view(), s.view(), v.view()); });
  Matrix<float> given(*b, m, n);
  b->copy(a.cview(), given.view());
  const std::size_t given_up = peak_of([&] { svd_through_gram(*b, std::move(given), u2.view(), s2.view(), v2.view()); });
  EXPECT_LE(given_up + static_cast<std::size_t>(m * n) * sizeof(float), from_view);
  for (const auto& [x, y] : {std::pair{&u, &u2}, {&s, &s2}, {&v, &v2}})
    for (index_t j = 0; j < x->cols(); ++j)
      for (index_t i = 0; i < x->rows(); ++i) ASSERT_EQ(x->view()(i, j), y->view()(i, j)) << i << ", " << j;
}

// U is formed and orthonormalised in its own memory: besides A's FP64 copy the call holds two
// blocks of 64 MiB of rows and small matrices, no m x n FP64 A V (300000 x 32 in FP64: 77 MB, two
// blocks); U, s and V still those of A (s against an FP64 SVD, U and V orthonormal).
TEST(SvdThroughGram, UIsOrthonormalisedWithoutAnotherFp64MatrixOfAsSize) {
  auto b = make_backend(BackendKind::Host);
  const index_t m = 300000, n = 32;
  std::vector<double> sigma(n);
  for (index_t i = 0; i < n; ++i) sigma[i] = std::pow(1e4, -static_cast<double>(i) / (n - 1));
  const auto a = test::matrix_with_spectrum(m, n, sigma, 31);
  Matrix<float> u(*b, m, n), s(*b, n, 1), v(*b, n, n);
  const std::size_t before = b->memory_use().bytes;
  b->reset_peak_memory();
  svd_through_gram(*b, a.cview(), u.view(), s.view(), v.view());
  const std::size_t fp64_copy = static_cast<std::size_t>(m * n) * sizeof(double), blocks = 2u * (64u << 20);
  EXPECT_LE(b->memory_use().peak_bytes - before, fp64_copy + blocks + (1u << 20));
  const auto exact = test::singular_values(a.cview());
  for (index_t i = 0; i < n; ++i) EXPECT_NEAR(s.data()[i], exact[i], 1e-6 * exact[0]) << i;
  EXPECT_LT(test::lowrank_relative_error(a.cview(), u.view(), s.view(), v.view()), 1e-6);
  EXPECT_LT(test::orthogonality_loss(u.view()), 1e-5);
  EXPECT_LT(test::orthogonality_loss(v.view()), 1e-6);
}

}  // namespace
}  // namespace randnla
