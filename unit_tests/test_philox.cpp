// Counter-based RNG: Random123 known answers, distribution checks, order independence.
#include <cmath>
#include <cstring>

#include "randnla/backends.hpp"
#include "randnla/philox.hpp"
#include "randnla/random.hpp"
#include "randnla/random_operator.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

// Random123's kat_vectors for philox4x32 with 10 rounds: counter, key -> output.
TEST(Philox, Random123KnownAnswers) {
  struct Kat {
    PhiloxCounter c;
    PhiloxKey k;
    std::uint32_t out[4];
  } kats[] = {
      {{{0, 0, 0, 0}}, {{0, 0}}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}}, {{0xffffffff, 0xffffffff}},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}}, {{0xa4093822, 0x299f31d0}},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const auto& kat : kats) {
    const PhiloxCounter r = philox4x32_10(kat.c, kat.k);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(r.v[i], kat.out[i]) << i;
  }
}

TEST(Philox, DeterministicLogAndSinCosAreAccurate) {
  for (float u = 1e-7f; u < 1.0f; u *= 1.37f)
    EXPECT_NEAR(detail::log_deterministic(u), std::log(static_cast<double>(u)), 4e-7 * std::abs(std::log(u)) + 1e-7);
  for (int i = 0; i < 4096; ++i) {
    const float v = static_cast<float>(i) / 4096.0f;
    float c, s;
    detail::sincos_2pi_deterministic(v, c, s);
    EXPECT_NEAR(c, std::cos(2 * M_PI * v), 2e-7);
    EXPECT_NEAR(s, std::sin(2 * M_PI * v), 2e-7);
  }
}

TEST(Random, GaussianMoments) {
  auto b = make_backend(BackendKind::Host);
  Matrix<float> x(*b, 1000, 400);
  b->fill_random(RandomSpec{Distribution::Gaussian, 1234, 0}, x.view());
  double sum = 0, sq = 0, four = 0;
  index_t beyond3 = 0;
  const index_t n = x.rows() * x.cols();
  for (index_t i = 0; i < n; ++i) {
    const double v = x.data()[i];
    sum += v;
    sq += v * v;
    four += v * v * v * v;
    beyond3 += std::abs(v) > 3.0;
  }
  EXPECT_NEAR(sum / n, 0.0, 5.0 / std::sqrt(n));
  EXPECT_NEAR(sq / n, 1.0, 5.0 * std::sqrt(2.0 / n));
  EXPECT_NEAR(four / n, 3.0, 0.05);
  EXPECT_NEAR(static_cast<double>(beyond3) / n, 0.0027, 0.0005);
}

TEST(Random, RademacherAndSparseSignFrequencies) {
  auto b = make_backend(BackendKind::Host);
  Matrix<float> x(*b, 500, 400);
  b->fill_random(RandomSpec{Distribution::Rademacher, 9, 0}, x.view());
  index_t plus = 0;
  for (index_t i = 0; i < 200000; ++i) {
    ASSERT_EQ(std::abs(x.data()[i]), 1.0f);
    plus += x.data()[i] > 0;
  }
  EXPECT_NEAR(plus / 200000.0, 0.5, 0.005);
  b->fill_random(RandomSpec{Distribution::Ternary, 9, 0, 0.01}, x.view());
  index_t nonzero = 0;
  for (index_t i = 0; i < 200000; ++i) {
    if (x.data()[i] != 0.0f) {
      ++nonzero;
      ASSERT_NEAR(std::abs(x.data()[i]), 10.0f, 1e-5f);
    }
  }
  EXPECT_NEAR(nonzero / 200000.0, 0.01, 0.001);
  EXPECT_THROW(b->fill_random(RandomSpec{Distribution::Ternary, 9, 0, 1.5}, x.view()), InvalidArgument);
}

