// PCA of Fashion-MNIST (60000 images of 28 x 28, Debian's dataset-fashion-mnist) through the
// library: read, centre, rank-10 RSVD, explained variance of each component.
// Usage: pca [IDX images file]
#include <Kokkos_Core.hpp>

#include <cstdio>

#include "randnla/backends.hpp"
#include "io/matrix_io.hpp"
#include "randnla/rsvd/rsvd.hpp"

using namespace randnla;

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  io::DenseMatrix x = io::read_matrix(argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz");
  const index_t m = x.rows, n = x.cols, k = 10;
  double total = 0;
  for (index_t j = 0; j < n; ++j) {  // centre each pixel over the images, in [0, 1] units
    double mean = 0;
    for (index_t i = 0; i < m; ++i) mean += x.data[i + j * m] / 255.0;
    for (index_t i = 0; i < m; ++i) {
      float& v = x.data[i + j * m];
      v = static_cast<float>(v / 255.0 - mean / m);
      total += static_cast<double>(v) * v;
    }
  }
  auto b = make_backend(BackendKind::Auto);
  Matrix<float> a(*b, m, n);
  b->copy(MatrixView<const float>(x.data.data(), m, n, m, MemorySpace::Host), a.view());
  RsvdOptions o;
  o.power_iterations = 2;
  const RsvdResult r = rsvd(*b, a, k, o);
  std::vector<float> s(k);
  b->copy(r.S.view(), MatrixView<float>(s.data(), k, 1, k, MemorySpace::Host));
  std::printf("Fashion-MNIST %lld x %lld on %s\ncomponent  explained variance\n", static_cast<long long>(m),
              static_cast<long long>(n), b->description().c_str());
  double cum = 0;
  for (index_t i = 0; i < k; ++i) {
    cum += s[i] * s[i] / total;
    std::printf("%9lld  %6.2f %%  (cumulative %6.2f %%)\n", static_cast<long long>(i + 1), 100 * s[i] * s[i] / total, 100 * cum);
  }
  return cum > 0.5 && cum < 1.0 ? 0 : 1;  // ten components of Fashion-MNIST explain about 72 %
}
