// Tall-skinny QR by a reduction tree on the portable backends: A = Q R to FP32 rounding against
// FP64, Q orthonormal, R exactly upper triangular, R alone equal to R with Q, Q written over A,
// the Kokkos entry and the argument errors.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "randnla/randnla.hpp"
#include "test_support.hpp"
#include "randnla/tsqr/tsqr.hpp"

using namespace randnla;

namespace {

/// ||A - Q R||_F / ||A||_F in FP64.
double factor_error(const test::HostMatrix<float>& a, const test::HostMatrix<float>& q, const test::HostMatrix<float>& r) {
  double num = 0, den = 0;
  for (index_t j = 0; j < a.cols; ++j)
    for (index_t i = 0; i < a.rows; ++i) {
      double s = 0;
      for (index_t p = 0; p <= j; ++p) s += static_cast<double>(q(i, p)) * r(p, j);
      num += (a(i, j) - s) * (a(i, j) - s), den += static_cast<double>(a(i, j)) * a(i, j);
    }
  return std::sqrt(num / den);
}

}  // namespace

// Several tree depths (one leaf, two levels, three), a graded A (cond 1e6), n = 1, and rows that
// split into blocks of 48 and 49.
TEST(Tsqr, FactorsAndOrthogonalityOnEveryTreeDepth) {
  struct Case {
    index_t m, n, leaf;
    double cond;
    int levels;
  };
  for (const auto& [name, b] : test::portable_backends())
    for (const Case& c : {Case{300, 20, 0, 1e2, 1}, Case{5000, 24, 100, 1e2, 4}, Case{4000, 32, 0, 1e6, 2},
                          Case{2000, 1, 50, 1, 2}, Case{2001, 7, 50, 1e3, 3}}) {
      std::vector<double> sigma(static_cast<std::size_t>(c.n));
      for (index_t i = 0; i < c.n; ++i) sigma[i] = std::pow(c.cond, -static_cast<double>(i) / std::max<index_t>(c.n - 1, 1));
      const auto a = test::matrix_with_spectrum(c.m, c.n, sigma, 5);
      TsqrOptions o;
      o.leaf_rows = c.leaf;
      const TsqrResult r = tsqr(*b, test::to_backend(*b, a), o);
      const auto q = test::to_host(*b, r.Q), rr = test::to_host(*b, r.R);
      SCOPED_TRACE(name + " m " + std::to_string(c.m) + " n " + std::to_string(c.n));
      EXPECT_EQ(r.report.levels, c.levels);
      EXPECT_EQ(r.report.blocks, "one Householder QR per block");
      EXPECT_LT(factor_error(a, q, rr), 1e-6);
      EXPECT_LT(test::orthogonality_loss(q.cview()), 1e-5);
      for (index_t j = 0; j < c.n; ++j)
        for (index_t i = j + 1; i < c.n; ++i) ASSERT_EQ(rr(i, j), 0.0f) << i << "," << j;
      o.form_q = false;
      const TsqrResult r_only = tsqr(*b, test::to_backend(*b, a), o);
      EXPECT_EQ(r_only.Q.rows(), 0);
      EXPECT_EQ(test::to_host(*b, r_only.R).data, rr.data) << "R alone equals R with Q";
    }
}

namespace {

/// A uniform in [-1, 1] (cond 0), or with singular values from 1 to 1/cond.
test::HostMatrix<float> variant_input(index_t m, index_t n, double cond) {
  if (cond == 0) {
    test::HostMatrix<float> a = test::random_matrix(m, n, test::Elements::Uniform01, 7);
    for (float& x : a.data) x = 2.0f * x - 1.0f;
    return a;
  }
  std::vector<double> sigma(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) sigma[i] = std::pow(cond, -static_cast<double>(i) / (n - 1));
  return test::matrix_with_spectrum(m, n, sigma, 5);
}

struct QrErrors {
  double residual, orthogonality;
  test::HostMatrix<float> r;
};

QrErrors householder_errors(Backend& b, const test::HostMatrix<float>& a) {
  Matrix<float> f = test::to_backend(b, a), tau(b, a.cols, 1);
  b.qr(f.view(), tau.view());
  test::HostMatrix<float> r = test::to_host(b, MatrixView<const float>(f.view()).block(0, 0, a.cols, a.cols));
  for (index_t j = 0; j < a.cols; ++j)
    for (index_t i = j + 1; i < a.cols; ++i) r(i, j) = 0.0f;
  b.form_q(f.view(), tau.view());
  const auto q = test::to_host(b, f.view());
  return {factor_error(a, q, r), test::orthogonality_loss(q.cview()), r};
}

QrErrors tsqr_errors(Backend& b, const test::HostMatrix<float>& a, TsqrArithmetic arithmetic) {
  TsqrOptions o;
  o.arithmetic = arithmetic;
  const TsqrResult t = tsqr(b, test::to_backend(b, a), o);
  EXPECT_EQ(t.report.arithmetic, to_string(arithmetic));
  EXPECT_NE(t.report.blocks.find("explicit Householder reflectors"), std::string::npos) << t.report.blocks;
  const auto q = test::to_host(b, t.Q);
  return {factor_error(a, q, test::to_host(b, t.R)), test::orthogonality_loss(q.cview()), test::to_host(b, t.R)};
}

}  // namespace

