// PCA of Fashion-MNIST (60000 images of 28 x 28, Debian's dataset-fashion-mnist): the images read
// from the IDX file into a Kokkos view, pixels scaled to [0, 1], the ten leading principal
// components found on the view, and each component's explained variance printed.
// Checks what a component means: the components are orthonormal (|V^T V - I| < 1e-5), the
// data's variance along component i, ||X_c v_i||^2 / m with X_c the centred data, is the one
// its singular value gives, sigma_i^2 / m (sigma_i to 0.2 %: the RSVD's default two power
// iterations give real data's singular values to about 0.1 %), and the explained variances descend.
// Exits 1 otherwise.
// Usage: pca [IDX images file, gzip-compressed]
#include <Kokkos_Core.hpp>
#include <randnla/randnla.hpp>
#include <KokkosBlas3_gemm.hpp>
#include "idx_images.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

using Space = Kokkos::DefaultExecutionSpace::memory_space;
using Matrix = Kokkos::View<float**, Kokkos::LayoutLeft, Space>;
using Values = Kokkos::View<float*, Kokkos::LayoutLeft, Space>;

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    const std::string path = argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";
    const int k = 10;
    const Kokkos::DefaultExecutionSpace exec;
    Kokkos::Timer timer;
    const Pixels host = read_idx_images(path);
    const int m = static_cast<int>(host.extent(0)), n = static_cast<int>(host.extent(1));
    const auto pixels = Kokkos::create_mirror_view_and_copy(Space(), host);
    Matrix x("X", m, n);
    Kokkos::parallel_for("to [0, 1]", Kokkos::MDRangePolicy<Kokkos::Rank<2>>(exec, {0, 0}, {m, n}),
                         KOKKOS_LAMBDA(int i, int j) { x(i, j) = pixels(i, j) / 255.0f; });
    exec.fence();
    double setup_s = timer.seconds();

    timer.reset();
    const auto pca = randnla::pca(exec, x, k);  // implicit centring: X is not copied
    exec.fence();
    const double library_s = timer.seconds();

    // The variance along each component, ||X_c v_i||^2 / m with X_c v_i = X v_i - (mean . v_i), and
    // V^T V, by Kokkos Kernels' GEMM.
    timer.reset();
    const Values mean = pca.mean;
    const Matrix components = pca.components;
    Matrix xv("X V", m, k), gram("V^T V", k, k);
    KokkosBlas::gemm("N", "T", 1.0f, x, components, 0.0f, xv);
    KokkosBlas::gemm("N", "T", 1.0f, components, components, 0.0f, gram);
    Kokkos::View<double*, Space> along("variance along", k);
    Kokkos::parallel_for("||X_c v||^2 / m", Kokkos::RangePolicy<>(exec, 0, k), KOKKOS_LAMBDA(int c) {
      double shift = 0, s2 = 0;
      for (int j = 0; j < n; ++j) shift += static_cast<double>(mean(j)) * components(c, j);
      for (int i = 0; i < m; ++i) s2 += (xv(i, c) - shift) * (xv(i, c) - shift);
      along(c) = s2 / m;
    });
    const auto h_along = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), along);
    const auto h_gram = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), gram);
    const auto ratio = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pca.explained_variance_ratio);
    const auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pca.singular_values);
    setup_s += timer.seconds();

    std::printf("PCA of %s: %d images x %d pixels\n component  explained variance  cumulative  variance along it "
                "(checked)\n", path.c_str(), m, n);
    double cumulative = 0, worst_sigma = 0, worst_orthogonality = 0;
    bool descending = true;
    for (int c = 0; c < k; ++c) {
      cumulative += ratio(c);
      const double claimed = static_cast<double>(s(c)) * s(c) / m;
      worst_sigma = std::fmax(worst_sigma, std::fabs(std::sqrt(h_along(c) * m) - s(c)) / s(c));
      for (int b = 0; b < k; ++b) worst_orthogonality = std::fmax(worst_orthogonality, std::fabs(h_gram(c, b) - (b == c)));
      if (c > 0 && ratio(c) > ratio(c - 1)) descending = false;
      std::printf(" %9d  %15.2f %%  %8.2f %%  %.5f (%.5f)\n", c + 1, 100 * ratio(c), 100 * cumulative, claimed, h_along(c));
    }
    std::printf("||X_c v_i|| against sigma_i: worst relative difference %.1e; |V^T V - I| %.1e\n", worst_sigma,
                worst_orthogonality);
    std::printf("time: library %.2f s, data and checks %.2f s\n", library_s, setup_s);
    return worst_sigma < 2e-3 && worst_orthogonality < 1e-5 && descending ? 0 : 1;
  } catch (const std::exception& e) {  // randnla::Error and the reader's errors
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