TEST(Random, ElementDependsOnlyOnSeedStreamAndIndex) {
  // A block filled on its own equals the same elements of the whole matrix filled at once: the
  // value of (i, j) does not depend on which thread, block or order computed it.
  auto b = make_backend(BackendKind::Host);
  const RandomSpec spec{Distribution::Gaussian, 77, 5};
  Matrix<float> whole(*b, 300, 40);
  b->fill_random(spec, whole.view());
  for (index_t j = 39; j >= 0; --j)
    for (index_t i = 299; i >= 0; --i) ASSERT_EQ(whole.view()(i, j), random_element(spec, i + j * 300));
  Matrix<float> other(*b, 300, 40);
  b->fill_random(RandomSpec{Distribution::Gaussian, 78, 5}, other.view());
  EXPECT_NE(whole.view()(0, 0), other.view()(0, 0));
}

/// The m x n operator `spec` computed element by element (dense) or column walk by column walk
/// (SparseSign) on the host, with no backend.
test::HostMatrix<float> operator_on_host(const RandomSpec& spec, index_t m, index_t n) {
  test::HostMatrix<float> x(m, n);
  const RandomDraw draw(spec, RandomBlock{0, 0, m});
  for (index_t j = 0; j < n; ++j) {
    if (draw.ternary())
      draw.walk_column_nonzeros(j, m, [&](std::int64_t i, float v) { x(i, j) = v; });
    else
      for (index_t i = 0; i < m; ++i) x(i, j) = draw.at(i, j);
  }
  return x;
}

// Omega is the same bits on every execution space and for any thread count (Serial, OpenMP on 2
// threads, Cuda): each element is a pure function of (seed, stream, element index).
TEST(Random, OmegaIsIdenticalOnEveryExecutionSpaceAndThreadCount) {
  const index_t m = 257, n = 33;
  for (const RandomSpec spec : {RandomSpec{Distribution::Gaussian, 5, 1}, RandomSpec{Distribution::Rademacher, 6, 0},
                                RandomSpec{Distribution::Ternary, 7, 2, 0.05}}) {
    const test::HostMatrix<float> expect = operator_on_host(spec, m, n);
    for (const auto& [name, b] : test::portable_backends()) {
      RecordProperty("execution_space", name);
      Matrix<float> x(*b, m, n);
      Matrix<fp16> h(*b, m, n);
      b->fill_random(spec, x.view());
      b->fill_random(spec, h.view());
      const test::HostMatrix<float> hx = test::to_host(*b, x);
      std::vector<fp16> hh(static_cast<std::size_t>(m * n));
      b->copy(MatrixView<const fp16>(h.view()), MatrixView<fp16>(hh.data(), m, n, m, MemorySpace::Host));
      for (index_t e = 0; e < m * n; ++e) {
        ASSERT_EQ(exact::bits_of(hx.data[e]), exact::bits_of(expect.data[e])) << name << " element " << e;
        ASSERT_EQ(hh[e].bits, to_fp16(expect.data[e]).bits) << name << " element " << e;
      }
    }
  }
}

// Sub-block semantics: a block of Omega drawn alone equals the same block of the whole Omega, on
// every execution space; a block outside its operator is refused.
TEST(Random, ABlockDrawnAloneEqualsThatBlockOfTheWholeOperator) {
  const index_t m = 300, n = 40, r0 = 17, c0 = 9, r = 101, c = 23;
  for (const RandomSpec spec : {RandomSpec{Distribution::Gaussian, 8, 0}, RandomSpec{Distribution::Ternary, 9, 1, 0.1}}) {
    for (const auto& [name, b] : test::portable_backends()) {
      Matrix<float> whole(*b, m, n), block(*b, r, c);
      b->fill_random(spec, whole.view());
      b->fill_random(spec, block.view(), RandomBlock{r0, c0, m});
      const test::HostMatrix<float> hw = test::to_host(*b, whole), hb = test::to_host(*b, block);
      for (index_t j = 0; j < c; ++j)
        for (index_t i = 0; i < r; ++i) ASSERT_EQ(exact::bits_of(hb(i, j)), exact::bits_of(hw(r0 + i, c0 + j))) << name;
      EXPECT_THROW(b->fill_random(spec, block.view(), RandomBlock{m - 50, 0, m}), InvalidArgument);
      EXPECT_THROW(b->fill_random(spec, block.view(), RandomBlock{-1, 0, m}), InvalidArgument);
    }
  }
}

