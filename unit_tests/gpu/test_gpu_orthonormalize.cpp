// GPU tests of the orthonormalisers: the sketch-preconditioned, fused and Tensor Core CholeskyQR
// variants, the inverse Cholesky factor (cuSOLVER and the one-launch kernel), and the
// orthogonality probe.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "randnla/backends.hpp"
#include "randnla/orthonormalize/cholesky_qr_ops.hpp"
#include "randnla/orthonormalize/orthonormalize.hpp"
#include "gpu_test_support.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

using namespace gpu_test;
// The sketch-preconditioned CholeskyQR on the device (SHGEMM sketch, cuSOLVER QR of it, FP64
// trsm and CholeskyQR): no fallback and FP32-level orthogonality at cond(Y) = 1e6.
TEST(Gpu, SketchPreconditionedCholeskyQR) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  const index_t m = 20000, l = 128;
  std::vector<double> sigma(l);
  for (index_t i = 0; i < l; ++i) sigma[i] = std::pow(1e-6, static_cast<double>(i) / (l - 1));
  const auto y = test::matrix_with_spectrum(m, l, sigma, 71);
  Matrix<float> q = test::to_backend(*dev, y);
  EXPECT_EQ(orthonormalize(*dev, q.view(), Orthonormalizer::RandCholeskyQR), Orthonormalizer::RandCholeskyQR);
  EXPECT_LT(test::orthogonality_loss(test::to_host(*dev, q).cview()), 1e-6);
}

// The fused CholeskyQR2 (CUDA, up to 64 columns, no FP64 copy of Y): Q orthonormal to FP32
// rounding and spanning range(Y) (both in FP64), and equal to the host's FP64 CholeskyQR2 to FP32
// rounding, at widths 1 to 64 and cond(Y) up to 1e6; one fused pass equal to the host's FP64
// CholeskyQR (orthogonality cond(Y)^2 2^-53 plus FP32 rounding) up to cond 1e3.
TEST(Gpu, FusedCholeskyQr2MatchesTheFp64Path) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda), host = make_backend(BackendKind::Host);
  CholeskyQrOps& ops = dev->ops<CholeskyQrOps>();
  ASSERT_EQ(ops.fused_max_columns(), 64);
  EXPECT_TRUE(ops.fused_preferred(1048576, 16) && ops.fused_preferred(1048576, 64));
  EXPECT_FALSE(ops.fused_preferred(1024, 65));
  // Y in storage of ld rows: whole 16-byte quads of rows (64), a last quad cut short (4998 in 5000),
  // and columns not 16-byte aligned (70001), which the sweep copies a row at a time. Up to 2048
  // rows (64, 1500) every pass runs in one kernel on a cluster of blocks, beyond in sweeps.
  for (auto [m, ld] : {std::pair<index_t, index_t>{64, 64}, {1500, 1502}, {4998, 5000}, {70001, 70001}})
    for (index_t l : {1, 5, 16, 17, 40, 48, 64})
      for (double cond : {1.0, 1e3, 1e6}) {
        std::vector<double> sigma(static_cast<std::size_t>(l));
        for (index_t i = 0; i < l; ++i) sigma[i] = l == 1 ? 1.0 : std::pow(cond, -static_cast<double>(i) / (l - 1));
        const auto y = test::matrix_with_spectrum(m, l, sigma, static_cast<std::uint64_t>(m + l));
        test::HostMatrix<float> stored(ld, l);
        for (index_t j = 0; j < l; ++j)
          for (index_t i = 0; i < ld; ++i) stored(i, j) = i < m ? y(i, j) : 7.0f;
        Matrix<float> q = test::to_backend(*dev, stored), qh = test::to_backend(*host, y);
        Matrix<double> work(*dev, ops.fused_workspace(m, l), 1);
        const int passes = cond <= 1e3 && l % 2 == 1 ? 1 : 2;  // odd widths: one pass
        EXPECT_EQ(ops.fused_cholesky_qr(q.view().block(0, 0, m, l), passes, work.view()), passes);
        orthonormalize(*host, qh.view(), passes == 1 ? Orthonormalizer::CholeskyQR : Orthonormalizer::CholeskyQR2);
        const auto after = test::to_host(*dev, q), href = test::to_host(*host, qh);
        test::HostMatrix<float> hq(m, l);
        double difference = 0.0;
        bool outside_kept = true;
        for (index_t j = 0; j < l; ++j)
          for (index_t i = 0; i < ld; ++i) {
            if (i >= m) {
              outside_kept = outside_kept && after(i, j) == 7.0f;
              continue;
            }
            hq(i, j) = after(i, j);
            difference = std::max(difference, static_cast<double>(std::fabs(hq(i, j) - href(i, j))));
          }
        const std::string at = std::to_string(m) + " x " + std::to_string(l) + ", cond " + std::to_string(cond) +
                               ", passes " + std::to_string(passes);
        EXPECT_TRUE(outside_kept) << at << ": rows beyond the view were written";
        EXPECT_LT(test::orthogonality_loss(hq.cview()), 1e-5) << at;
        EXPECT_LT(test::span_residual(y, hq), 1e-5) << at;
        EXPECT_LT(difference, 1e-5) << at;
      }
}

