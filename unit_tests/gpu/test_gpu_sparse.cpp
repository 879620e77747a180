// GPU tests of the sparse RSVD and PCA: the CUDA backend's cuSPARSE products and its CSR checks
// against the portable backend on the host.

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "randnla/backends.hpp"
#include "randnla/sparse/sparse_ops.hpp"
#include "randnla/sparse/sparse_rsvd.hpp"
#include "gpu_test_support.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

constexpr index_t M = 3000, N = 1200, K = 10;

struct HostCsr {
  std::vector<std::int32_t> row_ptr{0}, col_idx;
  std::vector<float> values;
  CsrView view() const {
    return CsrView{M, N, static_cast<index_t>(values.size()), row_ptr.data(), col_idx.data(), values.data(),
                   MemorySpace::Host};
  }
};

/// About 1% non-zeros, rows and columns scaled for a decaying spectrum; non-negative where `positive`.
HostCsr random_csr(bool positive, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  HostCsr a;
  for (index_t i = 0; i < M; ++i) {
    for (index_t j = 0; j < N; ++j) {
      if (u(gen) >= 0.01) continue;
      const double v = positive ? 0.05 + u(gen) : 2.0 * u(gen) - 1.0;
      a.col_idx.push_back(static_cast<std::int32_t>(j));
      a.values.push_back(static_cast<float>(v * std::exp(-static_cast<double>(i) / 400 - static_cast<double>(j) / 300)));
    }
    a.row_ptr.push_back(static_cast<std::int32_t>(a.values.size()));
  }
  return a;
}

TEST(Gpu, SparseRsvdThroughCusparseMatchesHost) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  const HostCsr a = random_csr(false, 71);
  const CsrArrays da = copy_csr(*dev, a.view());
  RsvdOptions o;
  o.products = ProductPrecision::fp32();
  const RsvdResult h = rsvd(*host, a.view(), K, o), d = rsvd(*dev, da.view, K, o);
  EXPECT_NE(d.report.sketch_kernel.find("cuSPARSE"), std::string::npos) << d.report.sketch_kernel;
  const auto sh = test::to_host(*host, h.S), sd = test::to_host(*dev, d.S);
  for (index_t i = 0; i < K; ++i) EXPECT_NEAR(sd.data[i], sh.data[i], 1e-5 * sh.data[0]) << "sigma " << i;
  EXPECT_LT(test::span_residual(test::to_host(*host, h.U), test::to_host(*dev, d.U)), 1e-3);
  EXPECT_LT(test::span_residual(test::to_host(*host, h.V), test::to_host(*dev, d.V)), 1e-3);

  PcaOptions po;
  po.products = ProductPrecision::fp32();
  const HostCsr x = random_csr(true, 72);
  const CsrArrays dx = copy_csr(*dev, x.view());
  const PcaResult ph = pca(*host, x.view(), K, po), pd = pca(*dev, dx.view, K, po);
  const auto vh = test::to_host(*host, ph.singular_values), vd = test::to_host(*dev, pd.singular_values);
  for (index_t i = 0; i < K; ++i) EXPECT_NEAR(vd.data[i], vh.data[i], 1e-5 * vh.data[0]) << "PCA sigma " << i;
  EXPECT_NEAR(pd.total_variance, ph.total_variance, 1e-5 * ph.total_variance);
}

// The sparse sign sketch's kernel against the portable one on the host: the same Omega and the same
// summation order give the same bits, for a width below 8 (zeta = l), one of whole blocks of
// 32 rows and one wider than the default 48 KB of shared memory (l = 20000: a tile of 2 rows).
TEST(Gpu, SparseSignSketchEqualsTheHostsBitForBit) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda), host = make_backend(BackendKind::Host);
  const HostCsr a = random_csr(false, 73);
  const CsrArrays da = copy_csr(*dev, a.view());
  for (index_t l : {5, 74, 266, 20000}) {
    const SparseSignSketch omega(N, l, RngState{19, 4});
    Matrix<float> yh(*host, M, l), yd(*dev, M, l);
    host->ops<SparseOps>().sparse_sign_sketch(a.view(), omega, yh.view());
    const std::string ran = dev->ops<SparseOps>().sparse_sign_sketch(da.view, omega, yd.view());
    EXPECT_NE(ran.find("shared memory"), std::string::npos) << ran;
    const auto h = test::to_host(*host, yh), d = test::to_host(*dev, yd);
    EXPECT_TRUE(h.data == d.data) << "l = " << l;
    EXPECT_GT(*std::max_element(h.data.begin(), h.data.end()), 0.0f) << "l = " << l;
  }
}

TEST(Gpu, SparseChecksOnTheDeviceNameTheDefect) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  HostCsr a = random_csr(false, 73);
  const std::int32_t j = a.row_ptr[10];
  ASSERT_LT(j + 1, a.row_ptr[11]);
  std::swap(a.col_idx[j], a.col_idx[j + 1]);
  const CsrArrays unsorted = copy_csr(*dev, a.view());
  EXPECT_NE(test::invalid_argument_message([&] { rsvd(*dev, unsorted.view, K); }).find("A.col_idx[" + std::to_string(j + 1) + "]"),
            std::string::npos);
  std::swap(a.col_idx[j], a.col_idx[j + 1]);
  a.values[j] = std::numeric_limits<float>::infinity();
  const CsrArrays infinite = copy_csr(*dev, a.view());
  EXPECT_NE(test::invalid_argument_message([&] { rsvd(*dev, infinite.view, K); }).find("A.values[" + std::to_string(j) + "] = inf"),
            std::string::npos);
  a.values[j] = 1.0f;
  a.row_ptr[20] = a.row_ptr[19] - 1;
  const CsrArrays decreasing = copy_csr(*dev, a.view());
  EXPECT_NE(test::invalid_argument_message([&] { rsvd(*dev, decreasing.view, K); }).find("A.row_ptr[20]"), std::string::npos);
}

}  // namespace
}  // namespace randnla
