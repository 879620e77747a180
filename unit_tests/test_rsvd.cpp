// RSVD accuracy on the test matrices of Ootomo & Yokota (mixed-precision RSVD, Sec. 5.1), against
// the Eckart–Young optimum, FP16 sketch vs FP32 sketch, fixed-accuracy mode, and bad input.
//
// The matrices, as this suite reads the paper's description (N = 1024 here to fit CI; the GPU
// suite uses N = 4096):
//   A_linear: rank p = 256, sigma_i = 1 - (1 - s_p) (i - 1) / (p - 1), s_p = 1e-3;
//   A_exp:    rank p = 256, sigma_i = s_p^((i - 1) / (p - 1)),          s_p = 1e-6;
//   A_poly:   Connolly, Higham & Pranesh "type 2": sigma_i = 1 (i <= r), (i - r + 1)^-alpha after,
//             floored at 1/phi; r = 20, alpha = 3, phi = 1e6;
//   A_Cauchy: a_ij = 1 / (|x_i - y_j| + gamma), gamma = 1e-3, x, y uniform in (-1e-3, 1e-3).
#include <cmath>

#include "randnla/backends.hpp"
#include "randnla/rsvd/rsvd.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

constexpr index_t N = 1024;

struct TestMatrix {
  std::string name;
  test::HostMatrix<float> a;
  std::vector<double> sigma;  // exact singular values (descending)
};

TestMatrix linear_matrix() {
  std::vector<double> s(256);
  for (int i = 0; i < 256; ++i) s[i] = 1.0 - (1.0 - 1e-3) * i / 255.0;
  return {"A_linear", test::matrix_with_spectrum(N, N, s, 1), s};
}
TestMatrix exp_matrix() {
  std::vector<double> s(256);
  for (int i = 0; i < 256; ++i) s[i] = std::pow(1e-6, i / 255.0);
  return {"A_exp", test::matrix_with_spectrum(N, N, s, 2), s};
}
TestMatrix poly_matrix() {
  std::vector<double> s(N);
  for (index_t i = 0; i < N; ++i) s[i] = i < 20 ? 1.0 : std::max(std::pow(i - 20 + 2.0, -3.0), 1e-6);
  return {"A_poly", test::matrix_with_spectrum(N, N, s, 3), s};
}
TestMatrix cauchy_matrix() {
  TestMatrix t{"A_Cauchy", test::HostMatrix<float>(N, N), {}};
  auto x = test::random_matrix(N, 1, test::Elements::Uniform01, 4), y = test::random_matrix(N, 1, test::Elements::Uniform01, 5);
  for (index_t j = 0; j < N; ++j)
    for (index_t i = 0; i < N; ++i)
      t.a(i, j) = static_cast<float>(1.0 / (std::abs((2.0 * x.data[i] - 1) * 1e-3 - (2.0 * y.data[j] - 1) * 1e-3) + 1e-3));
  t.sigma = test::singular_values(t.a.cview());
  return t;
}

/// ||A - U S V^T||_F / ||A||_F of the RSVD of t on b (A copied into b's memory, the factors back).
double rsvd_error(Backend& b, const TestMatrix& t, index_t k, RsvdOptions o, RsvdReport* rep = nullptr) {
  const Matrix<float> a = test::to_backend(b, t.a);
  auto r = rsvd(b, a, k, o);
  if (rep) *rep = r.report;
  return test::lowrank_relative_error(t.a.cview(), test::to_host(b, r.U).cview(), test::to_host(b, r.S).cview(),
                                      test::to_host(b, r.V).cview());
}

double frob(const std::vector<double>& s) { return test::eckart_young(s, 0); }

// The RSVD tests run on the portable backend of every execution space of this Kokkos (Serial,
// OpenMP; Cuda in the CUDA-enabled Kokkos configuration, on the GPU).
TEST(Rsvd, Fp16SketchMatchesFp32SketchOnThePapersMatrices) {
  const index_t k = 64;
  for (const auto& [name, b] : test::portable_backends())
  for (const TestMatrix& t : {linear_matrix(), exp_matrix(), poly_matrix(), cauchy_matrix()}) {
    SCOPED_TRACE(name);
    const double optimum = test::eckart_young(t.sigma, k) / frob(t.sigma);
    for (std::uint64_t seed : {1, 2}) {
      RsvdOptions o;
      o.seed = seed;
      o.power_iterations = 1;
      o.products = ProductPrecision::fp32();
      const double e32 = rsvd_error(*b, t, k, o);
      EXPECT_LE(e32, 1.5 * optimum + 1e-6) << t.name;
      for (auto s : {ProductPrecision::split_in(TensorCore::FP16), ProductPrecision::split_in(TensorCore::TF32), ProductPrecision::automatic()}) {
        o.products = s;
        RsvdReport rep;
        const double e = rsvd_error(*b, t, k, o, &rep);
        EXPECT_LE(e, 1.1 * e32 + 1e-6) << t.name << " " << to_string(s) << " seed " << seed;
        if (s == ProductPrecision::split_in(TensorCore::FP16) && t.name == "A_Cauchy")
          EXPECT_NE(rep.sketch_kernel.find("fp16"), std::string::npos) << rep.sketch_kernel;  // scaled into range
        if (s == ProductPrecision::automatic())  // no Tensor Cores here: the emulated split products would be slower
          EXPECT_EQ(rep.sketch_kernel.find("sgemm fp32"), 0u) << rep.sketch_kernel;
      }
    }
  }
}

