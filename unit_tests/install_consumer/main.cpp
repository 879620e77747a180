// The installed package's consumer (CMakeLists.txt): an RSVD on a Kokkos view must recover a rank-2
// field, and the library must report its CUDA module (in a build with CUDA) as loaded from the
// moved install, of its own build id; no GPU is needed for either.
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

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  const int m = 120, n = 80;
  Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace> field("field", m, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) field(i, j) = std::cos(0.01f * i) * std::sin(0.02f * j) + 0.5f * std::cos(0.03f * j);
  const auto r = randnla::rsvd(Kokkos::DefaultHostExecutionSpace(), field, 2);
  const double err = r.report.relative_error_estimate;
  std::printf("rsvd on the host: relative error estimate %.2e\n", err);
  const bool rsvd_ok = err >= 0 && err < 1e-4 && r.U.extent(0) == static_cast<std::size_t>(m);
  return rsvd_ok && module_as_expected() ? 0 : 1;
}
