// The installed package's consumer (CMakeLists.txt): an RSVD on a Kokkos view must recover a rank-2
// field in every layout (LayoutLeft; Kokkos::View<float**>'s default, LayoutRight on the host, read
// in place as A^T; a LayoutStride view of every other column), and the library must report its CUDA
// module (in a build with CUDA) as loaded from the moved install, of its own build id; no GPU is
// needed for either.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <randnla/randnla.hpp>
#include <randnla/version.hpp>
#include <string>

namespace {

bool module_as_expected() {
  const randnla::CudaModuleStatus s = randnla::cuda_module_status();
  std::printf("randnla %s, build %s; CUDA module: built %d, loaded %d, path '%s', GPU present %d\n%s\n",
              RANDNLA_VERSION, s.build_id.c_str(), s.built, s.loaded, s.path.c_str(), s.gpu_present,
              s.reason.c_str());
  if (s.build_id != RANDNLA_BUILD_ID) return false;
#if defined(EXPECT_CUDA)
  // Where the install was moved after this consumer was built (scripts/gpu_run.sh), or its prefix.
  const char* moved = std::getenv("RANDNLA_CONSUMER_PREFIX");
  const std::string prefix = moved ? moved : EXPECTED_PREFIX;
  if (!s.built || !s.loaded || s.path.compare(0, prefix.size() + 1, prefix + "/") != 0) return false;
#if defined(EXPECTED_MODULE)
  if (!moved && s.path != EXPECTED_MODULE) return false;
#endif
  return true;
#else
  return !s.built && !s.loaded && !s.reason.empty();
#endif
}

/// The rank-2 RSVD of `field` (m x n, any layout) recovers it: the estimate and the error against
/// the field itself, in FP64 sums, below 1e-4 relative; U m x 2 and V n x 2 whatever the layout; the
/// field read in place (these layouts need no copy).
template <class View>
bool recovered(const char* layout, const View& field) {
  const auto r = randnla::rsvd(Kokkos::DefaultHostExecutionSpace(), field, 2);
  const auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.U);
  const auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.S);
  const auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.V);
  const int m = static_cast<int>(field.extent(0)), n = static_cast<int>(field.extent(1));
  if (u.extent(0) != field.extent(0) || v.extent(0) != field.extent(1)) return false;
  double residual = 0, norm = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double approx = 0;
      for (int c = 0; c < 2; ++c) approx += static_cast<double>(u(i, c)) * s(c) * v(j, c);
      residual += (field(i, j) - approx) * (field(i, j) - approx);
      norm += static_cast<double>(field(i, j)) * field(i, j);
    }
  const double err = std::sqrt(residual / norm), estimate = r.report.relative_error_estimate;
  std::printf("rsvd on the host, %s: relative error %.2e (estimate %.2e); %s\n", layout, err, estimate,
              r.input.c_str());
  return estimate >= 0 && estimate < 1e-4 && err < 1e-4 && r.input.find("read in place") != std::string::npos;
}

template <class View>
void fill(const View& field) {
  for (std::size_t j = 0; j < field.extent(1); ++j)
    for (std::size_t i = 0; i < field.extent(0); ++i)
      field(i, j) = std::cos(0.01f * i) * std::sin(0.02f * j) + 0.5f * std::cos(0.03f * j);
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  const int m = 120, n = 80;
  Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace> left("field", m, n);
  Kokkos::View<float**, Kokkos::HostSpace> right("field", m, n);  // the host's default layout: LayoutRight
  Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace> wide("wide", m, 2 * n);
  const Kokkos::View<float**, Kokkos::LayoutStride, Kokkos::HostSpace> every_other(
      wide.data(), Kokkos::LayoutStride(m, 1, n, 2 * m));
  fill(left);
  fill(right);
  fill(every_other);
  const bool rsvd_ok = recovered("LayoutLeft", left) && recovered("default layout (LayoutRight)", right) &&
                       recovered("LayoutStride, every other column", every_other);
  return rsvd_ok && module_as_expected() ? 0 : 1;
}
