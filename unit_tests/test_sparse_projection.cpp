// Very sparse random projection: S's statistics (non-zeros per row, gaps, signs) against their
// exact distributions, Y against an FP64 product with the same S, the same S on every backend and
// thread count, the Johnson-Lindenstrauss property on Fashion-MNIST, and the argument errors.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <fstream>
#include <vector>

#include "io/matrix_io.hpp"
#include "randnla/randnla.hpp"
#include "randnla/sparse_projection/sparse_sign_projection.hpp"
#include "test_support.hpp"

using namespace randnla;

namespace {

/// The non-zero columns of row j of S, ascending, with their signs (+1 or -1).
std::vector<std::pair<std::int64_t, int>> row_of(const SparseSignOperator& s, std::int64_t j) {
  std::vector<std::pair<std::int64_t, int>> nz;
  for (std::int64_t g = 0; g < s.segments(); ++g) s.walk(j, g, [&](std::int64_t i, bool neg) { nz.push_back({i, neg ? -1 : 1}); });
  return nz;
}

/// The chi-square statistic's critical value at significance 1e-4 for `dof` degrees of freedom
/// (Wilson-Hilferty; z = 3.719 is the standard normal's 1 - 1e-4 quantile).
double chi_square_critical(int dof) {
  const double h = 2.0 / (9.0 * dof), z = 3.719;
  return dof * std::pow(1.0 - h + z * std::sqrt(h), 3.0);
}

}  // namespace

// Non-zeros per row ~ Binomial(D, p): their total within 4 sigma; the gaps between consecutive
// non-zeros of a row (across segment boundaries) ~ Geometric(p), chi-square over 20 equiprobable
// bins at significance 1e-4; the signs balanced within 4 sigma. Three seeds, three densities,
// the sparsest with segments of 2^16 columns (4.6 of them a row).
TEST(SparseSign, RowCountsGapsAndSignsFollowTheirDistributions) {
  for (const auto& [p, d] : std::vector<std::pair<double, std::int64_t>>{{0.01, 50000}, {1.0 / 3.0, 50000}, {2e-4, 300000}})
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      const std::int64_t k = 64;
      const SparseSignOperator s(k, d, p, 1.0f, seed);
      std::vector<std::int64_t> gaps;
      double nonzeros = 0, sign_sum = 0;
      for (std::int64_t j = 0; j < k; ++j) {
        const auto nz = row_of(s, j);
        nonzeros += static_cast<double>(nz.size());
        std::int64_t last = -1;
        for (const auto& [i, sign] : nz) {
          ASSERT_GT(i, last) << "columns ascend";
          ASSERT_LT(i, d);
          gaps.push_back(i - last - 1);
          last = i, sign_sum += sign;
        }
      }
      const double mean = static_cast<double>(k * d) * p, sigma = std::sqrt(mean * (1 - p));
      EXPECT_NEAR(nonzeros, mean, 4 * sigma) << "p " << p << " seed " << seed;
      EXPECT_NEAR(sign_sum, 0.0, 4 * std::sqrt(nonzeros)) << "p " << p << " seed " << seed;
      // Bin edges e_b with P(G >= e_b) ~ 1 - b/20: the bins' exact probabilities from the CDF.
      const int bins = 20;
      std::vector<std::int64_t> edge(bins + 1);
      for (int b = 0; b <= bins; ++b)
        edge[b] = b == bins ? INT64_MAX : static_cast<std::int64_t>(std::ceil(std::log(1.0 - b / double(bins)) / std::log1p(-p)));
      std::vector<double> observed(bins, 0.0);
      for (std::int64_t g : gaps)
        for (int b = 0; b < bins; ++b)
          if (g >= edge[b] && g < edge[b + 1]) observed[b] += 1;
      double chi2 = 0;
      int used = 0;
      for (int b = 0; b < bins; ++b) {
        const double lo = std::pow(1 - p, static_cast<double>(edge[b]));
        const double hi = b + 1 == bins ? 0.0 : std::pow(1 - p, static_cast<double>(edge[b + 1]));
        const double expected = (lo - hi) * static_cast<double>(gaps.size());
        if (expected <= 0) continue;
        chi2 += (observed[b] - expected) * (observed[b] - expected) / expected;
        ++used;
      }
      EXPECT_LT(chi2, chi_square_critical(used - 1)) << "p " << p << " seed " << seed << ", " << used << " bins";
    }
}