// The Tensor Core variants' arithmetic (emulated on the portable backends), uniform [-1, 1] and
// condition numbers 1e2 to 1e7, against FP32 Householder QR (LAPACK) on the same A: fp16-refined
// within 10x of it on both measures with R equal to its R up to the signs of the rows; tf32 and
// fp16 at their unit roundoff's level (2^-11), which the refinement removes.
TEST(Tsqr, TensorCoreVariantsAgainstFp32Householder) {
  const index_t m = 2000, n = 16;
  for (const auto& [name, b] : test::portable_backends())
    for (double cond : {0.0, 1e2, 1e4, 1e7}) {
      const auto a = variant_input(m, n, cond);
      const QrErrors lapack = householder_errors(*b, a);
      SCOPED_TRACE(name + " cond " + std::to_string(cond));
      const QrErrors refined = tsqr_errors(*b, a, TsqrArithmetic::FP16Refined);
      std::printf("%s cond %g: fp16-refined residual %.2e, orthogonality %.2e; LAPACK %.2e, %.2e\n", name.c_str(), cond,
                  refined.residual, refined.orthogonality, lapack.residual, lapack.orthogonality);
      EXPECT_LT(refined.residual, 10 * lapack.residual);
      EXPECT_LT(refined.orthogonality, 10 * lapack.orthogonality);
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i <= j; ++i)
          EXPECT_NEAR(std::fabs(refined.r(i, j)), std::fabs(lapack.r(i, j)), 1e-5 * std::fabs(lapack.r(0, 0)));
      for (TsqrArithmetic low : {TsqrArithmetic::TF32, TsqrArithmetic::FP16}) {
        const QrErrors e = tsqr_errors(*b, a, low);
        SCOPED_TRACE(to_string(low));
        std::printf("  %s residual %.2e, orthogonality %.2e\n", to_string(low), e.residual, e.orthogonality);
        EXPECT_LT(e.residual, 4e-3);
        EXPECT_LT(e.orthogonality, 4e-3);
        EXPECT_GT(e.orthogonality, 10 * refined.orthogonality);
      }
    }
}

// The variants scale each block by a power of two before rounding to FP16: A times 2^100 or 2^-100
// (beyond FP16's range either way) gives the same Q bit for bit and R times the same power.
TEST(Tsqr, TensorCoreVariantsAreScaleInvariantBeyondFp16Range) {
  const index_t m = 700, n = 12;
  const auto a = variant_input(m, n, 1e3);
  for (const auto& [name, b] : test::portable_backends())
    for (TsqrArithmetic arithmetic : {TsqrArithmetic::FP16Refined, TsqrArithmetic::FP16}) {
      TsqrOptions o;
      o.arithmetic = arithmetic;
      const TsqrResult base = tsqr(*b, test::to_backend(*b, a), o);
      for (int e : {100, -100}) {
        auto scaled = a;
        for (float& x : scaled.data) x = std::ldexp(x, e);
        const TsqrResult t = tsqr(*b, test::to_backend(*b, scaled), o);
        SCOPED_TRACE(name + " " + to_string(arithmetic) + " 2^" + std::to_string(e));
        EXPECT_EQ(test::to_host(*b, t.Q).data, test::to_host(*b, base.Q).data);
        auto r = test::to_host(*b, base.R);
        for (float& x : r.data) x = std::ldexp(x, e);
        EXPECT_EQ(test::to_host(*b, t.R).data, r.data);
      }
    }
}

// Q written over A: the same Q as into a matrix of its own.
TEST(Tsqr, QWrittenOverA) {
  const auto a = test::random_matrix(3000, 16, test::Elements::Normal, 7);
  for (const auto& [name, b] : test::portable_backends()) {
    TsqrOptions o;
    o.leaf_rows = 200;
    const auto own = test::to_host(*b, tsqr(*b, test::to_backend(*b, a), o).Q);
    Matrix<float> da = test::to_backend(*b, a);
    o.q_buffer = da.view();
    const TsqrResult r = tsqr(*b, da, o);
    EXPECT_EQ(r.Q.data(), da.data()) << name;
    EXPECT_EQ(test::to_host(*b, da).data, own.data) << name;
  }
}

