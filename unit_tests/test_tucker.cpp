// Random-projection HOSVD on the portable backends: the relative error on Ootomo & Yokota's test
// tensors (3-way and 4-way) against an FP64 reconstruction, the SHGEMM sketches within 1.1x of
// FP32's error, oversampling with truncation, power iterations, the single pass in slabs, seeds,
// the Kokkos entry and the argument errors.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "randnla/randnla.hpp"
#include "test_support.hpp"
#include "randnla/tucker/tucker.hpp"

using namespace randnla;

namespace {

/// The tensor in FP32 and as the backend's packed tensor (kept alive by `storage`).
struct Input {
  test::HostMatrix<float> host;  // I_0 x (I_1 ... I_{N-1})
  Matrix<float> storage;
  PackedTensor tensor;
};

Input to_backend(Backend& b, const test::HostTensor& t) {
  Input in;
  in.host = test::HostMatrix<float>(t.extents[0], t.size() / t.extents[0]);
  for (std::size_t i = 0; i < t.data.size(); ++i) in.host.data[i] = static_cast<float>(t.data[i]);
  in.storage = test::to_backend(b, in.host);
  in.tensor = PackedTensor{in.storage.data(), t.extents, b.memory_space()};
  return in;
}

/// ||A - g x_1 Q_1 ... x_N Q_N||_F / ||A||_F with the reconstruction in FP64 on the host.
double reference_error(Backend& b, const Input& a, const TuckerResult& t) {
  const test::HostMatrix<float> core = test::to_host(b, t.core);
  test::HostTensor x{t.core_extents, std::vector<double>(core.data.begin(), core.data.end())};
  for (int n = 0; n < static_cast<int>(t.factors.size()); ++n) {
    const test::HostMatrix<float> q = test::to_host(b, t.factors[n]);
    x = test::mode_product(x, n, std::vector<double>(q.data.begin(), q.data.end()), q.rows);
  }
  double num = 0, den = 0;
  for (std::size_t i = 0; i < x.data.size(); ++i) {
    const double d = a.host.data[i] - x.data[i];
    num += d * d, den += static_cast<double>(a.host.data[i]) * a.host.data[i];
  }
  return std::sqrt(num / den);
}

TuckerOptions with(TuckerVariant v, ProductPrecision s = ProductPrecision::fp32()) {
  TuckerOptions o;
  o.variant = v;
  o.products = s;
  return o;
}

const TuckerVariant kVariants[] = {TuckerVariant::TwoPass, TuckerVariant::SequentiallyTruncated,
                                   TuckerVariant::SinglePass};

struct Case {
  std::vector<index_t> dims, ranks;
};
const Case kCases[] = {{{40, 36, 32}, {10, 8, 6}}, {{14, 12, 10, 9}, {5, 4, 4, 3}}};

}  // namespace

// The paper's tensors have multilinear rank J_i - 2 <= J_i: every variant recovers them to FP32
// rounding, with orthonormal factors and a core of the requested size.
TEST(Tucker, RecoversThePapersTensorsThreeAndFourWay) {
  for (const auto& [name, b] : test::portable_backends())
    for (const Case& c : kCases) {
      const Input a = to_backend(*b, test::paper_tensor(c.dims, c.ranks, 2, 7));
      for (TuckerVariant v : kVariants) {
        SCOPED_TRACE(name + " " + to_string(v) + " N = " + std::to_string(c.dims.size()));
        const TuckerResult t = rp_hosvd(*b, a.tensor, c.ranks, with(v));
        EXPECT_EQ(t.core_extents, c.ranks);
        ASSERT_EQ(t.factors.size(), c.dims.size());
        for (int n = 0; n < static_cast<int>(c.dims.size()); ++n) {
          EXPECT_EQ(t.factors[n].rows(), c.dims[n]);
          EXPECT_LT(test::orthogonality_loss(test::to_host(*b, t.factors[n]).cview()), 1e-5);
        }
        const double err = reference_error(*b, a, t);
        EXPECT_LT(err, v == TuckerVariant::SinglePass ? 1e-4 : 1e-5);
        EXPECT_NEAR(tucker_relative_error(*b, a.tensor, t), err, 1e-6 + 0.05 * err);
      }
    }
}

