// GPU tests of the CUDA backend's context: Omega drawn on the device equal to the host's, the
// phase report from queue marks, two backends on two streams from two threads, the device memory
// pool, and the host's FP16 conversion against the device's.

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "randnla/backends.hpp"
#include "randnla/initialize/initialize.hpp"
#include "randnla/rsvd/rsvd.hpp"
#include "gpu_test_support.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

using namespace gpu_test;
TEST(Gpu, OmegaOnDeviceEqualsOmegaOnHostBitForBit) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  for (auto dist : {Distribution::Gaussian, Distribution::Rademacher, Distribution::Ternary}) {
    const RandomSpec spec{dist, 20261121, 3, 0.05};
    for (index_t rows : {1, 37, 4096}) {
      const index_t cols = rows == 4096 ? 300 : 53;
      Matrix<float> d(*dev, rows, cols), h(*host, rows, cols), back(*host, rows, cols);
      dev->fill_random(spec, d.view());
      host->fill_random(spec, h.view());
      dev->copy(d.view(), back.view());
      ASSERT_EQ(std::memcmp(h.data(), back.data(), sizeof(float) * rows * cols), 0) << rows;
      Matrix<fp16> dh(*dev, rows, cols), hh(*host, rows, cols), backh(*host, rows, cols);
      dev->fill_random(spec, dh.view());
      host->fill_random(spec, hh.view());
      dev->copy(dh.view(), backh.view());
      ASSERT_EQ(std::memcmp(hh.data(), backh.data(), sizeof(fp16) * rows * cols), 0) << rows;
      if (rows < 4) continue;
      // A block of a larger operator in a view one row in: rows not a multiple of four from the
      // operator's start, no element 8- or 16-byte aligned where the whole matrix's are.
      const RandomBlock block{3, 2, rows + 5};
      dev->fill_random(spec, d.view().block(1, 0, rows - 1, cols), block);
      host->fill_random(spec, h.view().block(1, 0, rows - 1, cols), block);
      dev->copy(d.view(), back.view());
      ASSERT_EQ(std::memcmp(h.data(), back.data(), sizeof(float) * rows * cols), 0) << rows << ", a block";
      dev->fill_random(spec, dh.view().block(1, 0, rows - 1, cols), block);
      host->fill_random(spec, hh.view().block(1, 0, rows - 1, cols), block);
      dev->copy(dh.view(), backh.view());
      ASSERT_EQ(std::memcmp(hh.data(), backh.data(), sizeof(fp16) * rows * cols), 0) << rows << ", a block";
    }
  }
}

// The phases' times come from marks in the CUDA stream, not from waiting at every phase: after the
// call the report has every phase once, in the order they first ran, each time finite and not
// negative, adding up to at most the call's wall time; a progress callback gets every lap as it ends.
TEST(Gpu, PhaseReportFromQueueMarksHasEveryPhaseWithinTheCallsTime) {
  RANDNLA_REQUIRE_GPU();
  auto b = make_backend(BackendKind::Cuda);
  std::vector<double> sigma(500);
  for (std::size_t i = 0; i < sigma.size(); ++i) sigma[i] = 1.0 / (1.0 + static_cast<double>(i));
  const Matrix<float> a = test::to_backend(*b, test::matrix_with_spectrum(2000, 500, sigma, 7));
  RsvdOptions o;
  o.power_iterations = 1;
  const auto start = std::chrono::steady_clock::now();
  const RsvdResult r = rsvd(*b, a, 32, o);
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::vector<std::string> names;
  double total = 0.0;
  for (const auto& [phase, ms] : r.report.phases.phases()) {
    names.push_back(phase);
    EXPECT_TRUE(std::isfinite(ms) && ms >= 0.0) << phase << " " << ms;
    total += ms;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"projection", "input check", "orthonormalisation", "Q^T A", "small SVD",
                                             "U = Q Uhat", "error estimate"}));
  EXPECT_GT(total, 0.0);
  EXPECT_LE(total, wall);
  std::vector<std::string> laps;
  o.progress = [&](const std::string& phase, double ms) {
    EXPECT_TRUE(std::isfinite(ms) && ms >= 0.0) << phase;
    laps.push_back(phase);
  };
  rsvd(*b, a, 32, o);
  EXPECT_EQ(laps, (std::vector<std::string>{"projection", "input check", "orthonormalisation", "projection",
                                            "orthonormalisation", "projection", "orthonormalisation", "Q^T A",
                                            "small SVD", "U = Q Uhat", "error estimate"}));
}