// Segments of 2^b columns, b the least in [12, 20] with 2^b p >= 8.
TEST(SparseSign, SegmentsHoldAboutEightNonZerosOrMore) {
  const std::vector<std::pair<double, int>> expected{{1.0 / 3.0, 12}, {1.0 / 512, 12}, {1.0 / 513, 13}, {2e-4, 16},
                                                     {1 / std::sqrt(1e7), 15}, {1e-4, 17}, {1e-7, 20}};
  for (const auto& [p, bits] : expected) {
    const SparseSignOperator s(4, 1000, p, 1.0f, 1);
    EXPECT_EQ(s.segment_bits, bits) << "p " << p;
    EXPECT_EQ(s.segment(), std::int64_t{1} << bits);
  }
}

// Y against the FP64 product with the same S, in both sample layouts and both scalings; the same Y
// bit for bit on every portable backend (Serial, and OpenMP on 2 threads with Kokkos 4).
TEST(SparseSign, ProjectionMatchesFp64AndEveryBackend) {
  const index_t d = 9000, b = 37, k = 50;
  const auto a = test::random_matrix(d, b, test::Elements::Normal, 5);
  test::HostMatrix<float> at(b, d);
  for (index_t i = 0; i < d; ++i)
    for (index_t c = 0; c < b; ++c) at(c, i) = a(i, c);
  std::vector<test::HostMatrix<float>> results;
  for (const auto& [name, be] : test::portable_backends())
    for (SparseScaling scaling : {SparseScaling::None, SparseScaling::Isometric})
      for (SampleLayout layout : {SampleLayout::Columns, SampleLayout::Rows}) {
        SparseProjectionOptions o;
        o.scaling = scaling, o.layout = layout, o.seed = 9;
        const auto r = sparse_sign_projection(*be, test::to_backend(*be, layout == SampleLayout::Columns ? a : at), k, o);
        const auto y = test::to_host(*be, r.Y);
        const auto ref = test::sparse_projection_fp64(sparse_sign_operator(k, d, o), a);
        EXPECT_LT(test::relative_error(y, ref), 1e-6) << name << " " << to_string(scaling) << " " << to_string(layout);
        EXPECT_NEAR(r.report.density, 1 / std::sqrt(double(d)), 1e-12);
        results.push_back(y);
      }
  for (std::size_t i = 4; i < results.size(); ++i) EXPECT_EQ(results[i].data, results[i % 4].data) << i;
}

// Pairwise distances of 1,000 Fashion-MNIST images (D = 784) under an isometric very sparse
// projection with k from the Johnson-Lindenstrauss bound for eps = 0.2 and n = 1000,
// k >= 4 ln n / (eps^2/2 - eps^3/3): at least 99% of 20,000 sampled pairs within 1 +- eps.
TEST(SparseSign, JohnsonLindenstraussOnFashionMnist) {
  const std::string path = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";
  if (!std::ifstream(path)) GTEST_SKIP() << path << " is missing";
  const io::DenseMatrix images = io::read_matrix(path);  // 60000 x 784, column-major
  const index_t n = 1000, d = images.cols;
  test::HostMatrix<float> a(n, d);  // samples as rows: SampleLayout::Rows
  for (index_t j = 0; j < d; ++j)
    for (index_t i = 0; i < n; ++i) a(i, j) = images.data[static_cast<std::size_t>(i + j * images.rows)] / 255.0f;
  const double eps = 0.2;
  const index_t k = static_cast<index_t>(std::ceil(4 * std::log(double(n)) / (eps * eps / 2 - eps * eps * eps / 3)));
  auto b = test::portable_backends().front().second;
  SparseProjectionOptions o;
  o.layout = SampleLayout::Rows;
  const auto y = test::to_host(*b, sparse_sign_projection(*b, test::to_backend(*b, a), k, o).Y);  // k x n
  int within = 0, pairs = 0;
  for (index_t u = 0; u < n && pairs < 20000; ++u)
    for (index_t v = u + 1; v < n && pairs < 20000; v += 37, ++pairs) {
      double before = 0, after = 0;
      for (index_t j = 0; j < d; ++j) before += (a(u, j) - a(v, j)) * double(a(u, j) - a(v, j));
      for (index_t j = 0; j < k; ++j) after += (y(j, u) - y(j, v)) * double(y(j, u) - y(j, v));
      const double ratio = std::sqrt(after / before);
      within += ratio >= 1 - eps && ratio <= 1 + eps;
    }
  std::printf("k = %ld: %d of %d pairs within 1 +- %.1f\n", static_cast<long>(k), within, pairs, eps);
  EXPECT_GE(within, 0.99 * pairs);
}