// The very sparse sign sketch (p = 1/sqrt(n), S never stored) as Omega: within 1.2x of the
// Gaussian sketch's error on the paper's matrices with q = 2, and the report says it ran.
TEST(Rsvd, SparseSignSketchMatchesTheGaussianOne) {
  const index_t k = 64;
  auto b = test::portable_backends().front().second;
  for (const TestMatrix& t : {exp_matrix(), poly_matrix()}) {
    RsvdOptions o;
    o.products = ProductPrecision::fp32();
    const double gaussian = rsvd_error(*b, t, k, o);
    o.sketch_operator = SketchOperator::SparseSign;
    RsvdReport rep;
    const double sparse = rsvd_error(*b, t, k, o, &rep);
    std::printf("%s: Gaussian sketch %.4e, sparse sign %.4e (%s)\n", t.name.c_str(), gaussian, sparse,
                rep.sketch_kernel.c_str());
    EXPECT_LE(sparse, 1.2 * gaussian) << t.name;
    EXPECT_NE(rep.sketch_kernel.find("sparse sign"), std::string::npos);
  }
}

TEST(Rsvd, TopSingularValuesAgreeWithLapack) {
  const TestMatrix t = poly_matrix();
  RsvdOptions o;
  o.power_iterations = 2;
  for (const auto& [name, b] : test::portable_backends()) {
    SCOPED_TRACE(name);
    const Matrix<float> a = test::to_backend(*b, t.a);
    auto r = rsvd(*b, a, 20, o);
    const auto u = test::to_host(*b, r.U), s = test::to_host(*b, r.S), v = test::to_host(*b, r.V);
    for (index_t i = 0; i < 20; ++i) EXPECT_NEAR(s.data[i], t.sigma[i], 2e-5) << i;
    EXPECT_LT(test::orthogonality_loss(u.cview()), 1e-5);
    EXPECT_LT(test::orthogonality_loss(v.cview()), 1e-5);
    const double exact = test::lowrank_relative_error(t.a.cview(), u.cview(), s.cview(), v.cview());
    EXPECT_NEAR(r.report.relative_error_estimate, exact, 0.6 * exact);  // a 16-probe estimate
  }
}

// Auto gives the bases between the products of a power iteration one CholeskyQR pass and the last
// basis as many as it needs: as accurate as CholeskyQR2 everywhere.
TEST(Rsvd, PowerIterationBasesTakeOneCholeskyPassAsAccurateAsCholeskyQR2) {
  for (const auto& [name, b] : test::portable_backends())
  for (const TestMatrix& t : {exp_matrix(), poly_matrix()}) {
    SCOPED_TRACE(name);
    RsvdOptions o;
    o.power_iterations = 2;
    RsvdReport rep;
    const double e_auto = rsvd_error(*b, t, 40, o, &rep);
    ASSERT_EQ(rep.orthonormalizers.size(), 6u);  // Y, Z, Y, Z, Y, then A V in the small SVD
    for (int i = 0; i < 4; ++i) EXPECT_EQ(rep.orthonormalizers[i], "cholqr") << t.name << " " << i;
    o.orthonormalizer = Orthonormalizer::CholeskyQR2;
    const double e_cholqr2 = rsvd_error(*b, t, 40, o);
    EXPECT_LE(e_auto, 1.01 * e_cholqr2) << t.name;
    EXPECT_GE(e_auto, 0.99 * e_cholqr2) << t.name;
  }
}

