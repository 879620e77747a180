// GPU tests of the randomized SVD: every sketch precision against the host, the SVD through the
// Gram matrix, and non-finite input rejected through every Tensor Core kernel.

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "randnla/backends.hpp"
#include "randnla/orthonormalize/orthonormalize.hpp"
#include "randnla/rsvd/rsvd.hpp"
#include "randnla/rsvd/svd_through_gram.hpp"
#include "gpu_test_support.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

using namespace gpu_test;
TEST(Gpu, RsvdOnDeviceMatchesHost) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  std::vector<double> sigma(256);
  for (int i = 0; i < 256; ++i) sigma[i] = std::pow(1e-6, i / 255.0);
  const auto a = test::matrix_with_spectrum(4096, 4096, sigma, 2);
  auto da = test::to_backend(*dev, a);
  for (auto s : {ProductPrecision::fp32(), ProductPrecision::split_in(TensorCore::FP16), ProductPrecision::split_in(TensorCore::TF32), ProductPrecision::automatic()}) {
    RsvdOptions o;
    o.products = s;
    o.power_iterations = 1;
    auto rd = rsvd(*dev, da, 64, o);
    auto rh = rsvd(*host, a.cview(), 64, o);
    const auto sd = test::to_host(*dev, rd.S);
    for (index_t i = 0; i < 64; ++i) EXPECT_NEAR(sd.data[i], rh.S.data()[i], 1e-4 * rh.S.data()[0]) << i;
    const auto ud = test::to_host(*dev, rd.U), vd = test::to_host(*dev, rd.V);
    const double ed = test::lowrank_relative_error(a.cview(), ud.cview(), sd.cview(), vd.cview());
    const double eh = test::lowrank_relative_error(a.cview(), rh.U.view(), rh.S.view(), rh.V.view());
    EXPECT_LE(ed, 1.1 * eh + 1e-7) << to_string(s);
    EXPECT_LE(ed, 1.5 * test::eckart_young(sigma, 64) / test::eckart_young(sigma, 0)) << to_string(s);
    std::printf("rsvd %s on %s: error %.3e (host %.3e), kernel %s\n", to_string(s), rd.report.backend.c_str(), ed, eh,
                rd.report.sketch_kernel.c_str());
  }
}

// The RSVD's small SVD on the device (cuSOLVER Xsyevd + CholeskyQR) against the same on the host.
TEST(Gpu, SvdThroughGramMatchesHost) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  const index_t m = 4096, n = 272;
  std::vector<double> sigma(n);
  for (index_t i = 0; i < n; ++i) sigma[i] = std::pow(1e-5, static_cast<double>(i) / (n - 1));
  const auto a = test::matrix_with_spectrum(m, n, sigma, 23);
  auto da = test::to_backend(*dev, a);
  Matrix<float> du(*dev, m, n), ds(*dev, n, 1), dv(*dev, n, n), hu(*host, m, n), hs(*host, n, 1), hv(*host, n, n);
  const Orthonormalizer used = svd_through_gram(*dev, da, du, ds, dv);
  svd_through_gram(*host, a.cview(), hu, hs, hv);
  const auto u = test::to_host(*dev, du), s = test::to_host(*dev, ds), v = test::to_host(*dev, dv);
  for (index_t i = 0; i < n; ++i) EXPECT_NEAR(s.data[i], hs.data()[i], 1e-6 * hs.data()[0]) << i;
  EXPECT_LT(test::lowrank_relative_error(a.cview(), u.cview(), s.cview(), v.cview()), 1e-6);
  EXPECT_LT(test::orthogonality_loss(u.cview()), 1e-5) << to_string(used);
  EXPECT_LT(test::orthogonality_loss(v.cview()), 1e-6);
}

// Inf and NaN in A reach the sketch through every Tensor Core kernel, where the RSVD's check reads them.
TEST(Gpu, RsvdRejectsNonFiniteInputThroughEveryKernel) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto a = test::random_matrix(700, 600, Elements::Normal, 8);
  for (const char* kernel : tensor_core_kernels(*dev)) {
    ScopedEnv env("RANDNLA_TC_KERNEL", kernel);
    for (float bad : {INFINITY, -INFINITY, NAN}) {
      a(123, 456) = bad;
      auto da = test::to_backend(*dev, a);
      for (auto sk : {ProductPrecision::split_in(TensorCore::FP16), ProductPrecision::split_in(TensorCore::TF32), ProductPrecision::automatic()}) {
        RsvdOptions o;
        o.products = sk;
        try {
          rsvd(*dev, da, 8, o);
          ADD_FAILURE() << bad << " accepted by " << kernel << " " << to_string(sk);
        } catch (const InvalidArgument& e) {
          EXPECT_NE(std::string(e.what()).find("1 non-finite"), std::string::npos) << e.what();
        }
      }
    }
  }
}

}  // namespace
}  // namespace randnla