// Auto on the fused path: columns already orthogonal are only scaled (no Cholesky pass), a well
// conditioned Y takes one pass; a zero column breaks down before Y is written, and orthonormalize
// then falls back to a method that still returns an orthonormal basis.
TEST(Gpu, FusedCholeskyQrScalesOrthogonalColumnsAndReportsBreakdowns) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  CholeskyQrOps& ops = dev->ops<CholeskyQrOps>();
  const index_t m = 3000, l = 24;
  test::HostMatrix<float> y(m, l);
  for (index_t i = 0; i < m; ++i) y(i, i % l) = static_cast<float>(1 + i % 7) * (i % 2 ? -0.5f : 2.0f);  // disjoint supports
  Matrix<float> q = test::to_backend(*dev, y);
  Matrix<double> work(*dev, ops.fused_workspace(m, l), 1);
  EXPECT_EQ(ops.fused_cholesky_qr(q.view(), 0, work.view()), 0);
  EXPECT_LT(test::orthogonality_loss(test::to_host(*dev, q).cview()), 1e-6);
  EXPECT_EQ(orthonormalize(*dev, test::to_backend(*dev, y).view(), Orthonormalizer::Auto), Orthonormalizer::ColumnScaling);

  // Well conditioned: one Cholesky pass, checked by the Gram sums of its result, is enough; an
  // orthonormal Y is not written at all.
  Matrix<float> g = test::to_backend(*dev, test::random_matrix(m, l, test::Elements::Normal, 5));
  EXPECT_EQ(ops.fused_cholesky_qr(g.view(), 0, work.view()), 1);
  const auto once = test::to_host(*dev, g);
  EXPECT_LT(test::orthogonality_loss(once.cview()), 0x1p-24);
  EXPECT_EQ(ops.fused_cholesky_qr(g.view(), 0, work.view()), 0);
  EXPECT_EQ(test::to_host(*dev, g).data, once.data) << "an orthonormal Y is left as it is";

  // Few rows (RP-HOSVD's 1024 x 64 sketches): after one pass, G's distance from I is mostly the
  // rounding of Y to FP32 (about 2^-24 n / sqrt(m), above 2^-24 here), which Auto accepts as
  // orthonormal: one pass, not two.
  Matrix<float> short_y = test::to_backend(*dev, test::random_matrix(1024, 64, test::Elements::Normal, 6));
  Matrix<double> short_work(*dev, ops.fused_workspace(1024, 64), 1);
  EXPECT_EQ(ops.fused_cholesky_qr(short_y.view(), 0, short_work.view()), 1);
  EXPECT_LT(test::orthogonality_loss(test::to_host(*dev, short_y).cview()), 0x1p-24 * (1 + 2 * 8));

  for (index_t i = 0; i < m; ++i) y(i, 7) = 0.0f;
  q = test::to_backend(*dev, y);
  EXPECT_EQ(ops.fused_cholesky_qr(q.view(), 2, work.view()), -1);
  EXPECT_EQ(test::to_host(*dev, q).data, y.data) << "Y is written only after a pass that did not break down";
  const Orthonormalizer used = orthonormalize(*dev, q.view(), Orthonormalizer::Auto);
  EXPECT_NE(used, Orthonormalizer::Auto) << to_string(used);
  EXPECT_LT(test::orthogonality_loss(test::to_host(*dev, q).cview()), 1e-5) << to_string(used);
  EXPECT_THROW(ops.fused_cholesky_qr(q.view(), 3, work.view()), InvalidArgument);
  // CholeskyQR through orthonormalize takes the fused path too (one pass), and reports it.
  Matrix<float> one = test::to_backend(*dev, test::random_matrix(m, l, test::Elements::Normal, 8));
  EXPECT_EQ(orthonormalize(*dev, one.view(), Orthonormalizer::CholeskyQR), Orthonormalizer::CholeskyQR);
  EXPECT_LT(test::orthogonality_loss(test::to_host(*dev, one).cview()), 1e-5);

  // Queued: the verdict says what the wait would have (a breakdown: nothing, no fallback, Y as given).
  q = test::to_backend(*dev, y);
  const OrthonormalizationVerdict broke = orthonormalize_queued(*dev, q.view(), Orthonormalizer::CholeskyQR2);
  EXPECT_FALSE(broke().has_value());
  EXPECT_EQ(test::to_host(*dev, q).data, y.data);
  Matrix<float> fresh = test::to_backend(*dev, test::random_matrix(m, l, test::Elements::Normal, 7));
  const OrthonormalizationVerdict held = orthonormalize_queued(*dev, fresh.view(), Orthonormalizer::Auto);
  EXPECT_EQ(held(), std::optional<Orthonormalizer>(Orthonormalizer::CholeskyQR));
  EXPECT_LT(test::orthogonality_loss(test::to_host(*dev, fresh).cview()), 0x1p-24);
}

