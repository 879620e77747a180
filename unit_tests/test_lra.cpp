// Randomized LRA with refinement and recompression (Baboulin et al. 2024) on the portable
// backends: errors against FP64 references, the paper's orderings of its product variants, and
// the recompressed rank against the Eckart-Young optimum.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <vector>

#include "randnla/lra/randomized_lra.hpp"
#include "randnla/randnla.hpp"
#include "test_support.hpp"

using namespace randnla;

namespace {

/// ||A - X Y^T||_F / ||A||_F in FP64 on the host.
double lra_error(Backend& b, const test::HostMatrix<float>& a, const LraResult& r) {
  return test::factor_relative_error(a.cview(), test::to_host(b, r.X).cview(), test::to_host(b, r.Y).cview());
}

LraResult run(Backend& b, const test::HostMatrix<float>& a, index_t k, ProductPrecision products, int refinements,
              bool recompress = true) {
  LraOptions o;
  o.products = products;
  o.refinements = refinements;
  o.recompress = recompress;
  return randomized_lra(b, test::to_backend(b, a), k, o);
}

/// A 300 x 240 matrix with sigma_i = i^-2 (60 of them), and the relative Frobenius error of its
/// best rank-k approximation (Eckart-Young).
struct DecayingSpectrum {
  test::HostMatrix<float> a;
  double optimum;
};
DecayingSpectrum decaying_spectrum(index_t k) {
  std::vector<double> sigma(60);
  for (std::size_t i = 0; i < sigma.size(); ++i) sigma[i] = 1.0 / ((i + 1.0) * (i + 1.0));
  double norm = 0;
  for (double s : sigma) norm += s * s;
  return {test::matrix_with_spectrum(300, 240, sigma, 11), test::eckart_young(sigma, k) / std::sqrt(norm)};
}

}  // namespace

// The paper's matrices (rank k, p = 0): FP32 products recover A to FP32 rounding; FP16 products
// are about 1e-3 off, 16|16 (FP16 sums) worst; one refinement step brings 32|32 and 16|32 to the
// FP32 baseline's level, at rank 3k; 16|16 gains at least two digits in two.
TEST(Lra, PaperOrderingsOnGaussianRankK) {
  const index_t m = 400, n = 300, k = 12;
  const auto a = test::gaussian_rank(m, n, k, 7);
  for (const auto& [name, b] : test::portable_backends()) {
    const double fp32 = lra_error(*b, a, run(*b, a, k, ProductPrecision::fp32(), 0));
    const double fp16 = lra_error(*b, a, run(*b, a, k, ProductPrecision::fp16(), 0));
    const double once = lra_error(*b, a, run(*b, a, k, ProductPrecision::fp16_once(), 0));
    const double once_refined = lra_error(*b, a, run(*b, a, k, ProductPrecision::fp16_once(), 1, false));
    const double all = lra_error(*b, a, run(*b, a, k, ProductPrecision::fp16_all(), 0));
    const double all_refined = lra_error(*b, a, run(*b, a, k, ProductPrecision::fp16_all(), 2, false));
    const auto refined = run(*b, a, k, ProductPrecision::fp16(), 1, false);
    const double fp16_refined = lra_error(*b, a, refined);
    std::printf("%s: fp32 %.2e, fp16 %.2e, fp16 refined %.2e, fp16-once %.2e, refined %.2e, fp16-all %.2e, "
                "refined twice %.2e\n",
                name.c_str(), fp32, fp16, fp16_refined, once, once_refined, all, all_refined);
    EXPECT_GT(all, 3 * fp16) << name << ": 16|16 (FP16 sums and C) must be the worst";
    EXPECT_GT(all, 3 * once) << name;
    EXPECT_LE(all_refined, all / 100) << name << ": two refinement steps gain 16|16 two digits";
    EXPECT_LT(fp32, 1e-5) << name;
    EXPECT_GT(fp16, 10 * fp32) << name << ": FP16 products must be worse than FP32";
    EXPECT_LT(fp16, 1e-2) << name;
    EXPECT_EQ(refined.X.cols(), 3 * k) << name;
    EXPECT_LE(fp16_refined, 2 * fp32) << name << ": refinement must reach the FP32 baseline";
    EXPECT_LT(once, 3 * fp16) << name << ": 16|32 is as accurate as 32|32";
    EXPECT_GT(once, 10 * fp32) << name;
    EXPECT_LE(once_refined, 2 * fp32) << name;
  }
}

