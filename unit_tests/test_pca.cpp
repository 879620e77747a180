// PCA against an FP64 reference: LAPACK dgesvd of the explicitly centred matrix, formed in double
// here, with scikit-learn's sign rule (svd_flip, u_based_decision=False) applied to it; the
// signs across ranks; the scores; and bad input.
#include <algorithm>
#include <cmath>

#include "randnla/pca/pca.hpp"
#include "portable/factorizations/lapack.hpp"
#include "randnla/backends.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

constexpr index_t M = 600, N = 150;

/// X = 1 mu0^T + A, A of spectrum 30 * 0.75^i: a decaying spectrum (entries ~ 0.1) and a mean
/// (0.5 + sin) of the same size, so that FP32 holds the centred data to ~1e-7 relative.
test::HostMatrix<float> data_matrix() {
  std::vector<double> sigma(N);
  for (index_t i = 0; i < N; ++i) sigma[i] = 30.0 * std::pow(0.75, static_cast<double>(i));
  test::HostMatrix<float> x = test::matrix_with_spectrum(M, N, sigma, 7);
  for (index_t j = 0; j < N; ++j)
    for (index_t i = 0; i < M; ++i) x(i, j) += static_cast<float>(0.5 + std::sin(0.1 * j));
  return x;
}

/// The exact PCA in FP64: mean, components (k x n, sign rule applied), singular values, ratios.
struct Reference {
  std::vector<double> mean, s, ratio;
  test::HostMatrix<double> components;  // min(m, n) x n
  test::HostMatrix<double> scores;      // m x min(m, n): U diag(S), same signs
};

Reference reference_pca(const test::HostMatrix<float>& x) {
  const int m = static_cast<int>(x.rows), n = static_cast<int>(x.cols), r = std::min(m, n);
  Reference ref;
  ref.mean.assign(static_cast<std::size_t>(n), 0.0);
  std::vector<double> xc(static_cast<std::size_t>(m) * n);
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) ref.mean[j] += x(i, j);
    ref.mean[j] /= m;
    for (int i = 0; i < m; ++i) xc[i + static_cast<std::size_t>(j) * m] = x(i, j) - ref.mean[j];
  }
  ref.s.resize(static_cast<std::size_t>(r));
  std::vector<double> u(static_cast<std::size_t>(m) * r), vt(static_cast<std::size_t>(r) * n);
  int info = 0, lwork = -1;
  double query = 0;
  dgesvd_("S", "S", &m, &n, xc.data(), &m, ref.s.data(), u.data(), &m, vt.data(), &r, &query, &lwork, &info);
  std::vector<double> work(static_cast<std::size_t>(query) + 1);
  lwork = static_cast<int>(work.size());
  dgesvd_("S", "S", &m, &n, xc.data(), &m, ref.s.data(), u.data(), &m, vt.data(), &r, work.data(), &lwork, &info);
  EXPECT_EQ(info, 0);
  double total = 0;
  for (double v : ref.s) total += v * v;
  ref.components = test::HostMatrix<double>(r, n);
  ref.scores = test::HostMatrix<double>(m, r);
  for (int c = 0; c < r; ++c) {
    int largest = 0;  // numpy's argmax of |Vt(c, :)|: the first of equal magnitudes
    for (int j = 1; j < n; ++j)
      if (std::abs(vt[c + static_cast<std::size_t>(j) * r]) > std::abs(vt[c + static_cast<std::size_t>(largest) * r]))
        largest = j;
    const double sign = vt[c + static_cast<std::size_t>(largest) * r] < 0 ? -1.0 : 1.0;
    for (int j = 0; j < n; ++j) ref.components(c, j) = sign * vt[c + static_cast<std::size_t>(j) * r];
    for (int i = 0; i < m; ++i) ref.scores(i, c) = sign * ref.s[c] * u[i + static_cast<std::size_t>(c) * m];
    ref.ratio.push_back(ref.s[c] * ref.s[c] / total);
  }
  return ref;
}

std::vector<float> column(Backend& b, const Matrix<float>& v) { return test::to_host(b, v).data; }