/// R^{-1} of the Cholesky factor of G (potrf, then trsm on the identity), or potrf's info.
int inverse_cholesky_factor(Backend& b, MatrixView<double> g, MatrixView<double> rinv) {
  if (const int info = b.cholesky(g)) return info;
  b.scale(0.0, rinv);
  b.add_to_diagonal(rinv, 1.0);
  b.triangular_solve(Side::Left, Op::N, 1.0, g, rinv);
  return 0;
}

/// max |R - R_ref| / max |R_ref| of two n x n host matrices; R's strict lower triangle must be zero.
double relative_difference_of_upper_factors(const Matrix<double>& r, const Matrix<double>& ref) {
  const index_t n = ref.view().rows();
  double worst = 0, scale = 0;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) {
      worst = std::max(worst, std::abs(r.view()(i, j) - ref.view()(i, j)));
      scale = std::max(scale, std::abs(ref.view()(i, j)));
      if (i > j) EXPECT_EQ(r.view()(i, j), 0.0) << n << " " << i << " " << j;
    }
  return worst / scale;
}

// The inverse Cholesky factor (cuSOLVER potrf + cuBLAS trsm) against LAPACK and Kokkos Kernels on
// the host, and a breakdown's pivot index.
TEST(Gpu, InverseCholeskyFactorMatchesHost) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  for (index_t n : {1, 3, 17, 272, 600}) {
    const auto x = test::random_matrix(n + 9, n, Elements::Normal, 13);
    Matrix<double> hg(*host, n, n), hr(*host, n, n), dg(*dev, n, n), dr(*dev, n, n), r(*host, n, n);
    host->copy(test::reference_gemm(Op::T, Op::N, x, x).cview(), hg.view());
    dev->copy(MatrixView<const double>(hg.view()), dg.view());
    ASSERT_EQ(inverse_cholesky_factor(*host, hg, hr), 0);
    ASSERT_EQ(inverse_cholesky_factor(*dev, dg, dr), 0) << n;
    dev->copy(MatrixView<const double>(dr.view()), r.view());
    EXPECT_LT(relative_difference_of_upper_factors(r, hr), 1e-10) << n;
  }
  for (index_t n : {40, 600}) {  // a negative last diagonal entry: the last pivot is negative
    const auto x = test::random_matrix(n + 9, n, Elements::Normal, 14);
    Matrix<double> hg(*host, n, n), dg(*dev, n, n), dr(*dev, n, n);
    host->copy(test::reference_gemm(Op::T, Op::N, x, x).cview(), hg.view());
    hg.view()(n - 1, n - 1) = -1.0;
    dev->copy(MatrixView<const double>(hg.view()), dg.view());
    EXPECT_EQ(inverse_cholesky_factor(*dev, dg, dr), n) << n;
  }
}

