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

/// The CSR arrays copied into the device backend's memory. The index arrays travel through the
/// context's float copy, which moves bytes unchanged (int32 and float have one size).
struct DeviceCsr {
  std::shared_ptr<void> row_ptr, col_idx, values;
  CsrView view;
};
template <class T>
std::shared_ptr<void> to_device(Backend& dev, const std::vector<T>& h) {
  static_assert(sizeof(T) == sizeof(float), "copied as floats");
  const index_t n = static_cast<index_t>(h.size());
  std::shared_ptr<void> d = dev.allocate(sizeof(float) * std::max<std::size_t>(h.size(), 1));
  dev.copy(MatrixView<const float>(reinterpret_cast<const float*>(h.data()), n, 1, std::max<index_t>(n, 1), MemorySpace::Host),
           MatrixView<float>(static_cast<float*>(d.get()), n, 1, std::max<index_t>(n, 1), MemorySpace::Device));
  return d;
}
DeviceCsr to_device(Backend& dev, const HostCsr& a) {
  DeviceCsr d{to_device(dev, a.row_ptr), to_device(dev, a.col_idx), to_device(dev, a.values), a.view()};
  d.view.row_ptr = static_cast<const std::int32_t*>(d.row_ptr.get());
  d.view.col_idx = static_cast<const std::int32_t*>(d.col_idx.get());
  d.view.values = static_cast<const float*>(d.values.get());
  d.view.space = MemorySpace::Device;
  return d;
}

TEST(Gpu, SparseRsvdThroughCusparseMatchesHost) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  const HostCsr a = random_csr(false, 71);
  const DeviceCsr da = to_device(*dev, a);
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
  const DeviceCsr dx = to_device(*dev, x);
  const PcaResult ph = pca(*host, x.view(), K, po), pd = pca(*dev, dx.view, K, po);
  const auto vh = test::to_host(*host, ph.singular_values), vd = test::to_host(*dev, pd.singular_values);
  for (index_t i = 0; i < K; ++i) EXPECT_NEAR(vd.data[i], vh.data[i], 1e-5 * vh.data[0]) << "PCA sigma " << i;
  EXPECT_NEAR(pd.total_variance, ph.total_variance, 1e-5 * ph.total_variance);
}

TEST(Gpu, SparseChecksOnTheDeviceNameTheDefect) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  HostCsr a = random_csr(false, 73);
  const std::int32_t j = a.row_ptr[10];
  ASSERT_LT(j + 1, a.row_ptr[11]);
  std::swap(a.col_idx[j], a.col_idx[j + 1]);
  const DeviceCsr unsorted = to_device(*dev, a);
  EXPECT_NE(test::invalid_argument_message([&] { rsvd(*dev, unsorted.view, K); }).find("A.col_idx[" + std::to_string(j + 1) + "]"),
            std::string::npos);
  std::swap(a.col_idx[j], a.col_idx[j + 1]);
  a.values[j] = std::numeric_limits<float>::infinity();
  const DeviceCsr infinite = to_device(*dev, a);
  EXPECT_NE(test::invalid_argument_message([&] { rsvd(*dev, infinite.view, K); }).find("A.values[" + std::to_string(j) + "] = inf"),
            std::string::npos);
  a.values[j] = 1.0f;
  a.row_ptr[20] = a.row_ptr[19] - 1;
  const DeviceCsr decreasing = to_device(*dev, a);
  EXPECT_NE(test::invalid_argument_message([&] { rsvd(*dev, decreasing.view, K); }).find("A.row_ptr[20]"), std::string::npos);
}

}  // namespace
}  // namespace randnla
