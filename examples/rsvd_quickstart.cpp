// Rank-50 randomized SVD of a 3000 x 2000 matrix with a planted spectrum, sigma_p = (p + 1)^-1.5
// for p < 100, held in a Kokkos view as an application would hold it (on the GPU in a
// CUDA-enabled Kokkos). A = U0 diag(sigma) V0^T with U0 and V0 orthonormal cosine (DCT-IV) modes,
// so the exact error of the result follows from the factors alone, and is compared with the
// Eckart-Young optimum sqrt(sum_{p >= k} sigma_p^2) / ||A||_F.
// Exits 1 unless the error is within 5 % of the optimum and sigma_1..sigma_10 within 1e-4.
// Usage: rsvd_quickstart
#include <Kokkos_Core.hpp>
#include <randnla/randnla.hpp>

#include <cmath>
#include <cstdio>

using Matrix = Kokkos::View<float**, Kokkos::LayoutLeft>;
using Values = Kokkos::View<float*>;

namespace {

constexpr double kPi = 3.14159265358979323846;

/// Column p < r of the m x m orthonormal DCT-IV basis, stored transposed (r x m: a point's modes
/// are contiguous, which the fill reads).
Matrix cosine_modes(int m, int r) {
  Matrix t("modes", r, m);
  Kokkos::parallel_for("cosine modes", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {r, m}), KOKKOS_LAMBDA(int p, int i) {
    t(p, i) = static_cast<float>(sqrt(2.0 / m) * cos(kPi * (p + 0.5) * (i + 0.5) / m));
  });
  return t;
}

/// C = X^T Y (r x k) in FP64 for X (m x r) given transposed (r x m) and Y (m x k).
Kokkos::View<double**, Kokkos::LayoutLeft> cross(const Matrix& xt, const Matrix& y) {
  const int r = static_cast<int>(xt.extent(0)), k = static_cast<int>(y.extent(1)), m = static_cast<int>(y.extent(0));
  Kokkos::View<double**, Kokkos::LayoutLeft> c("cross", r, k);
  Kokkos::parallel_for("cross", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {r, k}), KOKKOS_LAMBDA(int p, int j) {
    double s = 0;
    for (int i = 0; i < m; ++i) s += static_cast<double>(xt(p, i)) * y(i, j);
    c(p, j) = s;
  });
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    const int m = 3000, n = 2000, r = 100, k = 50;
    Kokkos::Timer timer;
    const Kokkos::DefaultExecutionSpace exec;
    const Matrix ut = cosine_modes(m, r), vt = cosine_modes(n, r);
    Values sigma("sigma", r);
    Kokkos::parallel_for("spectrum", r, KOKKOS_LAMBDA(int p) { sigma(p) = static_cast<float>(pow(p + 1.0, -1.5)); });
    Matrix a("A", m, n);
    Kokkos::parallel_for("A = U0 diag(sigma) V0^T", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {m, n}),
                         KOKKOS_LAMBDA(int i, int j) {
                           float s = 0;
                           for (int p = 0; p < r; ++p) s += ut(p, i) * sigma(p) * vt(p, j);
                           a(i, j) = s;
                         });
    exec.fence();
    double setup_s = timer.seconds();

    timer.reset();
    const auto result = randnla::rsvd(exec, a, k);  // p = 10, q = 2 power iterations by default
    exec.fence();
    const double library_s = timer.seconds();

    // ||A - U S V^T||_F^2 = ||A||^2 + ||S||^2 - 2 sum_{p,j} sigma_p (U0^T U)_pj S_j (V0^T V)_pj.
    timer.reset();
    const auto cu = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cross(ut, result.U));
    const auto cv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cross(vt, result.V));
    const auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), result.S);
    const auto planted = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sigma);
    double norm2 = 0, tail2 = 0, captured2 = 0, inner = 0, worst_leading = 0;
    for (int p = 0; p < r; ++p) {
      norm2 += static_cast<double>(planted(p)) * planted(p);
      if (p >= k) tail2 += static_cast<double>(planted(p)) * planted(p);
      for (int j = 0; j < k; ++j) inner += planted(p) * cu(p, j) * s(j) * cv(p, j);
    }
    for (int j = 0; j < k; ++j) captured2 += static_cast<double>(s(j)) * s(j);
    for (int j = 0; j < 10; ++j) worst_leading = std::fmax(worst_leading, std::fabs(s(j) - planted(j)) / planted(j));
    const double error = std::sqrt(std::fmax(norm2 + captured2 - 2 * inner, 0.0) / norm2);
    const double optimum = std::sqrt(tail2 / norm2);
    setup_s += timer.seconds();

    const auto& report = result.report;
    std::printf("randnla::rsvd of a %d x %d matrix, rank %d, on %s\n", m, n, k, report.backend.c_str());
    std::printf("  sketch: %s; phases: %s\n", report.sketch_kernel.c_str(), report.phases.to_string().c_str());
    std::printf("  relative error %.4e (estimated %.4e), Eckart-Young optimum %.4e\n", error,
                report.relative_error_estimate, optimum);
    std::printf("  sigma_1..10 worst relative error %.1e\n", worst_leading);
    std::printf("  time: library %.2f s, data and checks %.2f s\n", library_s, setup_s);
    return error <= 1.05 * optimum && worst_leading < 1e-4 ? 0 : 1;
  } catch (const randnla::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