TEST(Rsvd, FixedAccuracyStopsAtTheRankTheToleranceNeeds) {
  const TestMatrix t = exp_matrix();
  for (const auto& [name, b] : test::portable_backends())
  for (double tol : {1e-1, 1e-2}) {
    SCOPED_TRACE(name);
    FixedAccuracyOptions o;
    o.tolerance = tol;
    o.block_size = 16;
    const Matrix<float> a = test::to_backend(*b, t.a);
    auto r = rsvd_fixed_accuracy(*b, a, o);
    const index_t rank = r.S.rows();
    const double err = test::lowrank_relative_error(t.a.cview(), test::to_host(*b, r.U).cview(),
                                                    test::to_host(*b, r.S).cview(), test::to_host(*b, r.V).cview());
    EXPECT_LE(err, tol) << tol;
    // The smallest rank meeting tol, rounded up to the block: no more than one block beyond it.
    index_t needed = 0;
    while (test::eckart_young(t.sigma, needed) / frob(t.sigma) > tol) ++needed;
    EXPECT_GE(rank, needed);
    EXPECT_LE(rank, needed + 2 * o.block_size) << tol;
  }
}

// One vocabulary: every preset's name parses back to it; Auto is decided once and the report says why.
TEST(Rsvd, ProductPrecisionPresetsAndAutoAreOneVocabulary) {
  for (const auto& preset : names_of(ProductPrecision{}))
    EXPECT_TRUE(parse_enum<ProductPrecision>(preset.name, "products") == preset.value) << preset.name;
  EXPECT_TRUE(parse_enum<ProductPrecision>("split-fp16", "products") == ProductPrecision::split_in(TensorCore::FP16));
  EXPECT_THROW(parse_enum<ProductPrecision>("shgemm-fp16", "products"), InvalidArgument);
  auto b = make_backend(BackendKind::Host);
  const auto a = test::random_matrix(60, 40, test::Elements::Normal, 3);
  const RsvdResult r = rsvd(*b, a.cview(), 5);
  EXPECT_NE(r.report.sketch_kernel.find("sgemm fp32"), std::string::npos) << r.report.sketch_kernel;
  EXPECT_NE(r.report.sketch_kernel.find("no Tensor Cores"), std::string::npos) << r.report.sketch_kernel;
  // A rounded once is the LRA's: refused by name elsewhere, not run as something else.
  for (const ProductPrecision& once : {ProductPrecision::fp16_once(), ProductPrecision::fp16_all()}) {
    RsvdOptions o;
    o.products = once;
    try {
      rsvd(*b, a.cview(), 5, o);
      ADD_FAILURE() << to_string(once) << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("products"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(to_string(once)), std::string::npos) << e.what();
    }
  }
}

TEST(Rsvd, BadInputThrows) {
  auto b = make_backend(BackendKind::Host);
  auto a = test::random_matrix(50, 40, test::Elements::Normal, 1);
  EXPECT_THROW(rsvd(*b, a.cview(), 0), InvalidArgument);
  EXPECT_THROW(rsvd(*b, a.cview(), 35), InvalidArgument);  // 35 + 10 > 40
  RsvdOptions o;
  o.oversampling = -1;
  EXPECT_THROW(rsvd(*b, a.cview(), 5, o), InvalidArgument);
  a(3, 4) = std::nanf("");
  try {
    rsvd(*b, a.cview(), 5);
    ADD_FAILURE() << "NaN accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("1 non-finite"), std::string::npos) << e.what();
  }
  // The non-finite check reads the sketch: an Inf must make its row of Y non-finite, in every precision.
  a(3, 4) = -INFINITY;
  for (auto sk : {ProductPrecision::fp32(), ProductPrecision::split_in(TensorCore::FP16), ProductPrecision::automatic()}) {
    RsvdOptions so;
    so.products = sk;
    try {
      rsvd(*b, a.cview(), 5, so);
      ADD_FAILURE() << "Inf accepted with sketch " << to_string(sk);
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("1 non-finite"), std::string::npos) << e.what();
    }
  }
  FixedAccuracyOptions fa;
  EXPECT_THROW(rsvd_fixed_accuracy(*b, a.cview(), fa), InvalidArgument);
  a(3, 4) = 0;
  auto huge = a;  // finite, but A * Omega overflows FP32
  for (float& x : huge.data) x = 3e38f;
  try {
    rsvd(*b, huge.cview(), 5);
    ADD_FAILURE() << "an overflowing sketch accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("overflows FP32"), std::string::npos) << e.what();
  }
  FixedAccuracyOptions f;
  f.tolerance = 1.5;
  EXPECT_THROW(rsvd_fixed_accuracy(*b, a.cview(), f), InvalidArgument);
  f.tolerance = 0;
  EXPECT_THROW(rsvd_fixed_accuracy(*b, a.cview(), f), InvalidArgument);
}

}  // namespace
}  // namespace randnla
