// The Kokkos-native API: views and an execution-space instance in, views out, on every execution
// space of this Kokkos (the default one: Serial, OpenMP or Cuda), checked against FP64 references.
#include <Kokkos_Core.hpp>

#include <cmath>

#include "randnla.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Space = Exec::memory_space;
using DeviceMatrix = Kokkos::View<float**, Kokkos::LayoutLeft, Space>;

/// A = U diag(sigma) V^T (m x n) on the default execution space, and its exact singular values.
DeviceMatrix spectrum_matrix(index_t m, index_t n, const std::vector<double>& sigma, test::HostMatrix<float>& host) {
  host = test::matrix_with_spectrum(m, n, sigma, 11);
  DeviceMatrix a("A", m, n);
  auto mirror = Kokkos::create_mirror_view(a);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) mirror(i, j) = host(i, j);
  Kokkos::deep_copy(a, mirror);
  return a;
}

test::HostMatrix<float> to_host(const DeviceMatrix& v) {
  auto mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  test::HostMatrix<float> h(static_cast<index_t>(v.extent(0)), static_cast<index_t>(v.extent(1)));
  for (index_t j = 0; j < h.cols; ++j)
    for (index_t i = 0; i < h.rows; ++i) h(i, j) = mirror(i, j);
  return h;
}

std::vector<double> decaying(index_t n) {
  std::vector<double> s(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) s[i] = std::pow(i + 1.0, -2.0);
  return s;
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
  const auto u = to_host(r.U), v = to_host(r.V);
  auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.S);
  test::HostMatrix<float> sh(k, 1);
  for (index_t i = 0; i < k; ++i) sh(i, 0) = s(i);
  const double err = test::lowrank_relative_error(host.cview(), u.cview(), sh.cview(), v.cview());
  const double optimum = test::eckart_young(sigma, k) / test::eckart_young(sigma, 0);
  EXPECT_LE(err, 1.05 * optimum) << r.report.backend;
  for (index_t i = 0; i < k; ++i) EXPECT_NEAR(s(i), sigma[i], 1e-3 * sigma[i]) << i;
  EXPECT_LT(test::orthogonality_loss(u.cview()), 1e-5);
  const auto a_now = to_host(Kokkos::View<float**, Kokkos::LayoutLeft, Space>(const_cast<float*>(a.data()), m, n));
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
  EXPECT_LE(test::lowrank_relative_error(host.cview(), to_host(r.U).cview(), sh.cview(), to_host(r.V).cview()), 1e-2);

  DeviceMatrix y("Y", m, 30);
  Kokkos::deep_copy(y, Kokkos::subview(a, Kokkos::ALL(), Kokkos::make_pair(0, 30)));
  const Orthonormalizer used = orthonormalize(Exec(), y);
  EXPECT_NE(used, Orthonormalizer::Householder);
  EXPECT_LT(test::orthogonality_loss(to_host(y).cview()), 1e-5);
}

TEST(KokkosApi, RowMajorViewsAndBadRanksAreRefused) {
  Kokkos::View<float**, Kokkos::LayoutRight, Space> right("A", 50, 40);
  try {
    rsvd(Exec(), right, 5);
    ADD_FAILURE() << "a LayoutRight view accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.parameter(), "A.layout") << e.what();
  }
  DeviceMatrix a("A", 50, 40);
  EXPECT_THROW(rsvd(Exec(), a, 0), InvalidArgument);
  EXPECT_THROW(rsvd(Exec(), a, 35), InvalidArgument);  // k + p = 45 > 40
}

}  // namespace
}  // namespace randnla