// A decaying spectrum (sigma_i = i^-2): the refined and recompressed rank-k result is within
// 1.1x of the Eckart-Young optimum, X has orthogonal columns scaled by the singular values and Y
// orthonormal ones.
TEST(Lra, RecompressedRankKIsNearOptimal) {
  const index_t k = 10;
  const DecayingSpectrum c = decaying_spectrum(k);
  const auto& a = c.a;
  const double optimum = c.optimum;
  for (const auto& [name, b] : test::portable_backends()) {
    const auto r = run(*b, a, k, ProductPrecision::fp16(), 1);
    ASSERT_EQ(r.X.cols(), k) << name;
    const double err = lra_error(*b, a, r);
    std::printf("%s: recompressed rank-%ld error %.4e, optimum %.4e\n", name.c_str(), static_cast<long>(k), err, optimum);
    EXPECT_LE(err, 1.1 * optimum) << name;
    EXPECT_LT(test::orthogonality_loss(test::to_host(*b, r.Y).cview()), 1e-5) << name;
  }
}

// Subspace refinement on the paper's matrices (p = 0): one step from a 16|32, 16|16 or 32|32 sketch
// (about 1e-3 to 1e-2 off) reaches the FP32 baseline at rank k, as two steps do; the factor of the
// last basis is orthonormal (Y = V after one step, X = Q after two). With oversampling the factors
// are truncated to rank k, Y orthonormal.
TEST(Lra, SubspaceRefinementReachesFp32AccuracyAtRankK) {
  const index_t m = 400, n = 300, k = 12;
  const auto a = test::gaussian_rank(m, n, k, 7);
  for (const auto& [name, b] : test::portable_backends()) {
    const double fp32 = lra_error(*b, a, run(*b, a, k, ProductPrecision::fp32(), 0));
    for (ProductPrecision products : {ProductPrecision::fp16(), ProductPrecision::fp16_once(), ProductPrecision::fp16_all()})
      for (int steps : {1, 2})
        for (index_t p : {0, 6}) {
          LraOptions o;
          o.products = products, o.refinements = steps, o.oversampling = p;
          o.refinement = LraRefinement::Subspace;
          const LraResult r = randomized_lra(*b, test::to_backend(*b, a), k, o);
          const double unrefined = lra_error(*b, a, run(*b, a, k, products, 0));
          const double refined = lra_error(*b, a, r);
          std::printf("%s: %s p = %ld, %d subspace steps: %.2e (unrefined %.2e, fp32 %.2e)\n", name.c_str(),
                      to_string(products), static_cast<long>(p), steps, refined, unrefined, fp32);
          const std::string what = name + " " + to_string(products) + " steps " + std::to_string(steps);
          ASSERT_EQ(r.X.cols(), k) << what;
          ASSERT_EQ(r.Y.cols(), k) << what;
          EXPECT_EQ(r.report.refinements, steps) << what;
          EXPECT_GT(unrefined, 10 * fp32) << what;
          EXPECT_LE(refined, 2 * fp32) << what << ": one accurate half step must reach the FP32 baseline";
          const bool y_orthonormal = p > 0 || steps % 2 == 1;
          EXPECT_LT(test::orthogonality_loss(test::to_host(*b, y_orthonormal ? r.Y : r.X).cview()), 1e-5) << what;
        }
  }
}

// On a decaying spectrum (sigma_i = i^-2) subspace refinement keeps the rank at k and, as a half
// power iteration, comes nearer the Eckart-Young optimum than the sketch alone: within 1.1x with
// p = 5 from an FP16 sketch. A tolerance is refused (it forms no residual to check).
TEST(Lra, SubspaceRefinementNearOptimalOnDecayingSpectrum) {
  const index_t k = 10;
  const DecayingSpectrum c = decaying_spectrum(k);
  const auto& a = c.a;
  const double optimum = c.optimum;
  for (const auto& [name, b] : test::portable_backends()) {
    LraOptions o;
    o.products = ProductPrecision::fp16_once(), o.oversampling = 5;
    const double sketch_only = lra_error(*b, a, randomized_lra(*b, test::to_backend(*b, a), k, o));
    o.refinements = 1, o.refinement = LraRefinement::Subspace;
    const LraResult r = randomized_lra(*b, test::to_backend(*b, a), k, o);
    const double refined = lra_error(*b, a, r);
    std::printf("%s: rank-%ld error: sketch alone %.4e, subspace-refined %.4e, optimum %.4e\n", name.c_str(),
                static_cast<long>(k), sketch_only, refined, optimum);
    ASSERT_EQ(r.X.cols(), k) << name;
    EXPECT_LE(refined, 1.1 * optimum) << name;
    EXPECT_LT(refined, sketch_only) << name;
    o.tolerance = 1e-3;
    const std::string message =
        test::invalid_argument_message([&] { randomized_lra(*b, test::to_backend(*b, a), k, o); });
    EXPECT_NE(message.find("tolerance = 0.001"), std::string::npos) << message;
  }
}

