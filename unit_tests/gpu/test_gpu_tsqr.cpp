// GPU tests of the TSQR: the reduction tree, the Tensor Core variants, the batched on-chip blocks,
// rank deficiency and limits, and panels wider than the blocks.

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "randnla/backends.hpp"
#include "randnla/tsqr/tsqr.hpp"
#include "gpu_test_support.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

using namespace gpu_test;
// The reduction-tree TSQR on the device (batched on-chip leaves, five levels): A = Q R and Q^T Q = I to
// FP32 rounding, R upper triangular.
TEST(Gpu, TsqrFactorsOnTheDevice) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  const index_t m = 60000, n = 64;
  const auto a = test::random_matrix(m, n, test::Elements::Normal, 73);
  TsqrOptions o;
  o.leaf_rows = 256;
  const TsqrResult r = tsqr(*dev, test::to_backend(*dev, a), o);
  const auto q = test::to_host(*dev, r.Q), rr = test::to_host(*dev, r.R);
  EXPECT_EQ(r.report.levels, 5);  // 60000 -> 235 leaves of 256 rows -> 15040 -> 3776 -> 960 -> 256 rows
  EXPECT_LT(test::orthogonality_loss(q.cview()), 1e-5);
  test::HostMatrix<float> qr(m, n);
  test::HostMatrix<double> exact(m, n);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      double s = 0;
      for (index_t p = 0; p <= j; ++p) s += static_cast<double>(q(i, p)) * rr(p, j);
      qr(i, j) = static_cast<float>(s), exact(i, j) = a(i, j);
    }
  EXPECT_LT(test::relative_error(qr, exact), 1e-6);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = j + 1; i < n; ++i) ASSERT_EQ(rr(i, j), 0.0f);
}

/// max over rows i of ||R_a(i, :) - s_i R_b(i, :)|| / ||R_b||_F, s_i = the sign that matches row i's
/// diagonal entries: R up to the signs of its rows.
double r_distance_up_to_row_signs(const test::HostMatrix<float>& ra, const test::HostMatrix<float>& rb) {
  double norm = 0, worst = 0;
  for (float x : rb.data) norm += static_cast<double>(x) * x;
  for (index_t i = 0; i < ra.rows; ++i) {
    const double sign = (ra(i, i) < 0) == (rb(i, i) < 0) ? 1.0 : -1.0;
    double d = 0;
    for (index_t j = 0; j < ra.cols; ++j) d += std::pow(ra(i, j) - sign * rb(i, j), 2);
    worst = std::max(worst, std::sqrt(d / norm));
  }
  return worst;
}

/// A = Q R against FP64 (||A - Q R||_F / ||A||_F < 1e-6), Q orthonormal to FP32 rounding, and R
/// LAPACK's one-block Householder R (on the host) up to the signs of its rows.
void expect_factors_of(Backend& host, const test::HostMatrix<float>& a, const test::HostMatrix<float>& q,
                       const test::HostMatrix<float>& r) {
  const index_t n = r.rows;
  EXPECT_LT(test::orthogonality_loss(q.cview()), 1e-5);
  test::HostMatrix<float> rt(n, n);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) rt(i, j) = r(j, i);
  EXPECT_LT(test::factor_relative_error(a.cview(), q.cview(), rt.cview()), 1e-6);
  TsqrOptions one_block;
  one_block.leaf_rows = a.rows;
  one_block.form_q = false;
  const auto lapack_r = test::to_host(host, tsqr(host, test::to_backend(host, a), one_block).R);
  EXPECT_LT(r_distance_up_to_row_signs(r, lapack_r), 1e-5);
}

/// ||A - Q R||_F / ||A||_F and ||Q^T Q - I||_F, FP64 sums.
std::pair<double, double> qr_errors(const test::HostMatrix<float>& a, const test::HostMatrix<float>& q,
                                    const test::HostMatrix<float>& r) {
  test::HostMatrix<float> rt(r.cols, r.rows);
  for (index_t j = 0; j < r.cols; ++j)
    for (index_t i = 0; i < r.rows; ++i) rt(j, i) = r(i, j);
  return {test::factor_relative_error(a.cview(), q.cview(), rt.cview()), test::orthogonality_loss(q.cview())};
}

