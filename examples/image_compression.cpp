// Compresses a photograph (scikit-image's "camera", 512 x 512, shipped in Debian's python3-skimage)
// by rank-k RSVD and reports the PSNR at several ranks; writes the rank-50 image next to it.
// Usage: image_compression PHOTO.png [OUTPUT.png]
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "randnla/backends.hpp"
#include "io/matrix_io.hpp"
#include "randnla/rsvd/rsvd.hpp"

using namespace randnla;

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  if (argc < 2) return std::fprintf(stderr, "usage: image_compression PHOTO.png [OUTPUT.png]\n"), 2;
  const io::DenseMatrix img = io::read_png_gray(argv[1]);
  const index_t m = img.rows, n = img.cols;
  auto b = make_backend(BackendKind::Auto);
  Matrix<float> a(*b, m, n);
  b->copy(MatrixView<const float>(img.data.data(), m, n, m, MemorySpace::Host), a.view());
  std::printf("%s: %lld x %lld on %s\n  rank   storage   PSNR (dB)\n", argv[1], static_cast<long long>(m),
              static_cast<long long>(n), b->description().c_str());
  double psnr_prev = 0;
  for (index_t k : {5, 10, 20, 50, 100}) {
    RsvdOptions o;
    o.power_iterations = 2;
    const RsvdResult r = rsvd(*b, a, k, o);
    // Reconstruction X = U diag(S) V^T, on the backend, then back to the host.
    Matrix<float> us(*b, m, k), x(*b, m, n);
    b->copy(r.U.view(), us.view());
    b->scale_columns(r.S, us.view());
    b->product(Op::N, Op::T, 1.0f, us, r.V, 0.0f, x, ProductPrecision::fp32());
    std::vector<float> h(static_cast<std::size_t>(m * n));
    b->copy(x.view(), MatrixView<float>(h.data(), m, n, m, MemorySpace::Host));
    double mse = 0;
    for (std::size_t e = 0; e < h.size(); ++e) {
      const double d = std::clamp(h[e], 0.0f, 255.0f) - img.data[e];
      mse += d * d;
    }
    const double psnr = 10 * std::log10(255.0 * 255.0 / (mse / static_cast<double>(h.size())));
    std::printf("  %4lld   %5.1f %%   %6.2f\n", static_cast<long long>(k), 100.0 * k * (m + n + 1) / (m * n), psnr);
    if (psnr <= psnr_prev) return std::fprintf(stderr, "PSNR did not grow with the rank\n"), 1;
    psnr_prev = psnr;
    if (k == 50 && argc > 2) {
      std::vector<std::uint8_t> px(static_cast<std::size_t>(m * n));
      for (index_t i = 0; i < m; ++i)
        for (index_t j = 0; j < n; ++j) px[i * n + j] = static_cast<std::uint8_t>(std::lround(std::clamp(h[i + j * m], 0.0f, 255.0f)));
      io::write_file_atomically(argv[2], io::png_bytes(px, static_cast<int>(n), static_cast<int>(m), 1), true);
      std::printf("  wrote %s (rank 50)\n", argv[2]);
    }
  }
  return psnr_prev > 30 ? 0 : 1;
}
