// GPU tests of RP-HOSVD (Tucker): against the host and FP32 sketches, and the rerun where a queued
// orthonormalisation broke down.

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "randnla/backends.hpp"
#include "randnla/orthonormalize/orthonormalize.hpp"
#include "randnla/tucker/tucker.hpp"
#include "gpu_test_support.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

using namespace gpu_test;
// RP-HOSVD on the device: with FP32 sketches every variant's approximation equals the host's to
// rounding (the same Omega from the same seed); the SHGEMM sketches on Tensor Cores stay within
// 1.1x of FP32's error on the device, 3-way and 4-way.
TEST(Gpu, TuckerMatchesHostAndShgemmKeepsFp32Error) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  struct Case {
    std::vector<index_t> dims, ranks;
  };
  for (const Case& c : {Case{{96, 80, 64}, {16, 12, 10}}, Case{{24, 20, 18, 16}, {6, 5, 5, 4}}}) {
    test::HostTensor t = test::paper_tensor(c.dims, c.ranks, 0, 17);
    std::mt19937_64 rng(3);
    std::normal_distribution<double> gauss(0.0, 1e-3);
    for (double& x : t.data) x += gauss(rng);
    test::HostMatrix<float> a(c.dims[0], t.size() / c.dims[0]);
    for (std::size_t i = 0; i < t.data.size(); ++i) a.data[i] = static_cast<float>(t.data[i]);
    const Matrix<float> da = test::to_backend(*dev, a);
    const PackedTensor on_dev{da.data(), c.dims, MemorySpace::Device}, on_host{a.data.data(), c.dims, MemorySpace::Host};
    for (TuckerVariant v : {TuckerVariant::TwoPass, TuckerVariant::SequentiallyTruncated, TuckerVariant::SinglePass}) {
      SCOPED_TRACE(std::string(to_string(v)) + " N = " + std::to_string(c.dims.size()));
      TuckerOptions o;
      o.variant = v;
      o.oversampling = 4;
      o.products = ProductPrecision::fp32();
      const TuckerResult hr = rp_hosvd(*host, on_host, c.ranks, o), dr = rp_hosvd(*dev, on_dev, c.ranks, o);
      const test::HostMatrix<float> xh = test::to_host(*host, tucker_reconstruct(*host, hr));
      const test::HostMatrix<float> xd = test::to_host(*dev, tucker_reconstruct(*dev, dr));
      double diff = 0, norm = 0;
      for (std::size_t i = 0; i < a.data.size(); ++i)
        diff += std::pow(double(xh.data[i]) - xd.data[i], 2), norm += std::pow(double(a.data[i]), 2);
      EXPECT_LT(std::sqrt(diff / norm), 1e-4);
      // The errors agree to the rounding of the FP32 factors and reconstruction: 0.1%, or a few
      // units of 2^-24 (the error is relative to ||A||) where the error itself is that small.
      const double fp32 = tucker_relative_error(*dev, on_dev, dr);
      EXPECT_NEAR(fp32, tucker_relative_error(*host, on_host, hr), 1e-3 * fp32 + 0x1p-22);
      for (ProductPrecision s : {ProductPrecision::split_in(TensorCore::FP16), ProductPrecision::split_in(TensorCore::TF32), ProductPrecision::automatic()}) {
        o.products = s;
        const TuckerResult r = rp_hosvd(*dev, on_dev, c.ranks, o);
        EXPECT_LT(tucker_relative_error(*dev, on_dev, r), 1.1 * fp32) << to_string(s);
        // Named at the end of the run, from the first sketch's plan on the device.
        EXPECT_EQ(r.report.sketch_kernel, s == ProductPrecision::split_in(TensorCore::TF32) ? "shgemm tf32-TC" : "shgemm fp16-TC");
      }
    }
  }
}

// RP-HOSVD on the device queues its orthonormalisations and checks them at the end; where one did
// not hold it runs again, waiting at each step: a zero tensor (every sketch zero: CholeskyQR breaks
// down) gets the fallback's orthonormal factors, a non-finite one the input error.
TEST(Gpu, TuckerRunsAgainWhereAQueuedOrthonormalisationBrokeDown) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  const std::vector<index_t> dims{40, 36, 32}, ranks{6, 5, 4};
  test::HostMatrix<float> a(dims[0], dims[1] * dims[2]);
  Matrix<float> zero = test::to_backend(*dev, a);
  const PackedTensor t{zero.data(), dims, MemorySpace::Device};
  TuckerOptions o;
  o.variant = TuckerVariant::SequentiallyTruncated;
  const TuckerResult r = rp_hosvd(*dev, t, ranks, o);
  ASSERT_EQ(r.report.orthonormalizers.size(), 3u);
  for (int n = 0; n < 3; ++n) {
    EXPECT_NE(r.report.orthonormalizers[n], to_string(Orthonormalizer::CholeskyQR2));
    EXPECT_LT(test::orthogonality_loss(test::to_host(*dev, r.factors[n]).cview()), 1e-5) << r.report.orthonormalizers[n];
  }
  a(5, 7) = std::numeric_limits<float>::quiet_NaN();
  Matrix<float> nan = test::to_backend(*dev, a);
  try {
    rp_hosvd(*dev, PackedTensor{nan.data(), dims, MemorySpace::Device}, ranks, o);
    ADD_FAILURE() << "no error for a NaN in A";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace randnla
