// Very sparse random projection (Li, Hastie & Church 2006) of 100 points of dimension 20000 to
// k = 1000 dimensions: Y = S A with S's entries +-sqrt(1/(p k)) with probability p = 1/sqrt(D)
// (non-zeros 0.7 % of S, never stored), so that E||S x||^2 = ||x||^2. The Johnson-Lindenstrauss
// lemma (Dasgupta & Gupta's form) preserves every squared distance of N points within a factor
// 1 +- eps once k >= 4 ln N / (eps^2 / 2 - eps^3 / 3): for N = 100 and k = 1000, eps = 0.21.
// Exits 1 unless all 4950 pairwise squared distances are kept within that factor.
// Usage: sparse_projection
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>
#include <randnla/randnla.hpp>

#include <cmath>
#include <cstdio>

using Space = Kokkos::DefaultExecutionSpace::memory_space;
using Matrix = Kokkos::View<float**, Kokkos::LayoutLeft, Space>;

namespace {

/// The smallest eps in (0, 1) with eps^2 / 2 - eps^3 / 3 >= 4 ln(points) / k, by bisection.
double jl_distortion(int points, int k) {
  const double need = 4 * std::log(static_cast<double>(points)) / k;
  double lo = 0, hi = 1;
  for (int step = 0; step < 60; ++step) {
    const double mid = (lo + hi) / 2;
    (mid * mid / 2 - mid * mid * mid / 3 >= need ? hi : lo) = mid;
  }
  return hi;
}

/// Squared distances between the columns c < e of x, pair p = e (e - 1) / 2 + c, in FP64.
Kokkos::View<double*, Space> pair_distances(const Matrix& x) {
  const int dim = static_cast<int>(x.extent(0)), count = static_cast<int>(x.extent(1));
  Kokkos::View<double*, Space> d("distances", count * (count - 1) / 2);
  Kokkos::parallel_for("||x_c - x_e||^2", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 1}, {count, count}),
      KOKKOS_LAMBDA(int c, int e) {
        if (c >= e) return;
        double s = 0;
        for (int i = 0; i < dim; ++i) s += (static_cast<double>(x(i, c)) - x(i, e)) * (static_cast<double>(x(i, c)) - x(i, e));
        d(e * (e - 1) / 2 + c) = s;
      });
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    const int dim = 20000, points = 100, k = 1000;
    const Kokkos::DefaultExecutionSpace exec;
    Kokkos::Timer timer;
    Matrix a("A", dim, points);  // one point per column (SampleLayout::Columns, the default)
    Kokkos::Random_XorShift64_Pool<Kokkos::DefaultExecutionSpace> pool(5);
    Kokkos::parallel_for("Gaussian points", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {dim, points}),
                         KOKKOS_LAMBDA(int i, int c) {
                           auto gen = pool.get_state();
                           a(i, c) = static_cast<float>(gen.normal());
                           pool.free_state(gen);
                         });
    exec.fence();
    double setup_s = timer.seconds();

    timer.reset();
    const auto projection = randnla::sparse_sign_projection(exec, a, k);  // very sparse, isometric scaling
    exec.fence();
    const double library_s = timer.seconds();

    timer.reset();
    const auto before = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pair_distances(a));
    const auto after = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pair_distances(projection.Y));
    double lowest = 1e300, highest = 0;
    for (std::size_t p = 0; p < before.extent(0); ++p) {
      lowest = std::fmin(lowest, after(p) / before(p));
      highest = std::fmax(highest, after(p) / before(p));
    }
    const double eps = jl_distortion(points, k);
    setup_s += timer.seconds();

    const auto& report = projection.report;
    std::printf("randnla::sparse_sign_projection of %d points from %d to %d dimensions on %s\n", points, dim, k,
                report.backend.c_str());
    std::printf("  kernel %s, density %.2e, non-zeros +-%.4f, %.2f ms\n", report.kernel.c_str(), report.density,
                report.value, report.ms);
    std::printf("  squared distances kept within [%.3f, %.3f] of %zu pairs; Johnson-Lindenstrauss bound 1 +- %.3f\n",
                lowest, highest, before.extent(0), eps);
    std::printf("  time: library %.2f s, data and checks %.2f s\n", library_s, setup_s);
    return lowest >= 1 - eps && highest <= 1 + eps ? 0 : 1;
  } catch (const randnla::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