// The one-launch inverse Cholesky factor (CholeskyQrOps::inverse_cholesky_factor) against LAPACK on
// the host at orders around its 32 x 32 tiles up to its largest, G left as it was, and each kind of
// breakdown reported at its pivot.
TEST(Gpu, InverseCholeskyKernelMatchesHost) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  CholeskyQrOps& ops = dev->ops<CholeskyQrOps>();
  auto kernel = [&](MatrixView<const double> g, MatrixView<double> rinv) {
    Matrix<double> work(*dev, ops.inverse_cholesky_workspace(g.rows()), 1);
    return ops.inverse_cholesky_factor(g, rinv, work.view());
  };
  for (index_t n : std::vector<index_t>{1, 31, 32, 33, 100, 272, 512, ops.inverse_cholesky_max_order()}) {
    const auto x = test::random_matrix(n + 9, n, Elements::Normal, 15);
    Matrix<double> hg(*host, n, n), hr(*host, n, n), dg(*dev, n, n), dr(*dev, n, n), r(*host, n, n), g(*host, n, n);
    host->copy(test::reference_gemm(Op::T, Op::N, x, x).cview(), hg.view());
    dev->copy(MatrixView<const double>(hg.view()), dg.view());
    dev->scale(std::nan(""), dr.view());  // every entry must be written
    ASSERT_EQ(kernel(dg, dr), 0) << n;
    dev->copy(MatrixView<const double>(dr.view()), r.view());
    dev->copy(MatrixView<const double>(dg.view()), g.view());
    EXPECT_EQ(std::memcmp(g.view().data(), hg.view().data(), sizeof(double) * n * n), 0) << n;  // G not written
    ASSERT_EQ(inverse_cholesky_factor(*host, hg, hr), 0);
    EXPECT_LT(relative_difference_of_upper_factors(r, hr), 1e-11) << n;
  }
  const index_t n = 600;
  const auto x = test::random_matrix(n + 9, n, Elements::Normal, 16);
  const auto g0 = test::reference_gemm(Op::T, Op::N, x, x);
  struct Broken {
    index_t i, j;
    double value;
    int pivot;
  };
  for (const Broken& c : {Broken{5, 5, -1.0, 6}, Broken{n - 1, n - 1, 0.0, static_cast<int>(n)},
                          Broken{300, 40, std::nan(""), 301}, Broken{64, 64, HUGE_VAL, 65}}) {
    Matrix<double> hg(*host, n, n), dg(*dev, n, n), dr(*dev, n, n);
    host->copy(g0.cview(), hg.view());
    hg.view()(c.i, c.j) = c.value;
    dev->copy(MatrixView<const double>(hg.view()), dg.view());
    EXPECT_EQ(kernel(dg, dr), c.pivot) << c.i << " " << c.j;
  }
}

/// ||Q^T Q - I||_F in FP64 on the host.
double frobenius_orthogonality_loss(const test::HostMatrix<float>& q) {
  const auto g = test::reference_gemm(Op::T, Op::N, q, q);
  double sum = 0;
  for (index_t j = 0; j < q.cols; ++j)
    for (index_t i = 0; i < q.cols; ++i) {
      const double e = g(i, j) - (i == j ? 1.0 : 0.0);
      sum += e * e;
    }
  return std::sqrt(sum);
}

// Auto's Tensor Core CholeskyQR (64 < l <= 1024 on the GPU) against FP64 on the host: one pass on a
// well-conditioned Y, and at every condition number up to 1e6 (two passes, or the FP64 path where
// the split Gram matrix is too coarse) orthogonality within its bound 2^-20 sqrt(l) and range(Y) kept.
TEST(Gpu, AutoTensorCoreCholeskyQrKeepsFp32Orthogonality) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  const index_t l = 300;
  for (index_t m : {8192, 8193})  // Y's columns 16-byte aligned, and not (the passes read a copy)
  for (double cond : {1.0, 1e2, 1e4, 1e6}) {
    ASSERT_TRUE(dev->ops<CholeskyQrOps>().split_preferred(m, l));
    std::vector<double> sigma(static_cast<std::size_t>(l));
    for (index_t j = 0; j < l; ++j) sigma[j] = std::pow(cond, -static_cast<double>(j) / static_cast<double>(l - 1));
    const auto y = test::matrix_with_spectrum(m, l, sigma, 21);
    Matrix<float> d(*dev, m, l);
    dev->copy(y.cview(), d.view());
    const Orthonormalizer ran = orthonormalize(*dev, d.view(), Orthonormalizer::Auto);
    const auto q = test::to_host(*dev, d.view());
    EXPECT_LE(frobenius_orthogonality_loss(q), 0x1p-20 * std::sqrt(static_cast<double>(l))) << m << ", " << cond;
    EXPECT_LT(test::span_residual(y, q), 1e-5) << m << ", " << cond;
    if (cond == 1.0) EXPECT_EQ(ran, Orthonormalizer::CholeskyQR) << m;
  }
}

