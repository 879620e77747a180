// Rank-k LRA of an FP32 matrix of exact rank k (the test matrix of Baboulin et al. 2024), held in a
// Kokkos view on the default execution space, with A rounded to FP16 once ("16|32"): unrefined,
// refined on the residual (the paper's Algorithm 5, rank 3k recompressed to k) and refined on the
// subspace (rank k, no m x n residual). Prints each one's error and time; exits 1 unless one
// residual step gains two digits and one subspace step reaches the FP32 level (1e-6).
// Usage: lra_refinement
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>
#include <randnla/randnla.hpp>

#include <cmath>
#include <cstdio>

using Space = Kokkos::DefaultExecutionSpace::memory_space;
using Matrix = Kokkos::View<float**, Kokkos::LayoutLeft, Space>;

namespace {

/// ||A - X Y^T||_F / ||A||_F in FP64.
double relative_error(const Matrix& a, const Matrix& x, const Matrix& y) {
  const int m = static_cast<int>(a.extent(0)), n = static_cast<int>(a.extent(1)), r = static_cast<int>(x.extent(1));
  double residual = 0, norm = 0;
  Kokkos::parallel_reduce("||A - X Y^T||", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {m, n}),
      KOKKOS_LAMBDA(int i, int j, double& res, double& nrm) {
        double xy = 0;
        for (int c = 0; c < r; ++c) xy += static_cast<double>(x(i, c)) * y(j, c);
        res += (a(i, j) - xy) * (a(i, j) - xy);
        nrm += static_cast<double>(a(i, j)) * a(i, j);
      }, residual, norm);
  return std::sqrt(residual / norm);
}

/// A = G H^T with Gaussian G (m x k) and H (n x k), in FP64, rounded to FP32.
Matrix rank_k_matrix(int m, int n, int k) {
  Kokkos::View<double**, Kokkos::LayoutLeft, Space> g("G", m, k), h("H", n, k);
  Kokkos::Random_XorShift64_Pool<Kokkos::DefaultExecutionSpace> pool(7);
  Kokkos::parallel_for("Gaussian G, H", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {m + n, k}), KOKKOS_LAMBDA(int i, int c) {
    auto gen = pool.get_state();
    (i < m ? g(i, c) : h(i - m, c)) = gen.normal();
    pool.free_state(gen);
  });
  Matrix a("A", m, n);
  Kokkos::parallel_for("A = G H^T", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {m, n}), KOKKOS_LAMBDA(int i, int j) {
    double s = 0;
    for (int c = 0; c < k; ++c) s += g(i, c) * h(j, c);
    a(i, j) = static_cast<float>(s);
  });
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    const int m = 1200, n = 1000, k = 20;
    Kokkos::Timer timer;
    const Matrix a = rank_k_matrix(m, n, k);
    const Kokkos::DefaultExecutionSpace exec;
    exec.fence();
    double setup_s = timer.seconds(), library_s = 0;
    randnla::LraOptions options;
    options.products = randnla::ProductPrecision::fp16_once();
    double errors[3];
    const char* names[3] = {"unrefined", "residual-refined", "subspace-refined"};
    for (int run = 0; run < 3; ++run) {
      options.refinements = run == 0 ? 0 : 1;
      options.refinement = run == 2 ? randnla::LraRefinement::Subspace : randnla::LraRefinement::Residual;
      timer.reset();
      const auto r = randnla::randomized_lra(exec, a, k, options);
      exec.fence();
      library_s += timer.seconds();
      timer.reset();
      errors[run] = relative_error(a, r.X, r.Y);
      setup_s += timer.seconds();
      std::printf("%-17s rank %3zu  error %.3e  %s on %s\n", names[run], r.X.extent(1), errors[run],
                  r.report.phases.to_string().c_str(), r.report.backend.c_str());
    }
    std::printf("time: library %.2f s, data and checks %.2f s\n", library_s, setup_s);
    return errors[1] < errors[0] / 100 && errors[2] < 1e-6 ? 0 : 1;
  } catch (const randnla::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
