// The Kokkos-native API: views and an execution-space instance in, views out, on every execution
// space of this Kokkos (the default one: Serial, OpenMP or Cuda), checked against FP64 references.
#include <Kokkos_Core.hpp>

#include <cmath>

#include "randnla/randnla.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Space = Exec::memory_space;
using DeviceMatrix = Kokkos::View<float**, Kokkos::LayoutLeft, Space>;

/// A = U diag(sigma) V^T (m x n) on the default execution space, and its exact singular values.
DeviceMatrix spectrum_matrix(index_t m, index_t n, const std::vector<double>& sigma, test::HostMatrix<float>& host) {
  host = test::matrix_with_spectrum(m, n, sigma, 11);
  return test::to_kokkos(host);
}

std::vector<double> decaying(index_t n) {
  std::vector<double> s(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) s[i] = std::pow(i + 1.0, -2.0);
  return s;
}

// initialize(exec) makes the backend the entries use on exec and names it; on a host space, which
// loads nothing lazily, it runs no warm-up, and on the GPU (the CUDA-enabled Kokkos) it runs both.
TEST(KokkosApi, InitializeMakesTheBackendOfTheSpaceAndWarmsItWhereItIsADevice) {
  const InitializeReport r = initialize(Exec());
  EXPECT_EQ(r.backend, backend_for(Exec())->description());
  EXPECT_GE(r.phases.ms("backend"), 0.0);
  const bool device = backend_for(Exec())->memory_space() == MemorySpace::Device;
  EXPECT_EQ(r.phases.phases().size(), device ? 3u : 1u);
  EXPECT_EQ(r.phases.phases().front().first, "backend");
}

TEST(KokkosApi, RsvdOfAViewReturnsViewsInItsSpaceAtTheEckartYoungError) {
  const index_t m = 400, n = 300, k = 20;
  const std::vector<double> sigma = decaying(n);
  test::HostMatrix<float> host;
  const Kokkos::View<const float**, Kokkos::LayoutLeft, Space> a = spectrum_matrix(m, n, sigma, host);
  const auto r = rsvd(Exec(), a, k);
  static_assert(std::is_same<decltype(r.U)::memory_space, Space>::value, "U lives in A's memory space");
  ASSERT_EQ(r.U.extent(0), static_cast<std::size_t>(m));
  ASSERT_EQ(r.U.extent(1), static_cast<std::size_t>(k));
  ASSERT_EQ(r.S.extent(0), static_cast<std::size_t>(k));
  ASSERT_EQ(r.V.extent(0), static_cast<std::size_t>(n));
  const auto u = test::from_kokkos(r.U), v = test::from_kokkos(r.V);
  auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.S);
  test::HostMatrix<float> sh(k, 1);
  for (index_t i = 0; i < k; ++i) sh(i, 0) = s(i);
  const double err = test::lowrank_relative_error(host.cview(), u.cview(), sh.cview(), v.cview());
  const double optimum = test::eckart_young(sigma, k) / test::eckart_young(sigma, 0);
  EXPECT_LE(err, 1.05 * optimum) << r.report.backend;
  for (index_t i = 0; i < k; ++i) EXPECT_NEAR(s(i), sigma[i], 1e-3 * sigma[i]) << i;
  EXPECT_LT(test::orthogonality_loss(u.cview()), 1e-5);
  const auto a_now = test::from_kokkos(Kokkos::View<float**, Kokkos::LayoutLeft, Space>(const_cast<float*>(a.data()), m, n));
  EXPECT_EQ(a_now.data, host.data);  // A is read in place, not written
}

TEST(KokkosApi, FixedAccuracyAndOrthonormalizeInPlace) {
  const index_t m = 300, n = 200;
  const std::vector<double> sigma = decaying(n);
  test::HostMatrix<float> host;
  const DeviceMatrix a = spectrum_matrix(m, n, sigma, host);
  FixedAccuracyOptions o;
  o.tolerance = 1e-2;
  o.block_size = 8;
  const auto r = rsvd_fixed_accuracy(Exec(), a, o);
  const index_t rank = static_cast<index_t>(r.S.extent(0));
  auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.S);
  test::HostMatrix<float> sh(rank, 1);
  for (index_t i = 0; i < rank; ++i) sh(i, 0) = s(i);
  EXPECT_LE(test::lowrank_relative_error(host.cview(), test::from_kokkos(r.U).cview(), sh.cview(), test::from_kokkos(r.V).cview()), 1e-2);

  DeviceMatrix y("Y", m, 30);
  Kokkos::deep_copy(y, Kokkos::subview(a, Kokkos::ALL(), Kokkos::make_pair(0, 30)));
  const Orthonormalizer used = orthonormalize(Exec(), y);
  EXPECT_NE(used, Orthonormalizer::Householder);
  EXPECT_LT(test::orthogonality_loss(test::from_kokkos(y).cview()), 1e-5);
}