// Streamed batches share S: projecting two batches apart gives the columns of projecting them
// together, bit for bit; another seed gives another S.
TEST(SparseSign, StreamedBatchesShareS) {
  const index_t d = 20000, k = 33;
  const auto all = test::random_matrix(d, 70, test::Elements::Normal, 12);
  auto b = test::portable_backends().front().second;
  const Matrix<float> da = test::to_backend(*b, all);
  const auto whole = test::to_host(*b, sparse_sign_projection(*b, da, k).Y);
  const auto first = test::to_host(*b, sparse_sign_projection(*b, da.view().block(0, 0, d, 30), k).Y);
  const auto second = test::to_host(*b, sparse_sign_projection(*b, da.view().block(0, 30, d, 40), k).Y);
  for (index_t c = 0; c < 70; ++c)
    for (index_t j = 0; j < k; ++j) ASSERT_EQ(whole(j, c), c < 30 ? first(j, c) : second(j, c - 30)) << j << "," << c;
  SparseProjectionOptions o;
  o.seed = 43;
  EXPECT_NE(test::to_host(*b, sparse_sign_projection(*b, da, k, o).Y).data, whole.data);
}

TEST(SparseSign, BadArgumentsNameTheParameter) {
  auto b = test::portable_backends().front().second;
  const auto a = test::to_backend(*b, test::random_matrix(100, 4, test::Elements::Normal, 3));
  auto message = [&](MatrixView<const float> x, index_t k, const SparseProjectionOptions& o) {
    return test::invalid_argument_message([&] { sparse_sign_projection(*b, x, k, o); });
  };
  SparseProjectionOptions o;
  EXPECT_NE(message(a, 0, o).find("k = 0"), std::string::npos) << message(a, 0, o);
  o.density = SparseDensity::Given, o.density_value = 1.5;
  EXPECT_NE(message(a, 8, o).find("density = 1.5"), std::string::npos) << message(a, 8, o);
  o.density_value = 0;
  EXPECT_NE(message(a, 8, o).find("density = 0"), std::string::npos) << message(a, 8, o);
  o = {};
  Matrix<float> empty(*b, 0, 4);
  EXPECT_NE(message(empty, 8, o).find("A"), std::string::npos) << message(empty, 8, o);
  auto bad = test::random_matrix(100, 4, test::Elements::Normal, 3);
  for (index_t i = 0; i < 100; ++i) bad(i, 2) = NAN;  // every row: S touches some
  EXPECT_NE(message(test::to_backend(*b, bad), 8, o).find("A"), std::string::npos);
}

// The Kokkos-native entry: a Kokkos view in, Y a view on the same execution space.
TEST(SparseSign, KokkosViewsInAndOut) {
  const index_t d = 500, b = 3, k = 20;
  const auto h = test::random_matrix(d, b, test::Elements::Normal, 8);
  const auto r = randnla::sparse_sign_projection(Kokkos::DefaultExecutionSpace(), test::to_kokkos(h), k);
  ASSERT_EQ(r.Y.extent(0), static_cast<std::size_t>(k));
  ASSERT_EQ(r.Y.extent(1), static_cast<std::size_t>(b));
  const auto y = test::from_kokkos(r.Y);
  const auto ref = test::sparse_projection_fp64(sparse_sign_operator(k, d), h);
  for (index_t c = 0; c < b; ++c)
    for (index_t j = 0; j < k; ++j) EXPECT_NEAR(y(j, c), ref(j, c), 1e-5 * (1 + std::abs(ref(j, c))));
}