// The sketch-preconditioned CholeskyQR on the Tensor Cores (both sketches, on a fused width and on a
// Tensor Core CholeskyQR width) at condition numbers where one CholeskyQR pass loses orthogonality
// entirely: no fallback, orthogonality within 10x of Householder's on the same Y, range(Y) kept;
// Auto on the same Y (its FP64 path) within the same bound. An exactly rank-deficient Y still gets
// an orthonormal basis of its range.
TEST(Gpu, PreconditionedCholeskyQrOnTheTensorCoresAtAnyConditionNumber) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  for (const auto& [m, l] : std::vector<std::pair<index_t, index_t>>{{32768, 48}, {8192, 200}})
    for (double cond : {1e8, 1e15}) {
      std::vector<double> sigma(static_cast<std::size_t>(l));
      for (index_t j = 0; j < l; ++j) sigma[j] = std::pow(cond, -static_cast<double>(j) / static_cast<double>(l - 1));
      const auto y = test::matrix_with_spectrum(m, l, sigma, static_cast<std::uint64_t>(l) + 5);
      Matrix<float> h = test::to_backend(*dev, y);
      orthonormalize(*dev, h.view(), Orthonormalizer::Householder);
      const double householder = frobenius_orthogonality_loss(test::to_host(*dev, h.view()));
      for (Orthonormalizer method : {Orthonormalizer::RandCholeskyQR, Orthonormalizer::RandCholeskyQRSparse,
                                     Orthonormalizer::Auto}) {
        const std::string at = std::to_string(m) + " x " + std::to_string(l) + ", cond " + std::to_string(cond) +
                               ", " + to_string(method);
        Matrix<float> d = test::to_backend(*dev, y);
        const Orthonormalizer ran = orthonormalize(*dev, d.view(), method);
        if (method != Orthonormalizer::Auto) EXPECT_EQ(ran, method) << at;
        const auto q = test::to_host(*dev, d.view());
        EXPECT_LE(frobenius_orthogonality_loss(q), 10 * householder) << at << ", Householder " << householder;
        EXPECT_LT(test::span_residual(y, q), 1e-5) << at;
      }
    }
  auto y = test::random_matrix(32768, 48, test::Elements::Normal, 4);
  for (index_t i = 0; i < y.rows; ++i) y(i, 7) = 0.0f;
  Matrix<float> d = test::to_backend(*dev, y);
  const Orthonormalizer ran = orthonormalize(*dev, d.view(), Orthonormalizer::RandCholeskyQRSparse);
  const auto q = test::to_host(*dev, d.view());
  EXPECT_LT(test::orthogonality_loss(q.cview()), 1e-5) << to_string(ran);
  EXPECT_LT(test::span_residual(y, q), 1e-5) << to_string(ran);
}