// A factored in panels (BCGS2 between them: the tree, then FP64 CholeskyQR2 after the second
// projection): A = Q R, Q orthonormal, R upper triangular and equal to one Householder QR's R up to
// the signs of its rows, up to cond(A) 1e15 (from 1e8 on, two projections before a single
// factorisation lost orthogonality: 3.6e-3).
TEST(Tsqr, PanelsOfAWideMatrix) {
  for (const auto& [name, b] : test::portable_backends())
    for (double cond : {1.0, 1e5, 1e8, 1e12, 1e15}) {
      const index_t m = 3000, n = 70;
      std::vector<double> sigma(static_cast<std::size_t>(n));
      for (index_t i = 0; i < n; ++i) sigma[i] = std::pow(cond, -static_cast<double>(i) / (n - 1));
      const auto a = test::matrix_with_spectrum(m, n, sigma, 11);
      TsqrOptions o;
      o.panel_columns = 32;
      o.leaf_rows = 400;
      const TsqrResult r = tsqr(*b, test::to_backend(*b, a), o);
      SCOPED_TRACE(name + " cond " + std::to_string(cond));
      EXPECT_EQ(r.report.panels, 3);
      EXPECT_EQ(r.report.cholesky_qr2_panels, 2);  // the second factorisations: FP64 CholeskyQR2, no tree
      const auto q = test::to_host(*b, r.Q), rr = test::to_host(*b, r.R);
      EXPECT_LT(factor_error(a, q, rr), 1e-6);
      EXPECT_LT(test::orthogonality_loss(q.cview()), 1e-5);
      for (index_t j = 0; j < n; ++j)
        for (index_t i = j + 1; i < n; ++i) ASSERT_EQ(rr(i, j), 0.0f) << i << "," << j;
      TsqrOptions one_block;
      one_block.leaf_rows = m;
      const auto householder = test::to_host(*b, tsqr(*b, test::to_backend(*b, a), one_block).R);
      double worst = 0, norm = 0;
      for (float x : householder.data) norm += static_cast<double>(x) * x;
      for (index_t i = 0; i < n; ++i) {
        const double sign = (rr(i, i) < 0) == (householder(i, i) < 0) ? 1.0 : -1.0;
        for (index_t j = i; j < n; ++j) worst = std::max(worst, std::abs(rr(i, j) - sign * householder(i, j)));
      }
      EXPECT_LT(worst / std::sqrt(norm), 1e-5);
      o.form_q = false;
      EXPECT_EQ(test::to_host(*b, tsqr(*b, test::to_backend(*b, a), o).R).data, rr.data) << "R alone equals R with Q";
    }
}

TEST(Tsqr, BadArgumentsNameTheParameter) {
  auto b = test::portable_backends().front().second;
  auto message = [&](index_t m, index_t n, const TsqrOptions& o) {
    return test::invalid_argument_message([&] { tsqr(*b, Matrix<float>(*b, m, n), o); });
  };
  EXPECT_NE(message(10, 20, {}).find("A.rows = 10"), std::string::npos) << message(10, 20, {});
  EXPECT_NE(message(10, 0, {}).find("A.cols = 0"), std::string::npos);
  TsqrOptions o;
  o.leaf_rows = 5;
  EXPECT_NE(message(100, 8, o).find("leaf_rows = 5"), std::string::npos);
  o.leaf_rows = 0;
  o.panel_columns = -1;
  EXPECT_NE(message(100, 8, o).find("panel_columns = -1"), std::string::npos);
}

// The Kokkos-native entry: a view in, Q and R views out.
TEST(Tsqr, KokkosViewsInAndOut) {
  const index_t m = 1500, n = 12;
  const auto h = test::random_matrix(m, n, test::Elements::Normal, 9);
  TsqrOptions o;
  o.leaf_rows = 300;
  const auto r = randnla::tsqr(Kokkos::DefaultExecutionSpace(), test::to_kokkos(h), o);
  ASSERT_EQ(r.Q.extent(0), static_cast<std::size_t>(m));
  ASSERT_EQ(r.R.extent(0), static_cast<std::size_t>(n));
  EXPECT_LT(factor_error(h, test::from_kokkos(r.Q), test::from_kokkos(r.R)), 1e-6);
  EXPECT_EQ(r.report.levels, 2);
}
