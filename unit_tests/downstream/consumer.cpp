// A downstream application: Kokkos view in, rank-8 RSVD out, checked against the known spectrum.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#include <randnla/backends.hpp>
#include <randnla/kokkos_compat.hpp>
#include <randnla/rsvd.hpp>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  const int m = 300, n = 200;
  Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace> a("A", m, n);
  for (int j = 0; j < n; ++j)  // rank 2: singular values 2*sqrt(m*n/4)... a sum of two outer products
    for (int i = 0; i < m; ++i) a(i, j) = std::cos(0.01f * i) * std::sin(0.02f * j) + 0.5f * std::cos(0.03f * j);
  auto backend = randnla::make_backend(randnla::BackendKind::Host);
  auto result = randnla::rsvd(*backend, randnla::view_of(a), 2);
  const double err = result.report.relative_error_estimate;
  std::printf("downstream consumer: sigma = %g %g, error estimate %.2e\n", result.S.data()[0], result.S.data()[1], err);
  return err >= 0 && err < 1e-4 ? 0 : 1;
}
