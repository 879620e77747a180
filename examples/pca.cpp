// PCA of Fashion-MNIST (60000 images of 28 x 28, Debian's dataset-fashion-mnist) through the
// library: read, scale the pixels to [0, 1], randnla::pca (centred implicitly, no copy of X),
// the explained variance of each component.
// Usage: pca [IDX images file]
#include <Kokkos_Core.hpp>

#include <cstdio>

#include "io/matrix_io.hpp"
#include "pca/pca.hpp"
#include "randnla/backends.hpp"

using namespace randnla;

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  io::DenseMatrix x = io::read_matrix(argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz");
  const index_t m = x.rows, n = x.cols, k = 10;
  auto b = make_backend(BackendKind::Auto);
  Matrix<float> a(*b, m, n);
  b->copy(MatrixView<const float>(x.data.data(), m, n, m, MemorySpace::Host), a.view());
  b->scale(1.0f / 255.0f, a.view());
  const PcaResult r = pca(*b, a, k);
  std::vector<float> ratio(k);
  b->copy(r.explained_variance_ratio.view(), MatrixView<float>(ratio.data(), k, 1, k, MemorySpace::Host));
  std::printf("Fashion-MNIST %lld x %lld on %s\ncomponent  explained variance\n", static_cast<long long>(m),
              static_cast<long long>(n), b->description().c_str());
  double cum = 0;
  for (index_t i = 0; i < k; ++i) {
    cum += ratio[i];
    std::printf("%9lld  %6.2f %%  (cumulative %6.2f %%)\n", static_cast<long long>(i + 1), 100 * ratio[i], 100 * cum);
  }
  return cum > 0.5 && cum < 1.0 ? 0 : 1;  // ten components of Fashion-MNIST explain about 72 %
}
