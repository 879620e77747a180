// A Trilinos-style application: its data lives in a Kokkos::View (LayoutLeft, the default memory
// space), and it calls randnla through the installed package (find_package(RandNLA)).
// Here: a rank-2 field sampled on a 300 x 200 grid; the RSVD must recover it to FP32 accuracy.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#include <randnla/backends.hpp>
#include <randnla/kokkos_compat.hpp>
#include <randnla/rsvd.hpp>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  const int m = 300, n = 200;
  Kokkos::View<float**, Kokkos::LayoutLeft> field("field", m, n);
  Kokkos::parallel_for(
      "fill", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {m, n}), KOKKOS_LAMBDA(int i, int j) {
        field(i, j) = cosf(0.01f * i) * sinf(0.02f * j) + 0.5f * cosf(0.03f * j);
      });
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), field);

  auto backend = randnla::make_backend(randnla::BackendKind::Auto);
  randnla::Matrix<float> a(*backend, m, n);
  backend->copy(randnla::view_of(host), a.view());
  const auto result = randnla::rsvd(*backend, a, 2);
  float s[2];
  backend->copy(result.S.view(), randnla::MatrixView<float>(s, 2, 1, 2, randnla::MemorySpace::Host));
  const double err = result.report.relative_error_estimate;
  std::printf("trilinos-style consumer on %s: sigma = %g %g, relative error estimate %.2e\n",
              result.report.backend.c_str(), s[0], s[1], err);
  return err >= 0 && err < 1e-4 ? 0 : 1;
}
