// The randomized SVD and PCA of CSR matrices and of user operators: against the dense algorithms on
// the densified matrix (same seed, FP32 products: the same Omega) and an FP64 SVD (LAPACK dgesvd),
// the user operator against the CSR one, and bad input.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "portable/factorizations/lapack.hpp"
#include "randnla/backends.hpp"
#include "randnla/sparse/kokkos_api.hpp"
#include "randnla/sparse/sparse_ops.hpp"
// After Kokkos (Kokkos Kernels 3.4's spmv header does not include it); its transpose functor
// trips GCC's maybe-uninitialized (as in backends/portable/sparse/sparse_kernels.hpp).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <KokkosSparse_spmv.hpp>
#pragma GCC diagnostic pop
#include "test_support.hpp"

namespace randnla {
namespace {

constexpr index_t M = 500, N = 300, K = 8;

/// A CSR matrix on the host (sorted columns) and its dense copy.
struct HostCsr {
  index_t rows = 0, cols = 0;
  std::vector<std::int32_t> row_ptr, col_idx;
  std::vector<float> values;
  CsrView view() const {
    return CsrView{rows, cols, static_cast<index_t>(values.size()), row_ptr.data(), col_idx.data(), values.data(),
                   MemorySpace::Host};
  }
  test::HostMatrix<float> dense() const {
    test::HostMatrix<float> d(rows, cols);
    for (index_t i = 0; i < rows; ++i)
      for (std::int32_t j = row_ptr[i]; j < row_ptr[i + 1]; ++j) d(i, col_idx[j]) = values[j];
    return d;
  }
};

/// The CSR form of a dense host matrix (its non-zeros, columns sorted).
HostCsr compress(const test::HostMatrix<float>& d) {
  HostCsr a;
  a.rows = d.rows, a.cols = d.cols;
  a.row_ptr.push_back(0);
  for (index_t i = 0; i < d.rows; ++i) {
    for (index_t j = 0; j < d.cols; ++j)
      if (d(i, j) != 0.0f) a.col_idx.push_back(static_cast<std::int32_t>(j)), a.values.push_back(d(i, j));
    a.row_ptr.push_back(static_cast<std::int32_t>(a.values.size()));
  }
  return a;
}

/// A (M x N) with a planted spectrum: 10 * 0.8^i on a permuted diagonal (entry (p(i), q(i))), plus
/// about 3% of noise entries of size 0.01, uniform in (-1, 1) or, where `positive`, in (0, 2) (a
/// mean for the PCA). sigma_{K+11} / sigma_K ~ 0.8^11 ~ 0.09: the range finder converges fast.
HostCsr planted_matrix(bool positive, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  test::HostMatrix<float> d(M, N);
  for (index_t j = 0; j < N; ++j)
    for (index_t i = 0; i < M; ++i)
      if (u(gen) < 0.03) d(i, j) = static_cast<float>(0.01 * (positive ? 2.0 * u(gen) : 2.0 * u(gen) - 1.0));
  std::vector<index_t> p(M), q(N);
  for (index_t i = 0; i < M; ++i) p[i] = i;
  for (index_t j = 0; j < N; ++j) q[j] = j;
  std::shuffle(p.begin(), p.end(), gen), std::shuffle(q.begin(), q.end(), gen);
  for (index_t i = 0; i < 40; ++i) d(p[i], q[i]) = static_cast<float>(10.0 * std::pow(0.8, static_cast<double>(i)));
  return compress(d);
}

/// The FP64 SVD of a (optionally with its column means subtracted): S, U (m x r), V (n x r).
struct Svd64 {
  std::vector<double> s;
  test::HostMatrix<float> u, v;  // the leading K vectors, rounded to FP32 for span_residual
};
Svd64 svd64(const test::HostMatrix<float>& a, bool centre) {
  const int m = static_cast<int>(a.rows), n = static_cast<int>(a.cols), r = std::min(m, n);
  std::vector<double> x(static_cast<std::size_t>(m) * n);
  for (int j = 0; j < n; ++j) {
    double mean = 0;
    for (int i = 0; i < m; ++i) mean += a(i, j);
    mean = centre ? mean / m : 0.0;
    for (int i = 0; i < m; ++i) x[i + static_cast<std::size_t>(j) * m] = a(i, j) - mean;
  }
  Svd64 out;
  out.s.resize(static_cast<std::size_t>(r));
  std::vector<double> u(static_cast<std::size_t>(m) * r), vt(static_cast<std::size_t>(r) * n);
  int info = 0, lwork = -1;
  double query = 0;
  dgesvd_("S", "S", &m, &n, x.data(), &m, out.s.data(), u.data(), &m, vt.data(), &r, &query, &lwork, &info);
  std::vector<double> work(static_cast<std::size_t>(query) + 1);
  lwork = static_cast<int>(work.size());
  dgesvd_("S", "S", &m, &n, x.data(), &m, out.s.data(), u.data(), &m, vt.data(), &r, work.data(), &lwork, &info);
  EXPECT_EQ(info, 0);
  out.u = test::HostMatrix<float>(m, K), out.v = test::HostMatrix<float>(n, K);
  for (int c = 0; c < K; ++c) {
    for (int i = 0; i < m; ++i) out.u(i, c) = static_cast<float>(u[i + static_cast<std::size_t>(c) * m]);
    for (int j = 0; j < n; ++j) out.v(j, c) = static_cast<float>(vt[c + static_cast<std::size_t>(j) * r]);
  }
  return out;
}

std::vector<float> column(Backend& b, const Matrix<float>& v) { return test::to_host(b, v).data; }

/// The gaps: sigma_K / sigma_{K+p+1}, the range finder's convergence ratio, must be well below 1 for
/// the tolerances below (measured on this matrix, checked so that a change of it shows).
TEST(SparseRsvd, PlantedSpectrumHasGaps) {
  const Svd64 ref = svd64(planted_matrix(true, 11).dense(), false);
  EXPECT_LT(ref.s[K + 10] / ref.s[K - 1], 0.15);
}

TEST(SparseRsvd, MatchesTheDenseRsvdOfTheSameMatrixAndTheFp64Svd) {
  const HostCsr a = planted_matrix(true, 11);
  const test::HostMatrix<float> dense = a.dense();
  const Svd64 ref = svd64(dense, false);
  auto b = make_backend(BackendKind::Host);
  RsvdOptions o;
  o.products = ProductPrecision::fp32();  // the dense run draws and stores Omega in FP32 too
  const RsvdResult sparse = rsvd(*b, a.view(), K, o), full = rsvd(*b, dense.cview(), K, o);
  EXPECT_NE(sparse.report.sketch_kernel.find("Omega stored in FP32, then csr spmm (Kokkos Kernels"), std::string::npos)
      << sparse.report.sketch_kernel;
  const std::vector<float> s = column(*b, sparse.S), sd = column(*b, full.S);
  for (index_t i = 0; i < K; ++i) {
    // q = 2: the error of sigma_i is about (sigma_{K+p+1} / sigma_i)^(4q+2) relative, below 0.15^10;
    // FP32 rounding, 2^-24 sigma_1 / sigma_i <= 3e-7 relative, dominates (measured: 1.4e-7).
    EXPECT_NEAR(s[i], ref.s[i], 1e-5 * ref.s[i]) << "sigma " << i;
    // The same Omega, the same products up to summation order: FP32 rounding apart.
    EXPECT_NEAR(s[i], sd[i], 2e-6 * ref.s[0]) << "sparse vs dense sigma " << i;
  }
  double worst = 0, worst_dense = 0;
  for (index_t i = 0; i < K; ++i)
    worst = std::max(worst, std::abs(s[i] - ref.s[i]) / ref.s[i]), worst_dense = std::max(worst_dense, std::abs(s[i] - sd[i]) / ref.s[0]);
  const test::HostMatrix<float> u = test::to_host(*b, sparse.U), v = test::to_host(*b, sparse.V);
  std::printf("sparse RSVD: max relative sigma error %.2e (vs FP64), %.2e sigma_1 (vs dense); span residuals U %.2e, V %.2e\n",
              worst, worst_dense, test::span_residual(ref.u, u), test::span_residual(ref.v, v));
  // The subspaces: the leading K singular vectors of the FP64 SVD lie in span(U), span(V).
  EXPECT_LT(test::span_residual(ref.u, u), 1e-4);  // measured: 1.7e-6 (U), 1.6e-7 (V)
  EXPECT_LT(test::span_residual(ref.v, v), 1e-4);
  EXPECT_LT(test::span_residual(test::to_host(*b, full.U), u), 1e-4) << "sparse vs dense U";
  EXPECT_LT(test::orthogonality_loss(u.cview()), 1e-5);
  // The error estimate against the true residual ||A - U S V^T||_F / ||A||_F.
  const double err = test::lowrank_relative_error(dense.cview(), u.cview(), test::to_host(*b, sparse.S).cview(), v.cview());
  EXPECT_NEAR(sparse.report.relative_error_estimate, err, 0.5 * err);
  // randnla::relative_error (no m x n buffer) against the dense FP64 residual, also for a U that
  // is far from orthonormal (the formula must not assume U^T U = I).
  const test::HostMatrix<float> sv = test::to_host(*b, sparse.S);
  EXPECT_NEAR(relative_error(*b, a.view(), sparse.U, sparse.S, sparse.V), err, 1e-5 * err);
  test::HostMatrix<float> skewed = u;
  for (index_t i = 0; i < M; ++i) skewed(i, 0) = 1.5f * u(i, 0) + 0.3f * u(i, 2);
  const double skewed_err = test::lowrank_relative_error(dense.cview(), skewed.cview(), sv.cview(), v.cview());
  ASSERT_GT(skewed_err, 2 * err);
  EXPECT_NEAR(relative_error(*b, a.view(), skewed.cview(), sv.cview(), v.cview()), skewed_err, 1e-5 * skewed_err);
  EXPECT_NE(test::invalid_argument_message([&] { relative_error(*b, a.view(), v.cview(), sv.cview(), v.cview()); }).find("U"),
            std::string::npos);
}

// The sparse sign sketch against A Omega in FP64 for the Omega its entries give: one non-zero
// +-1/sqrt(zeta) in each of zeta blocks of columns per row; over many rows, each column of a block
// of s columns is hit about n / s times and half the signs are negative (within 5 standard
// deviations); another RNG state draws another Omega.
TEST(SparseRsvd, SparseSignSketchIsAOmegaForTheOmegaItDraws) {
  const HostCsr a = planted_matrix(false, 21);
  const test::HostMatrix<float> dense = a.dense();
  auto b = make_backend(BackendKind::Host);
  for (index_t l : {3, 18}) {
    const SparseSignSketch omega(N, l, RngState{7, 3});
    ASSERT_EQ(omega.nonzeros, std::min<index_t>(l, 8));
    std::vector<double> w(static_cast<std::size_t>(N * l), 0.0);
    for (index_t j = 0; j < N; ++j)
      for (int t = 0; t < omega.nonzeros; ++t) {
        const SparseSignSketch::Entry e = omega.entry(j, t);
        ASSERT_TRUE(e.column >= omega.block_begin(t) && e.column < omega.block_begin(t + 1)) << j << ", " << t;
        w[j + e.column * N] = (e.negative ? -1.0 : 1.0) / std::sqrt(static_cast<double>(omega.nonzeros));
      }
    Matrix<float> y(*b, M, l);
    b->ops<SparseOps>().sparse_sign_sketch(a.view(), omega, y.view());
    const test::HostMatrix<float> got = test::to_host(*b, y);
    double worst = 0, largest = 0;
    for (index_t c = 0; c < l; ++c)
      for (index_t i = 0; i < M; ++i) {
        double ref = 0;
        for (index_t j = 0; j < N; ++j) ref += static_cast<double>(dense(i, j)) * w[j + c * N];
        worst = std::max(worst, std::abs(got(i, c) - ref)), largest = std::max(largest, std::abs(ref));
      }
    ASSERT_GT(largest, 1.0);
    EXPECT_LT(worst, 1e-6 * largest) << "l = " << l;
  }
  const std::int64_t n = 200000;
  const SparseSignSketch omega(n, 74, RngState{1, 0}), other(n, 74, RngState{1, 1});
  std::vector<double> hits(74, 0.0);
  double negative = 0, moved = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (int t = 0; t < omega.nonzeros; ++t) {
      const SparseSignSketch::Entry e = omega.entry(j, t);
      hits[static_cast<std::size_t>(e.column)] += 1, negative += e.negative;
      moved += other.entry(j, t).column != e.column;
    }
  for (int t = 0; t < omega.nonzeros; ++t) {
    const double size = omega.block_begin(t + 1) - omega.block_begin(t), expected = static_cast<double>(n) / size;
    for (std::int32_t c = omega.block_begin(t); c < omega.block_begin(t + 1); ++c)
      EXPECT_NEAR(hits[static_cast<std::size_t>(c)], expected, 5 * std::sqrt(expected)) << "column " << c;
  }
  const double draws = static_cast<double>(n) * omega.nonzeros;
  EXPECT_NEAR(negative / draws, 0.5, 5 * 0.5 / std::sqrt(draws));
  EXPECT_GT(moved / draws, 0.8);
}

// The RSVD with the sparse sign sketch (q = 2) reaches the FP64 SVD's singular values and
// subspaces to the tolerances of the Gaussian sketch's test, and the report names the sketch.
TEST(SparseRsvd, SparseSignSketchReachesTheGaussianSketchsAccuracy) {
  const HostCsr a = planted_matrix(true, 11);
  const Svd64 ref = svd64(a.dense(), false);
  auto b = make_backend(BackendKind::Host);
  RsvdOptions o;
  o.products = ProductPrecision::fp32();
  o.sketch_operator = SketchOperator::SparseSign;
  const RsvdResult r = rsvd(*b, a.view(), K, o);
  EXPECT_NE(r.report.sketch_kernel.find("sparse sign Omega (8 non-zeros a row, never stored)"), std::string::npos)
      << r.report.sketch_kernel;
  const std::vector<float> s = column(*b, r.S);
  for (index_t i = 0; i < K; ++i) EXPECT_NEAR(s[i], ref.s[i], 1e-5 * ref.s[i]) << "sigma " << i;
  EXPECT_LT(test::span_residual(ref.u, test::to_host(*b, r.U)), 1e-4);
  EXPECT_LT(test::span_residual(ref.v, test::to_host(*b, r.V)), 1e-4);
}

TEST(SparseRsvd, FixedAccuracyMatchesTheDenseOneOnTheSameMatrix) {
  const HostCsr a = planted_matrix(true, 16);
  const test::HostMatrix<float> dense = a.dense();
  const Svd64 ref = svd64(dense, false);
  auto b = make_backend(BackendKind::Host);
  FixedAccuracyOptions o;
  o.products = ProductPrecision::fp32();
  o.tolerance = 0.3, o.block_size = 4, o.power_iterations = 2;
  const RsvdResult sparse = rsvd_fixed_accuracy(*b, a.view(), o), full = rsvd_fixed_accuracy(*b, dense.cview(), o);
  // The same blocks of Omega and the same products up to summation order: the same rank.
  ASSERT_EQ(sparse.S.rows(), full.S.rows());
  EXPECT_LE(sparse.report.relative_error_estimate, 0.3);
  const std::vector<float> s = column(*b, sparse.S);
  const double err = test::lowrank_relative_error(dense.cview(), test::to_host(*b, sparse.U).cview(),
                                                  test::to_host(*b, sparse.S).cview(), test::to_host(*b, sparse.V).cview());
  EXPECT_NEAR(sparse.report.relative_error_estimate, err, 1e-3);  // the indicator is exact up to rounding
  EXPECT_LE(err, 0.3);
  const std::vector<float> sd = column(*b, full.S);
  for (index_t i = 0; i < std::min<index_t>(4, sparse.S.rows()); ++i) {
    EXPECT_NEAR(s[i], ref.s[i], 1e-4 * ref.s[i]) << "sigma " << i;  // q = 2 within each block
    EXPECT_NEAR(s[i], sd[i], 2e-6 * ref.s[0]) << "sparse vs dense sigma " << i;
  }
}

TEST(SparsePca, MatchesThePcaOfItsDenseCopyAndTheFp64Reference) {
  const HostCsr x = planted_matrix(false, 12);  // non-negative: a mean of the size of the spread
  const test::HostMatrix<float> dense = x.dense();
  const Svd64 ref = svd64(dense, true);
  auto b = make_backend(BackendKind::Host);
  PcaOptions o;
  o.products = ProductPrecision::fp32();
  o.scores = true;
  const PcaResult sparse = pca(*b, x.view(), K, o), full = pca(*b, dense.cview(), K, o);
  EXPECT_NE(sparse.report.sketch_kernel.find("csr spmm"), std::string::npos) << sparse.report.sketch_kernel;
  const std::vector<float> mean = column(*b, sparse.mean), s = column(*b, sparse.singular_values),
                           sd = column(*b, full.singular_values);
  for (index_t j = 0; j < N; ++j) {
    double m64 = 0;
    for (index_t i = 0; i < M; ++i) m64 += dense(i, j);
    EXPECT_NEAR(mean[j], m64 / M, 1e-6) << "mean " << j;  // FP32 sums of ~20 non-zeros < 1
  }
  for (index_t i = 0; i < K; ++i) {
    EXPECT_NEAR(s[i], ref.s[i], 1e-5 * ref.s[i]) << "sigma " << i;  // measured: 9.4e-8
    EXPECT_NEAR(s[i], sd[i], 1e-6 * ref.s[0]) << "sparse vs dense sigma " << i;
  }
  double total = 0;
  for (double v : ref.s) total += v * v;
  EXPECT_NEAR(sparse.total_variance, total / (M - 1), 1e-5 * total / (M - 1));
  // Components (k x n rows) against the FP64 right singular vectors of the centred matrix, and
  // against the dense PCA's, sign rule included.
  const test::HostMatrix<float> c = test::to_host(*b, sparse.components), cd = test::to_host(*b, full.components);
  test::HostMatrix<float> ct(N, K);
  for (index_t i = 0; i < K; ++i)
    for (index_t j = 0; j < N; ++j) ct(j, i) = c(i, j);
  EXPECT_LT(test::span_residual(ref.v, ct), 1e-4);  // measured: 8.6e-8
  double worst = 0;
  for (index_t i = 0; i < K; ++i)
    for (index_t j = 0; j < N; ++j) worst = std::max(worst, static_cast<double>(std::abs(c(i, j) - cd(i, j))));
  double worst_sigma = 0;
  for (index_t i = 0; i < K; ++i) worst_sigma = std::max(worst_sigma, std::abs(s[i] - ref.s[i]) / ref.s[i]);
  std::printf("sparse PCA: max relative sigma error %.2e (vs FP64), span residual %.2e, max |component - dense's| %.2e\n",
              worst_sigma, test::span_residual(ref.v, ct), worst);
  EXPECT_LT(worst, 1e-5) << "sparse vs dense components";  // measured: 2.0e-7
  EXPECT_EQ(sparse.scores.rows(), M);
}

using Host = Kokkos::DefaultHostExecutionSpace;
using HostCrs = CsrMatrix<Host>;

HostCrs to_crs(const HostCsr& a) {
  typename HostCrs::values_type values("values", a.values.size());
  typename HostCrs::row_map_type::non_const_type row_map("row_map", a.row_ptr.size());
  typename HostCrs::index_type entries("entries", a.col_idx.size());
  for (std::size_t i = 0; i < a.values.size(); ++i) values(i) = a.values[i], entries(i) = a.col_idx[i];
  for (std::size_t i = 0; i < a.row_ptr.size(); ++i) row_map(i) = a.row_ptr[i];
  return HostCrs("A", static_cast<int>(a.rows), static_cast<int>(a.cols), static_cast<int>(a.values.size()), values,
                 row_map, entries);
}

TEST(SparseRsvd, UserOperatorEqualsTheCsrOneThroughTheKokkosEntries) {
  const HostCsr a = planted_matrix(true, 13);
  const HostCrs crs = to_crs(a);
  const Host exec;
  RsvdOptions o;
  o.products = ProductPrecision::fp32();
  const auto from_csr = rsvd(exec, crs, K, o);
  UserOperator<Host::memory_space> op;
  op.rows = M, op.cols = N;
  int calls = 0;
  op.apply = [&](const UserOperator<Host::memory_space>::ConstView& x, const UserOperator<Host::memory_space>::View& y) {
    ++calls;
    KokkosSparse::spmv("N", 1.0f, crs, x, 0.0f, y);
  };
  op.apply_transpose = [&](const UserOperator<Host::memory_space>::ConstView& y,
                           const UserOperator<Host::memory_space>::View& z) {
    ++calls;
    KokkosSparse::spmv("T", 1.0f, crs, y, 0.0f, z);
  };
  const auto from_user = rsvd(exec, op, K, o);
  // sketch, 2 x (A^T, A), B^T = A^T Q, one probe product: 7 calls.
  EXPECT_EQ(calls, 7);
  EXPECT_NE(from_user.report.sketch_kernel.find("the user's apply"), std::string::npos);
  ASSERT_EQ(from_user.S.extent(0), static_cast<std::size_t>(K));
  for (index_t i = 0; i < K; ++i) EXPECT_NEAR(from_user.S(i), from_csr.S(i), 1e-6 * from_csr.S(0)) << "sigma " << i;
  const auto u = test::from_kokkos(from_user.U), uc = test::from_kokkos(from_csr.U);
  EXPECT_LT(test::span_residual(uc, u), 1e-5);
  // The fixed-accuracy RSVD and the PCA of the operator equal the CSR matrix's: the same products.
  double squares = 0;
  for (float v : a.values) squares += static_cast<double>(v) * v;
  op.frobenius_norm = std::sqrt(squares);
  FixedAccuracyOptions fo;
  fo.tolerance = 0.3;
  fo.products = ProductPrecision::fp32();
  const auto fixed_csr = rsvd_fixed_accuracy(exec, crs, fo), fixed_user = rsvd_fixed_accuracy(exec, op, fo);
  ASSERT_EQ(fixed_user.S.extent(0), fixed_csr.S.extent(0));
  for (std::size_t i = 0; i < fixed_csr.S.extent(0); ++i)
    EXPECT_NEAR(fixed_user.S(i), fixed_csr.S(i), 1e-6 * fixed_csr.S(0)) << "fixed-accuracy sigma " << i;
  PcaOptions po;
  po.products = ProductPrecision::fp32();
  const auto p = pca(exec, crs, K, po), pu = pca(exec, op, K, po);
  EXPECT_EQ(pu.input, "X: a user operator");
  EXPECT_NEAR(pu.total_variance, p.total_variance, 1e-6 * p.total_variance);
  for (index_t j = 0; j < N; ++j) EXPECT_NEAR(pu.mean(j), p.mean(j), 1e-6) << "mean " << j;
  for (index_t i = 0; i < K; ++i) {
    EXPECT_NEAR(pu.singular_values(i), p.singular_values(i), 1e-6 * p.singular_values(0)) << "PCA sigma " << i;
    double dot = 0;
    for (index_t j = 0; j < N; ++j) dot += static_cast<double>(pu.components(i, j)) * p.components(i, j);
    EXPECT_NEAR(dot, 1.0, 1e-4) << "component " << i << " (the same sign: svd_flip)";
  }
  op.frobenius_norm = -1;
  EXPECT_NE(test::invalid_argument_message([&] { pca(exec, op, K); }).find("a.frobenius_norm = -1"), std::string::npos);
  EXPECT_NE(test::invalid_argument_message([&] { rsvd_fixed_accuracy(exec, op, fo); }).find("a.frobenius_norm"),
            std::string::npos);
}

TEST(SparseRsvd, BadInputThrowsNamingTheParameterAndValue) {
  auto b = make_backend(BackendKind::Host);
  const HostCsr good = planted_matrix(true, 14);
  const auto message = [&](const HostCsr& a, index_t k = K, RsvdOptions o = {}) {
    return test::invalid_argument_message([&] { rsvd(*b, a.view(), k, o); });
  };
  EXPECT_EQ(message(good), "no error");
  const std::int32_t r0 = good.row_ptr[3];  // row 3's first entry (rows 0..2 non-empty)
  ASSERT_LT(good.row_ptr[3] + 1, good.row_ptr[4]);
  {
    HostCsr a = good;
    std::swap(a.col_idx[r0], a.col_idx[r0 + 1]);
    EXPECT_NE(message(a).find("A.col_idx[" + std::to_string(r0 + 1) + "] = " + std::to_string(a.col_idx[r0 + 1]) +
                              ": must be above"),
              std::string::npos)
        << message(a);
  }
  {
    HostCsr a = good;
    a.col_idx[r0 + 1] = a.col_idx[r0];  // a duplicate
    EXPECT_NE(message(a).find("A.col_idx[" + std::to_string(r0 + 1) + "]"), std::string::npos) << message(a);
  }
  {
    HostCsr a = good;
    a.col_idx.back() = static_cast<std::int32_t>(N);
    EXPECT_NE(message(a).find("A.col_idx[" + std::to_string(a.values.size() - 1) + "] = 300: must lie in 0 .. cols - 1 = 299"),
              std::string::npos)
        << message(a);
    a.col_idx.back() = -1;
    EXPECT_NE(message(a).find("= -1: must lie in 0 .. cols - 1"), std::string::npos) << message(a);
  }
  {
    HostCsr a = good;
    a.values[r0] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_NE(message(a).find("A.values[" + std::to_string(r0) + "] = nan: must be finite"), std::string::npos) << message(a);
    a.values[r0] = std::numeric_limits<float>::infinity();
    EXPECT_NE(message(a).find("A.values[" + std::to_string(r0) + "] = inf"), std::string::npos) << message(a);
  }
  {
    HostCsr a = good;
    a.row_ptr[5] = a.row_ptr[4] - 1;  // not monotone
    EXPECT_NE(message(a).find("A.row_ptr[5] = " + std::to_string(a.row_ptr[5]) + ": must lie in row_ptr[4]"),
              std::string::npos)
        << message(a);
  }
  {
    HostCsr a = good;
    a.row_ptr[0] = 1;
    EXPECT_NE(message(a).find("A.row_ptr[0] = 1: must be 0"), std::string::npos) << message(a);
  }
  {
    HostCsr a = good;
    a.values.push_back(1.0f), a.col_idx.push_back(0);  // nnz one more than row_ptr[m]
    EXPECT_NE(message(a).find("A.row_ptr[500] = " + std::to_string(good.values.size()) + ": must equal nnz"),
              std::string::npos)
        << message(a);
  }
  {
    HostCsr a = good;
    a.row_ptr.back() += 1;  // past nnz
    EXPECT_NE(message(a).find("A.row_ptr[500]"), std::string::npos) << message(a);
  }
  {
    HostCsr a = good;  // a bad entry and, after it, a bad offset: the offset is named (one pass checks both)
    a.col_idx[r0] = -1;
    a.row_ptr[400] = a.row_ptr[399] - 1;
    EXPECT_NE(message(a).find("A.row_ptr[400] = " + std::to_string(a.row_ptr[400]) + ": must lie in row_ptr[399]"),
              std::string::npos)
        << message(a);
  }
  EXPECT_NE(message(good, 400).find("k + oversampling"), std::string::npos) << message(good, 400);
  {
    HostCsr a = good;
    a.rows = -1;
    EXPECT_NE(message(a).find("A.rows = -1"), std::string::npos) << message(a);
  }
  // PCA: one sample; a matrix of another memory space.
  HostCsr one = good;
  one.rows = 1, one.row_ptr.resize(2), one.row_ptr[1] = static_cast<std::int32_t>(one.values.size());
  EXPECT_NE(test::invalid_argument_message([&] { pca(*b, one.view(), 1); }).find("X.rows = 1"), std::string::npos);
  CsrView device = good.view();
  device.space = MemorySpace::Device;
  EXPECT_NE(test::invalid_argument_message([&] { rsvd(*b, device, K); }).find("A.space = device"), std::string::npos);
  // Kokkos: extents that disagree.
  const HostCrs crs = to_crs(good);
  const HostCrs short_values("A", M, N, static_cast<int>(good.values.size()),
                             Kokkos::subview(crs.values, std::make_pair<std::size_t, std::size_t>(0, 10)),
                             crs.graph.row_map, crs.graph.entries);
  EXPECT_NE(test::invalid_argument_message([&] { rsvd(Host(), short_values, K); }).find("A.values.extent(0) = 10"),
            std::string::npos);
}

TEST(SparseRsvd, UserOperatorBadInputThrows) {
  auto b = make_backend(BackendKind::Host);
  const HostCsr a = planted_matrix(true, 15);
  const test::HostMatrix<float> dense = a.dense();
  OperatorCallbacks f;
  f.rows = M, f.cols = N;
  EXPECT_NE(test::invalid_argument_message([&] { rsvd(*b, f, K); }).find("apply = empty"), std::string::npos);
  f.apply = [&](MatrixView<const float>, MatrixView<float> y) {
    for (index_t j = 0; j < y.cols(); ++j)
      for (index_t i = 0; i < y.rows(); ++i) y(i, j) = std::numeric_limits<float>::infinity();
  };
  EXPECT_NE(test::invalid_argument_message([&] { rsvd(*b, f, K); }).find("apply_transpose = empty"), std::string::npos);
  f.apply_transpose = [](MatrixView<const float>, MatrixView<float>) {};
  EXPECT_NE(test::invalid_argument_message([&] { rsvd(*b, f, K); }).find("non-finite entries"), std::string::npos);
  RsvdOptions sign;
  sign.sketch_operator = SketchOperator::SparseSign;
  EXPECT_NE(test::invalid_argument_message([&] { rsvd(*b, f, K, sign); }).find("sketch_operator = sparse-sign"),
            std::string::npos);
  f.cols = 0;
  EXPECT_NE(test::invalid_argument_message([&] { rsvd(*b, f, K); }).find("a.cols = 0"), std::string::npos);
}

}  // namespace
}  // namespace randnla