// Low multilinear rank plus noise: the error is near the noise's share of A, within 1.5x with one
// power iteration (the single pass, which has none, within 4x: its sketches take in noise); the SHGEMM sketches (emulated here) stay within 1.1x of FP32's error.
TEST(Tucker, NoisyTensorErrorNearTheNoiseAndShgemmWithinTenPercentOfFp32) {
  const std::shared_ptr<Backend> b = test::portable_backends().front().second;
  for (const Case& c : kCases) {
    test::HostTensor t = test::paper_tensor(c.dims, c.ranks, 0, 11);
    double signal = 0, noise = 0;
    std::mt19937_64 rng(5);
    std::normal_distribution<double> gauss(0.0, 1.0);
    for (double x : t.data) signal += x * x;
    const double scale = 1e-3 * std::sqrt(signal / static_cast<double>(t.data.size()));
    for (double& x : t.data) {
      const double e = scale * gauss(rng);
      x += e, noise += e * e;
    }
    const double floor = std::sqrt(noise / signal);
    const Input a = to_backend(*b, t);
    for (TuckerVariant v : kVariants) {
      SCOPED_TRACE(std::string(to_string(v)) + " N = " + std::to_string(c.dims.size()));
      TuckerOptions o = with(v);
      o.oversampling = 4;
      o.power_iterations = v == TuckerVariant::SinglePass ? 0 : 1;
      const double fp32 = reference_error(*b, a, rp_hosvd(*b, a.tensor, c.ranks, o));
      EXPECT_LT(fp32, (v == TuckerVariant::SinglePass ? 4.0 : 1.5) * floor);
      for (ProductPrecision s : {ProductPrecision::split_in(TensorCore::FP16), ProductPrecision::split_in(TensorCore::TF32)}) {
        o.products = s;
        EXPECT_LT(reference_error(*b, a, rp_hosvd(*b, a.tensor, c.ranks, o)), 1.1 * fp32) << to_string(s);
      }
    }
  }
}

// Oversampling sketches J_i + p columns and truncates the core back to J_i: on an exactly rank-J
// tensor that is exact; power iterations do not make the noisy case worse.
TEST(Tucker, OversamplingTruncatesAndPowerIterationsHelp) {
  const std::shared_ptr<Backend> b = test::portable_backends().front().second;
  const Case& c = kCases[0];
  const Input exact = to_backend(*b, test::paper_tensor(c.dims, c.ranks, 0, 3));
  for (TuckerVariant v : kVariants) {
    TuckerOptions o = with(v);
    o.oversampling = 6;
    const TuckerResult t = rp_hosvd(*b, exact.tensor, c.ranks, o);
    EXPECT_EQ(t.core_extents, c.ranks) << to_string(v);
    EXPECT_EQ(t.report.sketch_columns, (std::vector<index_t>{16, 14, 12})) << to_string(v);
    EXPECT_LT(reference_error(*b, exact, t), v == TuckerVariant::SinglePass ? 1e-4 : 1e-5) << to_string(v);
  }
  // Slowly decaying mode spectra: rank-16 structure sketched at rank 6.
  const Input a = to_backend(*b, test::paper_tensor(c.dims, {16, 16, 16}, 0, 4));
  const std::vector<index_t> ranks{6, 6, 6};
  TuckerOptions o = with(TuckerVariant::TwoPass);
  const double q0 = reference_error(*b, a, rp_hosvd(*b, a.tensor, ranks, o));
  o.power_iterations = 2;
  const TuckerResult t = rp_hosvd(*b, a.tensor, ranks, o);
  EXPECT_LT(reference_error(*b, a, t), q0);
}

// The single pass in many slabs equals it in one to rounding; a seed gives the same result on
// every execution space, another seed another one.
TEST(Tucker, SlabsAndSeedsAreReproducible) {
  const auto backends = test::portable_backends();
  const Case& c = kCases[1];
  const test::HostTensor t = test::paper_tensor(c.dims, c.ranks, 1, 9);
  TuckerOptions one = with(TuckerVariant::SinglePass), many = one;
  one.slab_bytes = 0;
  many.slab_bytes = 14 * 12 * 10 * sizeof(float) * 2;  // two slices per slab
  Backend& b0 = *backends.front().second;
  const Input a0 = to_backend(b0, t);
  const test::HostMatrix<float> ref = test::to_host(b0, rp_hosvd(b0, a0.tensor, c.ranks, one).core);
  const test::HostMatrix<float> slabs = test::to_host(b0, rp_hosvd(b0, a0.tensor, c.ranks, many).core);
  for (std::size_t i = 0; i < ref.data.size(); ++i) EXPECT_NEAR(slabs.data[i], ref.data[i], 1e-4 * std::fabs(ref.data[i]) + 1e-3);
  for (const auto& [name, b] : backends) {
    const Input a = to_backend(*b, t);
    const test::HostMatrix<float> core = test::to_host(*b, rp_hosvd(*b, a.tensor, c.ranks, one).core);
    for (std::size_t i = 0; i < ref.data.size(); ++i)
      ASSERT_NEAR(core.data[i], ref.data[i], 1e-4 * std::fabs(ref.data[i]) + 1e-3) << name << " element " << i;
  }
  TuckerOptions other = with(TuckerVariant::TwoPass);
  const test::HostMatrix<float> q42 = test::to_host(b0, rp_hosvd(b0, a0.tensor, c.ranks, other).factors[0]);
  other.seed = 43;
  const test::HostMatrix<float> q43 = test::to_host(b0, rp_hosvd(b0, a0.tensor, c.ranks, other).factors[0]);
  EXPECT_NE(q42.data, q43.data);
}

