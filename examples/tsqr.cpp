// QR factorisation of a tall-skinny 200000 x 32 matrix by the TSQR reduction tree. A is planted,
// A = U0 diag(d) with U0 orthonormal cosine (DCT-IV) columns and d_j = 10^(-6 j / 31) (condition
// number 1e6), so R is known up to the signs of its rows: |R| = diag(d). Exits 1 unless
// || |R| - diag(d) ||_F / ||d|| < 1e-5, ||A - Q R||_F / ||A||_F < 1e-5 and ||Q^T Q - I||_F < 1e-5.
// Usage: tsqr
#include <Kokkos_Core.hpp>
#include <KokkosBlas3_gemm.hpp>
#include <randnla/randnla.hpp>

#include <cmath>
#include <cstdio>

using Space = Kokkos::DefaultExecutionSpace::memory_space;
using Matrix = Kokkos::View<float**, Kokkos::LayoutLeft, Space>;

namespace {

constexpr double kPi = 3.14159265358979323846;

/// ||x - y||_F / ||y||_F in FP64, for x and y of the same extents (y = 0: ||x||_F).
double relative_difference(const Matrix& x, const Matrix& y, bool relative = true) {
  double diff = 0, norm = 0;
  Kokkos::parallel_reduce("||x - y||", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {x.extent(0), x.extent(1)}),
      KOKKOS_LAMBDA(int i, int j, double& d, double& nrm) {
        d += (static_cast<double>(x(i, j)) - y(i, j)) * (static_cast<double>(x(i, j)) - y(i, j));
        nrm += static_cast<double>(y(i, j)) * y(i, j);
      }, diff, norm);
  return std::sqrt(relative ? diff / norm : diff);
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    const int m = 200000, n = 32;
    const Kokkos::DefaultExecutionSpace exec;
    Kokkos::Timer timer;
    Matrix a("A", m, n), d("diag(d)", n, n);
    Kokkos::parallel_for("A = U0 diag(d)", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {m, n}), KOKKOS_LAMBDA(int i, int j) {
      const double dj = pow(10.0, -6.0 * j / (n - 1));
      a(i, j) = static_cast<float>(dj * sqrt(2.0 / m) * cos(kPi * (j + 0.5) * (i + 0.5) / m));
      if (i < n) d(i, j) = i == j ? static_cast<float>(dj) : 0.0f;
    });
    exec.fence();
    double setup_s = timer.seconds();

    timer.reset();
    const auto qr = randnla::tsqr(exec, a);  // Q formed (options.form_q), FP32 Householder blocks
    exec.fence();
    const double library_s = timer.seconds();

    timer.reset();
    const Matrix r = qr.R, q = qr.Q;
    Matrix abs_r("|R|", n, n), qr_product("Q R", m, n), gram("Q^T Q", n, n), identity("I", n, n);
    Kokkos::parallel_for("|R|, I", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {n, n}), KOKKOS_LAMBDA(int i, int j) {
      abs_r(i, j) = fabs(r(i, j));
      identity(i, j) = i == j ? 1.0f : 0.0f;
    });
    KokkosBlas::gemm("N", "N", 1.0f, q, r, 0.0f, qr_product);
    KokkosBlas::gemm("T", "N", 1.0f, q, q, 0.0f, gram);
    const double r_error = relative_difference(abs_r, d), residual = relative_difference(qr_product, a),
                 orthogonality = relative_difference(gram, identity, false);
    setup_s += timer.seconds();

    std::printf("randnla::tsqr of a %d x %d matrix on %s: %d levels, %lld leaves, %s\n", m, n, qr.report.backend.c_str(),
                qr.report.levels, static_cast<long long>(qr.report.leaves), qr.report.blocks.c_str());
    std::printf("  || |R| - diag(d) || / ||d|| %.2e; ||A - Q R|| / ||A|| %.2e; ||Q^T Q - I|| %.2e\n", r_error, residual,
                orthogonality);
    std::printf("  time: library %.2f s, data and checks %.2f s\n", library_s, setup_s);
    return r_error < 1e-5 && residual < 1e-5 && orthogonality < 1e-5 ? 0 : 1;
  } catch (const randnla::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