// The gaps between a sparse column's non-zeros are geometric, P(G = g) = (1 - p)^g p: a
// chi-square test over the gap counts of several seeds at significance 0.001 (and the test can
// fail: the same gaps against a density 10% off are rejected).
TEST(Random, SparseGapsAreGeometric) {
  const double p = 0.05;
  const int bins = 40;  // gaps 0..38, and 39 or more
  auto chi_square = [&](const std::vector<double>& counts, double q, double total) {
    double chi = 0;
    for (int g = 0; g < bins; ++g) {
      const double prob = g < bins - 1 ? std::pow(1 - q, g) * q : std::pow(1 - q, bins - 1);
      const double e = total * prob;
      chi += (counts[g] - e) * (counts[g] - e) / e;
    }
    return chi;
  };
  const double critical = 72.05;  // chi-square, 39 degrees of freedom, upper 0.001 quantile
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const RandomDraw draw(RandomSpec{Distribution::Ternary, seed, 0, p}, RandomBlock{0, 0, 2000000});
    std::vector<double> counts(bins, 0.0);
    double total = 0, nonzeros = 0, plus = 0;
    for (std::int64_t col = 0; col < 4; ++col) {
      std::int64_t last = -1;
      draw.walk_column_nonzeros(col, 2000000, [&](std::int64_t row, float v) {
        counts[std::min<std::int64_t>(row - last - 1, bins - 1)] += 1, total += 1;
        nonzeros += 1, plus += v > 0;
        ASSERT_GT(row, last);
        last = row;
      });
    }
    EXPECT_LT(chi_square(counts, p, total), critical) << seed;
    EXPECT_GT(chi_square(counts, 0.9 * p, total), critical) << seed;
    EXPECT_NEAR(nonzeros / (4 * 2000000.0), p, 0.002) << seed;
    EXPECT_NEAR(plus / nonzeros, 0.5, 0.01) << seed;
  }
}

// The operator's three parts: a block generated alone equals that block of the stored operator,
// draws return the next state without modifying theirs, and operators from successive states differ.
TEST(Random, OperatorFromDistributionAndStateReturnsTheNextState) {
  auto b = make_backend(BackendKind::Host);
  const RngState state{11, 4};
  const RandomOperator omega(RandomDistribution{120, 30, Distribution::Ternary, 0.2}, state);
  const Matrix<float> whole = omega.materialize<float>(*b);
  Matrix<float> block(*b, 50, 7);
  omega.fill(*b, block.view(), 60, 20);
  for (index_t j = 0; j < 7; ++j)
    for (index_t i = 0; i < 50; ++i) ASSERT_EQ(block.view()(i, j), whole.view()(60 + i, 20 + j));
  EXPECT_THROW(omega.fill(*b, block.view(), 0, 25), InvalidArgument);
  Matrix<float> x(*b, 120, 30), y(*b, 120, 30);
  const RngState after = fill_random(*b, Distribution::Ternary, state, x.view(), 0.2);
  EXPECT_EQ(state.counter, 4u);
  EXPECT_EQ(after.counter, omega.next_state().counter);
  EXPECT_EQ(0, std::memcmp(x.data(), whole.data(), sizeof(float) * 120 * 30));
  fill_random(*b, Distribution::Ternary, after, y.view(), 0.2);
  EXPECT_NE(0, std::memcmp(x.data(), y.data(), sizeof(float) * 120 * 30));
  EXPECT_THROW(RandomOperator(RandomDistribution{10, 10, Distribution::Ternary, 0.0}, state), InvalidArgument);
}

}  // namespace
}  // namespace randnla

