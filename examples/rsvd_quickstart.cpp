// Rank-50 RSVD of a 3000 x 2000 matrix with a known spectrum (sigma_i = i^-1.5), held in a Kokkos
// view as an application would, on the GPU when there is one. Prints what ran and how well.
// Usage: rsvd_quickstart [--backend host|cuda|auto]
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <string>

#include "randnla/backends.hpp"
#include "randnla/kokkos_compat.hpp"
#include "randnla/rsvd/rsvd.hpp"

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    const std::string kind = argc > 2 && std::string(argv[1]) == "--backend" ? argv[2] : "auto";
    auto backend = randnla::make_backend(randnla::parse_enum<randnla::BackendKind>(kind, "--backend"));
    const int m = 3000, n = 2000, k = 50;
    // A = sum_i sigma_i u_i v_i^T with smooth orthogonal-ish cosine modes.
    Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace> a("A", m, n);
    double optimum2 = 0, total2 = 0;
    for (int p = 0; p < 200; ++p) {
      const double s = std::pow(p + 1.0, -1.5);
      total2 += s * s;
      if (p >= k) optimum2 += s * s;
      for (int j = 0; j < n; ++j) {
        const double vj = std::sqrt(2.0 / n) * std::cos(M_PI * (p + 0.5) * (j + 0.5) / n);
        for (int i = 0; i < m; ++i) a(i, j) += static_cast<float>(s * std::sqrt(2.0 / m) * std::cos(M_PI * (p + 0.5) * (i + 0.5) / m) * vj);
      }
    }
    randnla::Matrix<float> a_backend(*backend, m, n, "A");
    backend->copy(randnla::view_of(a), a_backend.view());
    randnla::RsvdOptions options;
    options.power_iterations = 1;
    const auto result = randnla::rsvd(*backend, a_backend, k, options);
    const auto& r = result.report;
    std::printf("randnla rsvd: %d x %d, rank %d, p = %ld, q = %d on %s\n", m, n, k, static_cast<long>(options.oversampling),
                options.power_iterations, r.backend.c_str());
    std::printf("  sketch: %s; orthonormalisers:", r.sketch_kernel.c_str());
    for (const auto& o : r.orthonormalizers) std::printf(" %s", o.c_str());
    std::printf("\n  phases: %s\n", r.phases.to_string().c_str());
    std::printf("  relative error estimate %.3e (Eckart-Young optimum %.3e)\n", r.relative_error_estimate,
                std::sqrt(optimum2 / total2));
    return r.relative_error_estimate < 3 * std::sqrt(optimum2 / total2) ? 0 : 1;
  } catch (const randnla::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