// Every orthonormaliser the LRA offers (the paper's Householder and FP64 CholeskyQR, CholeskyQR2, and
// TSQR) gives the refined LRA FP32-level accuracy (FP16 products alone: about 1e-3), within 1.5x of
// Householder's (rounding-level errors: CholeskyQR's was 1.11x Householder's with one OpenBLAS build
// and below it with another), and the report names it.
TEST(Lra, EveryOrthonormaliserReachesFp32Accuracy) {
  const index_t m = 400, n = 300, k = 12;
  const auto a = test::gaussian_rank(m, n, k, 9);
  const auto b = test::portable_backends().front().second;
  double householder = 0;
  for (Orthonormalizer method : {Orthonormalizer::Householder, Orthonormalizer::CholeskyQR, Orthonormalizer::CholeskyQR2,
                                 Orthonormalizer::Tsqr}) {
    LraOptions o;
    o.products = ProductPrecision::fp16();
    o.refinements = 1;
    o.recompress = false;
    o.orthonormalizer = method;
    const LraResult r = randomized_lra(*b, test::to_backend(*b, a), k, o);
    const double err = lra_error(*b, a, r);
    if (method == Orthonormalizer::Householder) householder = err;
    EXPECT_LT(err, 1e-5) << to_string(method);
    EXPECT_LE(err, 1.5 * householder) << to_string(method);
    ASSERT_FALSE(r.report.orthonormalizers.empty());
    EXPECT_EQ(r.report.orthonormalizers.front(), to_string(method));
  }
}

// The same seed gives the same factors on every portable backend (Serial and OpenMP on 2 threads
// in the Kokkos 4 configuration).
TEST(Lra, SameSeedSameFactorsOnEveryBackend) {
  const auto backends = test::portable_backends();
  if (backends.size() < 2) GTEST_SKIP() << "one execution space in this Kokkos: nothing to compare";
  const auto a = test::gaussian_rank(120, 90, 6, 3);
  std::vector<test::HostMatrix<float>> xs;
  for (const auto& [name, b] : backends) xs.push_back(test::to_host(*b, run(*b, a, 6, ProductPrecision::fp32(), 0).X));
  for (std::size_t i = 1; i < xs.size(); ++i)
    for (std::size_t e = 0; e < xs[0].data.size(); ++e) ASSERT_NEAR(xs[i].data[e], xs[0].data[e], 1e-5f);
}

TEST(Lra, BadArgumentsNameTheParameter) {
  auto b = test::portable_backends().front().second;
  const auto a = test::to_backend(*b, test::gaussian_rank(50, 40, 4, 5));
  auto message = [&](index_t k, const LraOptions& o) {
    return test::invalid_argument_message([&] { randomized_lra(*b, a, k, o); });
  };
  LraOptions o;
  EXPECT_NE(message(0, o).find("k"), std::string::npos);
  o.refinements = -1;
  EXPECT_NE(message(4, o).find("refinements = -1"), std::string::npos);
  o.refinements = 1;
  EXPECT_NE(message(30, o).find("40"), std::string::npos) << message(30, o);  // 2k + p > min(m, n)
  o.refinements = 0, o.tolerance = -1;
  EXPECT_NE(message(4, o).find("tolerance = -1"), std::string::npos);
  auto bad = test::gaussian_rank(50, 40, 4, 5);
  bad(3, 7) = NAN;
  EXPECT_THROW(randomized_lra(*b, test::to_backend(*b, bad), 4), InvalidArgument);
}