// Two backends, each on its own stream, used from two host threads at once (the first launches of
// every kernel included), give the results of one backend alone, bit for bit.
// initialize() runs its warm-up PCA and RSVD on the device; what it keeps allocated is the
// backend's own workspace (the Tensor Core products'), which a second call does not grow; the
// first RSVD after it is as accurate as any (the warm-up leaves no state behind).
TEST(Gpu, InitializeWarmsTheMainPathsAndKeepsOnlyTheBackendsWorkspace) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda), host = make_backend(BackendKind::Host);
  const InitializeReport r = initialize(*dev);
  EXPECT_EQ(r.backend, dev->description());
  ASSERT_EQ(r.phases.phases().size(), 2u);
  EXPECT_GT(r.phases.ms("PCA"), 0.0);
  EXPECT_GT(r.phases.ms("RSVD"), 0.0);
  const std::size_t kept = dev->memory_use().bytes;
  initialize(*dev);
  EXPECT_EQ(dev->memory_use().bytes, kept);
  std::vector<double> sigma(40);
  for (std::size_t i = 0; i < sigma.size(); ++i) sigma[i] = std::pow(0.7, static_cast<double>(i));
  const auto a = test::matrix_with_spectrum(3000, 40, sigma, 8);
  Matrix<float> da = test::to_backend(*dev, a), ha = test::to_backend(*host, a);
  const RsvdResult d = rsvd(*dev, da.view(), 10), h = rsvd(*host, ha.view(), 10);
  const auto ds = test::to_host(*dev, d.S), hs = test::to_host(*host, h.S);
  for (index_t i = 0; i < 10; ++i) EXPECT_NEAR(ds.data[i], sigma[i], 1e-5 * sigma[0]) << i;
  for (index_t i = 0; i < 10; ++i) EXPECT_NEAR(hs.data[i], sigma[i], 1e-5 * sigma[0]) << i;
}

TEST(Gpu, TwoBackendsOnTwoStreamsFromTwoThreadsGiveTheResultsOfOne) {
  RANDNLA_REQUIRE_GPU();
  const index_t m = 3000, n = 2000, k = 64;
  std::vector<double> sigma(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) sigma[i] = std::pow(i + 1.0, -1.5);
  const test::HostMatrix<float> a = test::matrix_with_spectrum(m, n, sigma, 5);
  const auto run = [&](test::HostMatrix<float>& u, test::HostMatrix<float>& s) {
    auto b = make_backend(BackendKind::Cuda);
    const Matrix<float> da = test::to_backend(*b, a);
    RsvdOptions o;
    o.products = ProductPrecision::split_in(TensorCore::FP16);
    const RsvdResult r = rsvd(*b, da, k, o);
    u = test::to_host(*b, r.U);
    s = test::to_host(*b, r.S);
  };
  test::HostMatrix<float> u1, s1, u2, s2, u_alone, s_alone;
  std::thread first([&] { run(u1, s1); }), second([&] { run(u2, s2); });
  first.join();
  second.join();
  run(u_alone, s_alone);
  EXPECT_EQ(s1.data, s_alone.data);
  EXPECT_EQ(s2.data, s_alone.data);
  EXPECT_EQ(u1.data, u_alone.data);
  EXPECT_EQ(u2.data, u_alone.data);
}

// Device memory freed by the library serves its next request of the same size (repeated calls
// reuse their blocks instead of the pool mapping new memory), and what is kept goes back when a
// request of another size would not fit.
TEST(Gpu, FreedDeviceBlocksServeRequestsOfTheirSizeAndGoBackWhenMemoryRunsShort) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  constexpr std::size_t mib = std::size_t(1) << 20;
  const void* freed = dev->allocate(3 * mib).get();
  EXPECT_EQ(dev->allocate(3 * mib).get(), freed);
  std::vector<std::shared_ptr<void>> blocks;
  constexpr std::size_t big = 4096 * mib;
  try {
    for (;;) blocks.push_back(dev->allocate(big));
  } catch (const DeviceError&) {
  }
  ASSERT_GE(blocks.size(), 3u) << "a GPU with at least 12 GiB";
  blocks.clear();  // all kept: together they were in use at once
  std::shared_ptr<void> other;
  EXPECT_NO_THROW(other = dev->allocate(2 * big + mib));
  EXPECT_NE(other, nullptr);
  Matrix<float> x(*dev, 1024, 1);
  dev->fill_random(RandomSpec{}, x.view());  // the memory still works
  EXPECT_TRUE(std::isfinite(dev->frobenius_norm(x.view())));
}

TEST(Gpu, HostFp16ConversionEqualsFloat2HalfRnForAll2To32Patterns) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  const index_t chunk = index_t(1) << 28;
  Matrix<float> src(*host, chunk, 1), d_src(*dev, chunk, 1);
  Matrix<fp16> d_out(*dev, chunk, 1), out(*host, chunk, 1);
  for (std::uint64_t base = 0; base < (1ull << 32); base += static_cast<std::uint64_t>(chunk)) {
    for (index_t i = 0; i < chunk; ++i) src.data()[i] = exact::float_of(static_cast<std::uint32_t>(base + i));
    dev->copy(src.view(), d_src.view());
    dev->convert(d_src.view(), d_out.view());  // __float2half_rn
    dev->copy(d_out.view(), out.view());
    index_t mismatches = 0;
    for (index_t i = 0; i < chunk; ++i) mismatches += out.data()[i].bits != float_to_half_bits(src.data()[i]);
    ASSERT_EQ(mismatches, 0) << "chunk at 0x" << std::hex << base;
  }
}

}  // namespace
}  // namespace randnla
