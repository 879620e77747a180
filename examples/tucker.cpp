// Rank-(8, 6, 5) Tucker approximation of a 120 x 100 x 80 tensor by the random-projection HOSVD,
// with 5 sketch columns more than the rank per mode and one power iteration (without them, the
// sketch of a noisy tensor misses the planted subspaces: 3e-2 here with p = q = 0).
// The tensor is planted: A = G x_1 Q1 x_2 Q2 x_3 Q3 + E, with a Gaussian core G, orthonormal
// cosine (DCT-IV) factors Q_i and Gaussian noise E of ||E||_F = 1e-3 ||A - E||_F, so the best
// rank-(8, 6, 5) approximation is off by at most ||E||_F. Exits 1 unless the approximation's
// relative error ||A - core x_i Q_i||_F / ||A||_F is within 10 % of that noise level.
// Usage: tucker
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>
#include <randnla/randnla.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

using Space = Kokkos::DefaultExecutionSpace::memory_space;
using Tensor = Kokkos::View<float***, Kokkos::LayoutLeft, Space>;
using Matrix = Kokkos::View<float**, Kokkos::LayoutLeft, Space>;

namespace {

constexpr double kPi = 3.14159265358979323846;

/// The first r columns of the I x I orthonormal DCT-IV basis.
Matrix cosine_modes(int extent, int r) {
  Matrix q("Q", extent, r);
  Kokkos::parallel_for("cosine modes", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {extent, r}), KOKKOS_LAMBDA(int i, int p) {
    q(i, p) = static_cast<float>(sqrt(2.0 / extent) * cos(kPi * (p + 0.5) * (i + 0.5) / extent));
  });
  return q;
}

/// out = g x_1 q1 x_2 q2 x_3 q3 (out: q1 rows x q2 rows x q3 rows), each entry summed in FP64.
void expand(const Tensor& g, const Matrix& q1, const Matrix& q2, const Matrix& q3, const Tensor& out) {
  const int r1 = static_cast<int>(g.extent(0)), r2 = static_cast<int>(g.extent(1)), r3 = static_cast<int>(g.extent(2));
  Kokkos::parallel_for("g x_i Q_i", Kokkos::MDRangePolicy<Kokkos::Rank<3>>({0, 0, 0}, {out.extent(0), out.extent(1), out.extent(2)}),
      KOKKOS_LAMBDA(int i, int j, int l) {
        double s = 0;
        for (int c = 0; c < r3; ++c)
          for (int b = 0; b < r2; ++b) {
            double t = 0;
            for (int a = 0; a < r1; ++a) t += static_cast<double>(g(a, b, c)) * q1(i, a);
            s += t * q2(j, b) * q3(l, c);
          }
        out(i, j, l) = static_cast<float>(s);
      });
}

/// ||x||_F^2 in FP64.
double squared_norm(const Tensor& x) {
  double s = 0;
  Kokkos::parallel_reduce("||x||^2", x.size(), KOKKOS_LAMBDA(std::size_t e, double& acc) {
    acc += static_cast<double>(x.data()[e]) * x.data()[e];
  }, s);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    const int i1 = 120, i2 = 100, i3 = 80, j1 = 8, j2 = 6, j3 = 5;
    const double noise = 1e-3;
    const Kokkos::DefaultExecutionSpace exec;
    Kokkos::Timer timer;
    Tensor g("G", j1, j2, j3), a("A", i1, i2, i3), e("E", i1, i2, i3);
    Kokkos::Random_XorShift64_Pool<Kokkos::DefaultExecutionSpace> pool(11);
    Kokkos::fill_random(g, pool, -1.0f, 1.0f);
    Kokkos::parallel_for("Gaussian E", e.size(), KOKKOS_LAMBDA(std::size_t x) {
      auto gen = pool.get_state();
      e.data()[x] = static_cast<float>(gen.normal());
      pool.free_state(gen);
    });
    expand(g, cosine_modes(i1, j1), cosine_modes(i2, j2), cosine_modes(i3, j3), a);
    const float scale = static_cast<float>(noise * std::sqrt(squared_norm(a) / squared_norm(e)));
    Kokkos::parallel_for("A += E", a.size(), KOKKOS_LAMBDA(std::size_t x) { a.data()[x] += scale * e.data()[x]; });
    const double noise_level = scale * std::sqrt(squared_norm(e) / squared_norm(a));
    exec.fence();
    double setup_s = timer.seconds();

    timer.reset();
    randnla::TuckerOptions options;
    options.oversampling = 5;  // l_i = J_i + 5 sketch columns per mode, the core truncated back to J
    options.power_iterations = 1;
    const auto t = randnla::rp_hosvd(exec, a, {j1, j2, j3}, options);
    exec.fence();
    const double library_s = timer.seconds();

    timer.reset();
    Tensor x("core x_i Q_i", i1, i2, i3);
    expand(t.core, t.Q[0], t.Q[1], t.Q[2], x);
    Kokkos::parallel_for("A - X", a.size(), KOKKOS_LAMBDA(std::size_t y) { x.data()[y] -= a.data()[y]; });
    const double error = std::sqrt(squared_norm(x) / squared_norm(a));
    setup_s += timer.seconds();

    std::printf("randnla::rp_hosvd of a %d x %d x %d tensor, ranks (%d, %d, %d), on %s\n  phases: %s\n", i1, i2, i3, j1, j2,
                j3, t.report.backend.c_str(), t.report.phases.to_string().c_str());
    std::printf("  relative error %.4e; noise level ||E|| / ||A|| %.4e\n", error, noise_level);
    std::printf("  time: library %.2f s, data and checks %.2f s\n", library_s, setup_s);
    return error <= 1.1 * noise_level ? 0 : 1;
  } catch (const randnla::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