// FP16 products refuse an A outside FP16's normal range, naming the variant (32|32 checks A first,
// 16|32 and 16|16 on the conversion they make); refinement scales
// its residual, so a small A (largest entry near 2^-8, residual near 2^-18: FP16 subnormals
// unscaled) still refines to the FP32 baseline; a tolerance stops refining once it is met.
TEST(Lra, Fp16RangeScalingAndTolerance) {
  const index_t m = 300, n = 200, k = 8;
  for (const auto& [name, b] : test::portable_backends()) {
    for (ProductPrecision products : {ProductPrecision::fp16(), ProductPrecision::fp16_once(), ProductPrecision::fp16_all()})
      for (float scale : {std::ldexp(1.0f, 20), std::ldexp(1.0f, -24)}) {
        auto big = test::gaussian_rank(m, n, k, 21);
        for (float& v : big.data) v *= scale;
        try {
          run(*b, big, k, products, 0);
          ADD_FAILURE() << name << ": " << to_string(products) << " accepted an A scaled by " << scale;
        } catch (const InvalidArgument& e) {
          EXPECT_NE(std::string(e.what()).find("products = fp16"), std::string::npos) << e.what();
        }
      }
    auto small = test::gaussian_rank(m, n, k, 22);
    for (float& v : small.data) v *= std::ldexp(1.0f, -14);
    const double fp32 = lra_error(*b, small, run(*b, small, k, ProductPrecision::fp32(), 0));
    const double fp16_refined = lra_error(*b, small, run(*b, small, k, ProductPrecision::fp16(), 1, false));
    std::printf("%s: small A: fp32 %.2e, fp16 refined %.2e\n", name.c_str(), fp32, fp16_refined);
    // One step's floor is about the square of the unrefined error (6e-4 here): at this size the
    // FP32 baseline is below it on some backends, hence 3x and not the paper's 1x.
    EXPECT_LE(fp16_refined, 3 * fp32) << name;

    LraOptions o;
    o.products = ProductPrecision::fp32();
    o.refinements = 3;
    o.tolerance = 1e-4;
    const auto a = test::gaussian_rank(m, n, k, 23);
    const auto r = randomized_lra(*b, test::to_backend(*b, a), k, o);
    EXPECT_EQ(r.report.refinements, 0) << name << ": FP32 already meets 1e-4";
    ASSERT_EQ(r.report.residuals.size(), 1u);
    EXPECT_LE(r.report.residuals[0], 1e-4);
    EXPECT_EQ(r.X.cols(), k);
  }
}

// A residual buffer given by the caller, A itself included, gives the same factors as one of
// the algorithm's own (to rounding: in place, A - X Y^T is one product), with an m x n FP32 matrix
// less at the peak; one of another shape is refused.
TEST(Lra, ResidualInTheCallersBuffer) {
  const index_t m = 300, n = 200, k = 8;
  const auto h = test::gaussian_rank(m, n, k, 31);
  for (const auto& [name, b] : test::portable_backends()) {
    LraOptions o;
    o.products = ProductPrecision::fp16();
    o.refinements = 1;
    auto peak_of = [&](bool overwrite, test::HostMatrix<float>& x) {
      Matrix<float> a = test::to_backend(*b, h);
      o.residual_buffer = overwrite ? a.view() : MatrixView<float>();
      b->reset_peak_memory();
      const std::size_t before = b->memory_use().bytes;
      const LraResult r = randomized_lra(*b, a, k, o);
      x = test::to_host(*b, r.X);
      return b->memory_use().peak_bytes - before;
    };
    test::HostMatrix<float> kept, overwritten;
    const std::size_t with_e = peak_of(false, kept), without_e = peak_of(true, overwritten);
    std::printf("%s: peak %zu bytes with E, %zu overwriting A\n", name.c_str(), with_e, without_e);
    EXPECT_EQ(with_e - without_e, static_cast<std::size_t>(m * n) * sizeof(float) + sizeof(float)) << name;
    for (std::size_t i = 0; i < kept.data.size(); ++i) ASSERT_NEAR(kept.data[i], overwritten.data[i], 1e-5f) << name;
    Matrix<float> small(*b, m, n - 1);
    o.residual_buffer = small.view();
    EXPECT_THROW(randomized_lra(*b, test::to_backend(*b, h), k, o), InvalidArgument) << name;
  }
}

// The Kokkos-native entry: views in, views out, on the default execution space.
TEST(Lra, KokkosViewsInAndOut) {
  const index_t m = 80, n = 60, k = 5;
  const auto h = test::gaussian_rank(m, n, k, 9);
  const auto a = test::to_kokkos(h);
  LraOptions o;
  o.products = ProductPrecision::fp32();
  const auto r = randnla::randomized_lra(Kokkos::DefaultExecutionSpace(), a, k, o);
  ASSERT_EQ(r.X.extent(0), static_cast<std::size_t>(m));
  ASSERT_EQ(r.Y.extent(1), static_cast<std::size_t>(k));
  EXPECT_LT(test::factor_relative_error(h.cview(), test::from_kokkos(r.X).cview(), test::from_kokkos(r.Y).cview()), 1e-5);
}