TEST(Pca, MatchesTheFp64ReferenceOfTheExplicitlyCentredMatrix) {
  const test::HostMatrix<float> x = data_matrix();
  const Reference ref = reference_pca(x);
  const index_t k = 10;
  for (const auto& [name, b] : test::portable_backends()) {
    const Matrix<float> xb = test::to_backend(*b, x);
    PcaOptions o;
    o.scores = true;
    const PcaResult r = pca(*b, xb, k, o);
    ASSERT_EQ(r.components.rows(), k);
    ASSERT_EQ(r.components.cols(), N);
    ASSERT_EQ(r.mean.rows(), N);
    ASSERT_EQ(r.singular_values.rows(), k);
    const std::vector<float> mean = column(*b, r.mean), s = column(*b, r.singular_values),
                             ev = column(*b, r.explained_variance), ratio = column(*b, r.explained_variance_ratio);
    // mu: FP32 sums of 600 entries ~ 1.5, so ~ 600 * 2^-24 * 1.5 at worst.
    for (index_t j = 0; j < N; ++j) EXPECT_NEAR(mean[j], ref.mean[j], 1e-5) << name << " mean " << j;
    // sigma_i: the sketch's error (sigma_21 / sigma_i)^5 <= 0.75^55 ~ 1e-7, and FP32 rounding of
    // the products, 2^-24 sigma_1 / sigma_i <= 1e-6 relative for the tenth (measured: 1.5e-7).
    for (index_t i = 0; i < k; ++i) {
      EXPECT_NEAR(s[i], ref.s[i], 5e-6 * ref.s[i]) << name << " sigma " << i;
      EXPECT_NEAR(ev[i], ref.s[i] * ref.s[i] / (M - 1), 1e-5 * ev[i]) << name << " variance " << i;
      EXPECT_NEAR(ratio[i], ref.ratio[i], 1e-5 * ref.ratio[i]) << name << " ratio " << i;
    }
    // Components, directly (signs are the rule's): a component's FP32 error grows as sigma_1 /
    // (its gap to the next, 0.25 sigma_i), to 2^-24 * 4 / 0.75^9 ~ 4e-6 for the tenth (measured: 6e-7).
    const test::HostMatrix<float> c = test::to_host(*b, r.components);
    double worst_component = 0, worst_sigma = 0;
    for (index_t i = 0; i < k; ++i) {
      worst_sigma = std::max(worst_sigma, std::abs(s[i] - ref.s[i]) / ref.s[i]);
      for (index_t j = 0; j < N; ++j) worst_component = std::max(worst_component, std::abs(c(i, j) - ref.components(i, j)));
    }
    std::printf("%s: max |component - reference| %.2e, max relative sigma error %.2e\n", name.c_str(), worst_component,
                worst_sigma);
    EXPECT_LE(worst_component, 1e-5) << name;
    const test::HostMatrix<float> scores = test::to_host(*b, r.scores);
    for (index_t i = 0; i < k; ++i)
      for (index_t row = 0; row < M; row += 37)
        ASSERT_NEAR(scores(row, i), ref.scores(row, i), 1e-5 * ref.s[0]) << name << " score " << row << "," << i;
    double total = 0;
    for (double v : ref.s) total += v * v;
    EXPECT_NEAR(r.total_variance, total / (M - 1), 1e-5 * total / (M - 1)) << name;
    double tail = 0;
    for (std::size_t i = k; i < ref.s.size(); ++i) tail += ref.s[i] * ref.s[i];
    EXPECT_NEAR(r.report.relative_error_estimate, std::sqrt(tail / total), 1e-3 * std::sqrt(tail / total)) << name;
  }
}

TEST(Pca, SignsDoNotChangeWithTheRank) {
  auto b = make_backend(BackendKind::Host);
  const test::HostMatrix<float> x = data_matrix();
  const Matrix<float> xb = test::to_backend(*b, x);
  const test::HostMatrix<float> c5 = test::to_host(*b, pca(*b, xb, 5).components);
  const test::HostMatrix<float> c10 = test::to_host(*b, pca(*b, xb, 10).components);
  for (index_t i = 0; i < 5; ++i) {
    double dot = 0;
    for (index_t j = 0; j < N; ++j) dot += static_cast<double>(c5(i, j)) * c10(i, j);
    EXPECT_GT(dot, 1.0 - 1e-6) << "component " << i;  // the same unit vector, with the same sign
  }
}

TEST(Pca, BadInputThrowsNamingTheParameter) {
  auto b = make_backend(BackendKind::Host);
  auto x = data_matrix();
  const auto message = [&](const test::HostMatrix<float>& a, index_t k, const PcaOptions& o) {
    return test::invalid_argument_message([&] { pca(*b, a.cview(), k, o); });
  };
  const PcaOptions o;
  EXPECT_NE(message(x, 0, o).find("argument k = 0"), std::string::npos);
  EXPECT_NE(message(x, N - 5, o).find("argument k + oversampling = 155"), std::string::npos);  // > 150
  test::HostMatrix<float> one(1, N);
  PcaOptions small;
  small.oversampling = 0;
  EXPECT_NE(message(one, 1, small).find("argument X.rows = 1"), std::string::npos);
  x(3, 4) = std::nanf("");
  EXPECT_NE(message(x, 5, o).find("1 non-finite"), std::string::npos);
  x(3, 4) = -INFINITY;
  EXPECT_NE(message(x, 5, o).find("1 non-finite"), std::string::npos);
  test::HostMatrix<float> constant(40, 30);
  for (float& v : constant.data) v = 3.0f;
  // Constant features: refused as of zero variance, or as within the rounding of an FP32 mean.
  const std::string flat = message(constant, 3, o);
  EXPECT_TRUE(flat.find("zero variance") != std::string::npos || flat.find("constant to FP32") != std::string::npos)
      << flat;
  test::HostMatrix<float> zero(40, 30);
  EXPECT_NE(message(zero, 3, o).find("zero variance"), std::string::npos);
  auto huge = zero;  // finite, but the column sums overflow FP32
  for (float& v : huge.data) v = 3e38f;
  EXPECT_NE(message(huge, 3, o).find("overflow FP32"), std::string::npos) << message(huge, 3, o);
}

}  // namespace
}  // namespace randnla
