// The tutorial's program (docs/tutorial.md), a Trilinos-style application: its data lives in a
// Kokkos::View (LayoutLeft, the default memory space: the GPU's in a CUDA-enabled Kokkos), and it
// calls randnla through the installed package (find_package(RandNLA)) on that data in place: no
// copy of the field goes in, U, S and V come back as views in the same memory space.
// Here: a rank-2 field sampled on a 300 x 200 grid; the RSVD must recover it to FP32 accuracy.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#include <randnla/randnla.hpp>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  const int m = 300, n = 200;
  const Kokkos::DefaultExecutionSpace exec;
  Kokkos::View<float**, Kokkos::LayoutLeft> field("field", m, n);
  Kokkos::parallel_for(
      "fill", Kokkos::MDRangePolicy<Kokkos::Rank<2>>(exec, {0, 0}, {m, n}), KOKKOS_LAMBDA(int i, int j) {
        field(i, j) = cosf(0.01f * i) * sinf(0.02f * j) + 0.5f * cosf(0.03f * j);
      });

  const auto r = randnla::rsvd(exec, field, 2);  // q = 2 power iterations by default
  const auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.S);
  const double err = r.report.relative_error_estimate;
  std::printf("tutorial on %s (%s): U %zu x %zu, sigma = %g %g, relative error estimate %.2e\n",
              r.report.backend.c_str(), Kokkos::DefaultExecutionSpace::name(), r.U.extent(0), r.U.extent(1), s(0), s(1),
              err);
  return err >= 0 && err < 1e-4 && r.U.extent(0) == static_cast<std::size_t>(m) ? 0 : 1;
}
