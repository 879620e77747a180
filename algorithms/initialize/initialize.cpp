#include "initialize.hpp"

#include <chrono>
#include <functional>

#include "randnla/pca/pca.hpp"
#include "randnla/rsvd/rsvd.hpp"

namespace randnla {
namespace {

/// Synthetic data for the warm-up, drawn on the device (no host data travels).
Matrix<float> gaussian(Backend& b, index_t m, index_t n) {
  Matrix<float> x(b, m, n, "warm-up data");
  b.fill_random(RandomSpec{Distribution::Gaussian, 0x1417u, 0}, x.view());
  return x;
}

/// Runs `step`, waits for the device and adds its wall milliseconds to `report` as `name`.
void timed(Backend& b, InitializeReport& report, const char* name, const std::function<void()>& step) {
  const auto start = std::chrono::steady_clock::now();
  step();
  b.synchronize();
  report.phases.add(name, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace

InitializeReport initialize(Backend& b) {
  InitializeReport report;
  report.backend = b.description();
  if (b.memory_space() == MemorySpace::Host) return report;
  timed(b, report, "PCA", [&] {
    PcaOptions o;
    o.oversampling = 10, o.power_iterations = 2;
    const Matrix<float> x = gaussian(b, 2048, 512);
    pca(b, x.view(), 16, o);
  });
  timed(b, report, "RSVD", [&] {
    RsvdOptions o;
    o.oversampling = 10, o.power_iterations = 1;
    const Matrix<float> a = gaussian(b, 2048, 1024);
    rsvd(b, a.view(), 256, o);
  });
  return report;
}

}  // namespace randnla