// The Tensor Core TSQR variants on the GPU (wmma, one warp per block of 32 x 16; 40 columns in
// panels of 16), cond 1e2 and 1e7: fp16-refined within 10x of FP32 Householder (LAPACK, one block)
// on both measures, orthogonality's bound floored at 10 n u (u = 2^-24) because LAPACK's loss can
// fall below n u (2.0e-7 at n = 16, cond 1e2 on the H100, against fp16-refined's 2.2e-6); its R
// equal to LAPACK's up to row signs and to the host's emulation of the same arithmetic (test_tsqr)
// to FP32 rounding; tf32 and fp16 at their unit roundoff's level (2^-11).
TEST(Gpu, TensorCoreTsqrVariants) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  for (const auto& [n, cond] : {std::pair<index_t, double>{16, 1e2}, {16, 1e7}, {40, 1e2}}) {
    std::vector<double> sigma(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) sigma[i] = std::pow(cond, -static_cast<double>(i) / (n - 1));
    const auto a = test::matrix_with_spectrum(4000, n, sigma, 9);
    TsqrOptions one_block;
    one_block.leaf_rows = a.rows;
    const TsqrResult lapack = tsqr(*host, test::to_backend(*host, a), one_block);
    const auto lapack_r = test::to_host(*host, lapack.R);
    const auto [lapack_residual, lapack_loss] = qr_errors(a, test::to_host(*host, lapack.Q), lapack_r);
    for (TsqrArithmetic arithmetic : {TsqrArithmetic::FP16Refined, TsqrArithmetic::TF32, TsqrArithmetic::FP16}) {
      TsqrOptions o;
      o.arithmetic = arithmetic;
      const TsqrResult t = tsqr(*dev, test::to_backend(*dev, a), o);
      SCOPED_TRACE("n " + std::to_string(n) + " cond " + std::to_string(cond) + " " + to_string(arithmetic));
      EXPECT_NE(t.report.blocks.find("Tensor Cores"), std::string::npos) << t.report.blocks;
      const auto r = test::to_host(*dev, t.R);
      const auto [residual, loss] = qr_errors(a, test::to_host(*dev, t.Q), r);
      if (arithmetic != TsqrArithmetic::FP16Refined) {
        EXPECT_LT(residual, 4e-3);
        EXPECT_LT(loss, 4e-3);
        continue;
      }
      EXPECT_LT(residual, 10 * lapack_residual);
      EXPECT_LT(loss, 10 * std::max(lapack_loss, n * 0x1p-24));
      EXPECT_LT(r_distance_up_to_row_signs(r, lapack_r), 1e-5);
      if (n > 16) continue;  // the host takes 40 columns in one block, the GPU in panels
      const TsqrResult emulated = tsqr(*host, test::to_backend(*host, a), o);
      EXPECT_LT(r_distance_up_to_row_signs(r, test::to_host(*host, emulated.R)), 1e-5);
    }
  }
}

// The batched on-chip TSQR: rows not a multiple of the blocks, n from 1 to the tree's 128, Q to FP32
// orthogonality, A = Q R against FP64, R equal to LAPACK's one-block Householder R up to row signs,
// R alone equal to R with Q, Q written over A equal to Q apart, bit for bit.
TEST(Gpu, BatchedTsqrMatchesLapack) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  for (index_t n : {1, 16, 64, 128}) {
    const index_t m = 40009;
    const auto a = test::random_matrix(m, n, Elements::Normal, 500 + n);
    Matrix<float> da = test::to_backend(*dev, a);
    const TsqrResult r = tsqr(*dev, da);
    SCOPED_TRACE("n " + std::to_string(n) + ", " + std::to_string(r.report.leaves) + " leaves");
    EXPECT_EQ(r.report.blocks, "batched on chip");
    EXPECT_GE(r.report.levels, 2);
    const auto q = test::to_host(*dev, r.Q), rr = test::to_host(*dev, r.R);
    expect_factors_of(*host, a, q, rr);
    TsqrOptions r_only;
    r_only.form_q = false;
    EXPECT_EQ(test::to_host(*dev, tsqr(*dev, da, r_only).R).data, rr.data);
    TsqrOptions in_place;
    in_place.q_buffer = da.view();
    tsqr(*dev, da, in_place);
    EXPECT_EQ(test::to_host(*dev, da).data, q.data);
  }
}

// Rank deficiency and non-finite data reach R's diagonal: a zero column gives an exact zero there
// and a finite Q; a NaN gives a NaN. Leaf blocks beyond shared memory and panels wider than the
// blocks are refused, naming the option.
TEST(Gpu, BatchedTsqrReportsDeficiencyAndLimits) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  const index_t m = 20000, n = 32;
  auto a = test::random_matrix(m, n, Elements::Normal, 41);
  for (index_t i = 0; i < m; ++i) a(i, 5) = 0.0f;
  const TsqrResult r = tsqr(*dev, test::to_backend(*dev, a));
  const auto q = test::to_host(*dev, r.Q), rr = test::to_host(*dev, r.R);
  EXPECT_EQ(rr(5, 5), 0.0f);
  for (float x : q.data) ASSERT_TRUE(std::isfinite(x));
  a(777, 9) = std::nanf("");
  EXPECT_TRUE(std::isnan(test::to_host(*dev, tsqr(*dev, test::to_backend(*dev, a)).R)(9, 9)));
  TsqrOptions o;
  o.leaf_rows = m;
  EXPECT_NE(test::invalid_argument_message([&] { tsqr(*dev, test::to_backend(*dev, a), o); }).find("leaf_rows = 20000"),
            std::string::npos);
  o.leaf_rows = 0;
  o.panel_columns = 129;
  EXPECT_NE(test::invalid_argument_message([&] { tsqr(*dev, test::to_backend(*dev, a), o); }).find("panel_columns = 129"),
            std::string::npos);
}

// A wider than the on-chip blocks: panels of 128 columns, BCGS2 between them (the second
// factorisations by FP64 CholeskyQR2); A = Q R against FP64, Q orthonormal, R LAPACK's up to row signs.
TEST(Gpu, TsqrPanelsBeyondTheBlocksWidth) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  const index_t m = 30000, n = 300;
  const auto a = test::random_matrix(m, n, Elements::Normal, 43);
  const TsqrResult w = tsqr(*dev, test::to_backend(*dev, a));
  EXPECT_EQ(w.report.blocks, "batched on chip");
  EXPECT_EQ(w.report.panels, 3);
  EXPECT_EQ(w.report.cholesky_qr2_panels, 2);
  expect_factors_of(*host, a, test::to_host(*dev, w.Q), test::to_host(*dev, w.R));
}

}  // namespace
}  // namespace randnla