TEST(Tucker, KokkosEntryReturnsViews) {
  const Case& c = kCases[0];
  const test::HostTensor t = test::paper_tensor(c.dims, c.ranks, 2, 21);
  Kokkos::View<float***, Kokkos::LayoutLeft> a("A", c.dims[0], c.dims[1], c.dims[2]);
  auto mirror = Kokkos::create_mirror_view(a);
  for (index_t k = 0; k < c.dims[2]; ++k)
    for (index_t j = 0; j < c.dims[1]; ++j)
      for (index_t i = 0; i < c.dims[0]; ++i)
        mirror(i, j, k) = static_cast<float>(t.data[i + c.dims[0] * (j + c.dims[1] * k)]);
  Kokkos::deep_copy(a, mirror);
  const auto r = randnla::rp_hosvd(Kokkos::DefaultExecutionSpace(), a, c.ranks, with(TuckerVariant::TwoPass));
  ASSERT_EQ(r.Q.size(), 3u);
  for (int n = 0; n < 3; ++n) {
    EXPECT_EQ(static_cast<index_t>(r.core.extent(n)), c.ranks[n]);
    EXPECT_EQ(static_cast<index_t>(r.Q[n].extent(0)), c.dims[n]);
    EXPECT_EQ(static_cast<index_t>(r.Q[n].extent(1)), c.ranks[n]);
  }
  // Reconstruct A(i, j, k) at a few points from the views, in FP64.
  auto core = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.core);
  std::vector<test::HostMatrix<float>> q;
  for (int n = 0; n < 3; ++n) q.push_back(test::from_kokkos(r.Q[n]));
  for (const auto& [i, j, k] : {std::array<index_t, 3>{0, 0, 0}, {39, 35, 31}, {7, 20, 13}}) {
    double s = 0;
    for (index_t c2 = 0; c2 < c.ranks[2]; ++c2)
      for (index_t c1 = 0; c1 < c.ranks[1]; ++c1)
        for (index_t c0 = 0; c0 < c.ranks[0]; ++c0)
          s += static_cast<double>(core(c0, c1, c2)) * q[0](i, c0) * q[1](j, c1) * q[2](k, c2);
    EXPECT_NEAR(s, mirror(i, j, k), 1e-4);
  }
}

TEST(Tucker, ArgumentErrorsNameTheParameter) {
  const std::shared_ptr<Backend> b = test::portable_backends().front().second;
  const Case& c = kCases[0];
  test::HostTensor t = test::paper_tensor(c.dims, c.ranks, 2, 1);
  const auto message = [&](const PackedTensor& x, const std::vector<index_t>& ranks, const TuckerOptions& o) {
    return test::invalid_argument_message([&] { rp_hosvd(*b, x, ranks, o); });
  };
  const Input a = to_backend(*b, t);
  const TuckerOptions o = with(TuckerVariant::TwoPass);
  EXPECT_NE(message(a.tensor, {10, 8}, o).find("ranks.size"), std::string::npos);
  EXPECT_NE(message(a.tensor, {10, 8, 6, 2}, o).find("ranks.size"), std::string::npos);
  EXPECT_NE(message(a.tensor, {10, 37, 6}, o).find("ranks[1]"), std::string::npos);
  EXPECT_NE(message(a.tensor, {10, 8, 0}, o).find("ranks[2]"), std::string::npos);
  TuckerOptions bad = o;
  bad.oversampling = -1;
  EXPECT_NE(message(a.tensor, c.ranks, bad).find("oversampling"), std::string::npos);
  bad = with(TuckerVariant::SinglePass);
  bad.power_iterations = 1;
  EXPECT_NE(message(a.tensor, c.ranks, bad).find("power_iterations"), std::string::npos);
  t.data[5 + 40 * 3] = std::numeric_limits<double>::quiet_NaN();
  const Input nan = to_backend(*b, t);
  for (TuckerVariant v : kVariants) EXPECT_NE(message(nan.tensor, c.ranks, with(v)).find("non-finite"), std::string::npos);
  std::vector<float> padded(41 * 36 * 32);
  const TensorView<const float, 3> strided(padded.data(), {40, 36, 32}, {1, 41, 41 * 36}, MemorySpace::Host);
  EXPECT_THROW(rp_hosvd(*b, strided, c.ranks), InvalidArgument);
}