// OnePass beyond the fused widths (the range finder's bases between products at l > 64): one Tensor
// Core pass, whose orthogonality is of order cond(Y)^2 2^-20 sqrt(l) (FP32-accurate Gram sums)
// against the FP64 path's cond(Y)^2 2^-53, with range(Y) kept to FP32 rounding; a zero column breaks the pass
// down and the FP64 path's fallbacks return an orthonormal basis of range(Y). Both with Y's columns
// 16-byte aligned (m = 20000) and not (m = 20001: the pass then reads a copy and writes Y, which
// a breakdown must restore).
TEST(Gpu, OnePassTakesTheTensorCorePassBeyondTheFusedWidths) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda), host = make_backend(BackendKind::Host);
  for (index_t m : {20000, 20001})
  for (index_t l : {74, 266})
    for (double cond : {1.0, 1e2}) {
      ASSERT_TRUE(dev->ops<CholeskyQrOps>().split_preferred(m, l)) << l;
      std::vector<double> sigma(static_cast<std::size_t>(l));
      for (index_t j = 0; j < l; ++j) sigma[j] = std::pow(cond, -static_cast<double>(j) / static_cast<double>(l - 1));
      const auto y = test::matrix_with_spectrum(m, l, sigma, static_cast<std::uint64_t>(l));
      Matrix<float> d = test::to_backend(*dev, y), h = test::to_backend(*host, y);
      const std::string at = std::to_string(m) + " x " + std::to_string(l) + ", cond " + std::to_string(cond);
      EXPECT_EQ(orthonormalize(*dev, d.view(), Orthonormalizer::OnePass), Orthonormalizer::CholeskyQR) << at;
      EXPECT_EQ(orthonormalize(*host, h.view(), Orthonormalizer::OnePass), Orthonormalizer::CholeskyQR) << at;
      const auto q = test::to_host(*dev, d.view()), fp64_path = test::to_host(*host, h.view());
      EXPECT_LE(frobenius_orthogonality_loss(q), (1 + cond * cond) * 0x1p-20 * std::sqrt(static_cast<double>(l))) << at;
      EXPECT_LE(frobenius_orthogonality_loss(fp64_path), 1e-5) << at;
      EXPECT_LT(test::span_residual(y, q), 1e-5) << at;
    }
  for (index_t m : {20000, 20001}) {
    auto y = test::random_matrix(m, 100, test::Elements::Normal, 9);
    for (index_t i = 0; i < m; ++i) y(i, 3) = 0.0f;
    Matrix<float> d = test::to_backend(*dev, y);
    const Orthonormalizer ran = orthonormalize(*dev, d.view(), Orthonormalizer::OnePass);
    EXPECT_NE(ran, Orthonormalizer::CholeskyQR) << m << ", " << to_string(ran);
    const auto q = test::to_host(*dev, d);
    EXPECT_LT(test::orthogonality_loss(q.cview()), 1e-5) << m << ", " << to_string(ran);
    EXPECT_LT(test::span_residual(y, q), 1e-5) << m << ", " << to_string(ran);
  }
}

// The orthogonality probe (FP64 sums of W^T (W Omega) - Omega) against ||W^T W - I||_F in FP64 on
// the host, for an orthonormal W and one 1e-4 away, and its copy of W: row by row (an odd ld),
// four rows at a time (W 16-byte aligned; a last chunk of 4 rows; the widest W it takes), and
// four at a time with a last partial four (ld = m + 1).
TEST(Gpu, OrthogonalityProbeEstimatesTheLossAndCopies) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  CholeskyQrOps& ops = dev->ops<CholeskyQrOps>();
  const index_t probes = 8;
  struct Shape {
    index_t m, l, pad;
  } shapes[] = {{4999, 200, 0}, {2100, 1024, 0}, {3003, 136, 1}};
  for (const Shape& sh : shapes) {
    Matrix<float> w_rows(*dev, sh.m + sh.pad, sh.l), e(*dev, sh.m, sh.l), copy_rows(*dev, sh.m + sh.pad, sh.l);
    Matrix<float> omega(*dev, sh.l, probes);
    Matrix<double> work(*dev, ops.orthogonality_probe_workspace(sh.m, sh.l, probes), 1);
    const MatrixView<float> w = w_rows.view().block(0, 0, sh.m, sh.l), copy = copy_rows.view().block(0, 0, sh.m, sh.l);
    dev->fill_random(RandomSpec{Distribution::Gaussian, 31, 0}, w);
    dev->fill_random(RandomSpec{Distribution::Gaussian, 32, 0}, e.view());
    dev->fill_random(RandomSpec{Distribution::Gaussian, 33, 0}, omega.view());
    orthonormalize(*dev, w, Orthonormalizer::Householder);
    const std::string shape = std::to_string(sh.m) + " x " + std::to_string(sh.l) + ", ld " + std::to_string(w.ld());
    for (float away : {0.0f, 1e-4f}) {
      if (away > 0) dev->add(away, MatrixView<const float>(e.view()), 1.0f, w);
      const auto hw = test::to_host(*dev, w);
      const double exact = frobenius_orthogonality_loss(hw);
      const double estimate = std::sqrt(ops.orthogonality_probe(w, omega, copy, work) / probes);
      EXPECT_GT(estimate, 0.5 * exact) << shape << ", " << away;
      EXPECT_LT(estimate, 1.5 * exact) << shape << ", " << away;
      const auto hc = test::to_host(*dev, copy);
      EXPECT_EQ(std::memcmp(hc.data.data(), hw.data.data(), sizeof(float) * sh.m * sh.l), 0) << shape;
    }
  }
}

}  // namespace
}  // namespace randnla
