// Rank-k LRA of an FP32 matrix of exact rank k (the test matrix of Baboulin et al. 2024), held in a
// Kokkos view on the default execution space, with A rounded to FP16 once ("16|32"): unrefined,
// refined on the residual (the paper's Algorithm 5, rank 3k recompressed to k) and refined on the
// subspace (rank k, no m x n residual). Prints each one's error and time; exits 1 unless one
// residual step gains two digits and one subspace step reaches the FP32 level (1e-6).
// Usage: lra_refinement
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <random>

#include "randnla/randnla.hpp"

using Matrix = Kokkos::View<float**, Kokkos::LayoutLeft>;

namespace {

/// ||A - X Y^T||_F / ||A||_F in FP64 on the host.
double relative_error(const Matrix& a, const Matrix& x, const Matrix& y) {
  const auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  const auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  const auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  double residual = 0, norm = 0;
  for (std::size_t j = 0; j < ha.extent(1); ++j)
    for (std::size_t i = 0; i < ha.extent(0); ++i) {
      double xy = 0;
      for (std::size_t r = 0; r < hx.extent(1); ++r) xy += static_cast<double>(hx(i, r)) * hy(j, r);
      residual += (ha(i, j) - xy) * (ha(i, j) - xy);
      norm += static_cast<double>(ha(i, j)) * ha(i, j);
    }
  return std::sqrt(residual / norm);
}

/// A = G H^T with Gaussian G (m x k) and H (n x k), rounded to FP32.
Matrix rank_k_matrix(int m, int n, int k) {
  std::mt19937 gen(7);
  std::normal_distribution<double> normal;
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> g("G", m, k), h("H", n, k);
  for (int r = 0; r < k; ++r) {
    for (int i = 0; i < m; ++i) g(i, r) = normal(gen);
    for (int j = 0; j < n; ++j) h(j, r) = normal(gen);
  }
  Matrix a("A", m, n);
  const auto ha = Kokkos::create_mirror_view(a);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double s = 0;
      for (int r = 0; r < k; ++r) s += g(i, r) * h(j, r);
      ha(i, j) = static_cast<float>(s);
    }
  Kokkos::deep_copy(a, ha);
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    const int m = 1200, n = 1000, k = 20;
    const Matrix a = rank_k_matrix(m, n, k);
    const Kokkos::DefaultExecutionSpace exec;
    randnla::LraOptions options;
    options.products = randnla::LraProducts::FP16Once;
    double errors[3];
    const char* names[3] = {"unrefined", "residual-refined", "subspace-refined"};
    for (int run = 0; run < 3; ++run) {
      options.refinements = run == 0 ? 0 : 1;
      options.refinement = run == 2 ? randnla::LraRefinement::Subspace : randnla::LraRefinement::Residual;
      const auto r = randnla::randomized_lra(exec, a, k, options);
      errors[run] = relative_error(a, r.X, r.Y);
      std::printf("%-17s rank %3zu  error %.3e  %s on %s\n", names[run], r.X.extent(1), errors[run],
                  r.report.phases.to_string().c_str(), r.report.backend.c_str());
    }
    return errors[1] < errors[0] / 100 && errors[2] < 1e-6 ? 0 : 1;
  } catch (const randnla::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