TEST(KokkosApi, PcaOfAViewEqualsTheBackendEntryAndLeavesXAsItWas) {
  const index_t m = 300, n = 80, k = 6;
  test::HostMatrix<float> before = test::matrix_with_spectrum(m, n, decaying(n), 11);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) before(i, j) += 0.01f * static_cast<float>(j);  // a mean to take out
  const DeviceMatrix x = test::to_kokkos(before);
  PcaOptions o;
  o.scores = true;
  const auto v = pca(Exec(), Kokkos::View<const float**, Kokkos::LayoutLeft, Space>(x), k, o);
  static_assert(std::is_same<decltype(v.components)::memory_space, Space>::value, "results live in X's space");
  ASSERT_EQ(v.components.extent(0), static_cast<std::size_t>(k));
  ASSERT_EQ(v.components.extent(1), static_cast<std::size_t>(n));
  ASSERT_EQ(v.mean.extent(0), static_cast<std::size_t>(n));
  ASSERT_EQ(v.scores.extent(0), static_cast<std::size_t>(m));
  EXPECT_EQ(test::from_kokkos(x).data, before.data);  // read in place, not centred in place

  auto b = backend_for(Exec());
  const PcaResult r = pca(*b, view_of(x), k, o);
  EXPECT_EQ(test::from_kokkos(v.components).data, test::to_host(*b, r.components).data);
  EXPECT_EQ(test::from_kokkos(v.scores).data, test::to_host(*b, r.scores).data);
  const auto mean = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v.mean);
  const auto ratio = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v.explained_variance_ratio);
  const std::vector<float> r_ratio = test::to_host(*b, r.explained_variance_ratio).data;
  for (index_t i = 0; i < k; ++i) EXPECT_EQ(ratio(i), r_ratio[i]) << i;
  for (index_t j = 0; j < n; ++j) {
    double sum = 0;
    for (index_t i = 0; i < m; ++i) sum += before(i, j);
    EXPECT_NEAR(mean(j), sum / m, 1e-6) << j;  // against the FP64 mean
  }
}

// A row-major view is taken (as A^T: test_layouts), and its bad arguments are refused as a
// LayoutLeft one's.
TEST(KokkosApi, BadRanksAreRefusedInEveryLayout) {
  Kokkos::View<float**, Kokkos::LayoutRight, Space> right("A", 50, 40);
  DeviceMatrix a("A", 50, 40);
  EXPECT_THROW(rsvd(Exec(), a, 0), InvalidArgument);
  EXPECT_THROW(rsvd(Exec(), a, 35), InvalidArgument);  // k + p = 45 > 40
  EXPECT_THROW(rsvd(Exec(), right, 0), InvalidArgument);
  EXPECT_THROW(rsvd(Exec(), right, 35), InvalidArgument);
}

#if defined(KOKKOS_ENABLE_CUDA) && defined(RANDNLA_HAVE_CUDA)
// On a Kokkos::Cuda instance: the portable backend's Omega equals the Tensor Core backend's bit for
// bit, and their RSVDs agree within the tests' tolerances.
TEST(KokkosApi, PortableAndTensorCoreBackendsAgreeOnKokkosCuda) {
  const Kokkos::Cuda exec;
  const auto portable = backend_for(exec, BackendChoice::Portable), tensor = backend_for(exec);
  ASSERT_TRUE(tensor->capabilities().tensor_cores) << tensor->description();
  ASSERT_FALSE(portable->capabilities().tensor_cores);
  const RandomSpec spec{Distribution::Gaussian, 3, 0};
  Matrix<fp16> hp(*portable, 1000, 272), ht(*tensor, 1000, 272);
  portable->fill_random(spec, hp.view());
  tensor->fill_random(spec, ht.view());
  std::vector<fp16> a(1000 * 272), b(1000 * 272);
  portable->copy(MatrixView<const fp16>(hp.view()), MatrixView<fp16>(a.data(), 1000, 272, 1000, MemorySpace::Host));
  tensor->copy(MatrixView<const fp16>(ht.view()), MatrixView<fp16>(b.data(), 1000, 272, 1000, MemorySpace::Host));
  for (std::size_t e = 0; e < a.size(); ++e) ASSERT_EQ(a[e].bits, b[e].bits) << e;

  const std::vector<double> sigma = decaying(300);
  test::HostMatrix<float> host;
  const DeviceMatrix m = spectrum_matrix(500, 300, sigma, host);
  for (const auto& b : {portable, tensor}) {
    RsvdOptions o;
    o.products = ProductPrecision::split_in(TensorCore::FP16);
    const RsvdResult r = rsvd(*b, view_of(m), 16, o);
    const double err = test::lowrank_relative_error(host.cview(), test::to_host(*b, r.U).cview(),
                                                    test::to_host(*b, r.S).cview(), test::to_host(*b, r.V).cview());
    EXPECT_LE(err, 1.05 * test::eckart_young(sigma, 16) / test::eckart_young(sigma, 0)) << b->description();
  }
}
#endif

}  // namespace
}  // namespace randnla
