// randnla pca: principal components of the rows of a data matrix through RSVD, checked against
// the exact spectrum (the backend's symmetric eigensolver on the FP64 Gram matrix); writes the components, their
// singular values, a PNG grid of the leading components and a PNG plot of the spectrum.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "commands.hpp"
#include "plot.hpp"
#include "rsvd/rsvd.hpp"

namespace randnla {
namespace cli {
namespace {

constexpr const char* kFashionMnist = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";

/// Singular values of the centred data X (descending), from the eigenvalues of X^T X in FP64.
std::vector<double> exact_singular_values(Backend& b, MatrixView<const float> x) {
  const index_t n = x.cols();
  Matrix<double> xd(b, x.rows(), n, "X"), g(b, n, n, "G"), w(b, n, 1, "w");
  b.convert(x, xd.view());
  b.gemm(Op::T, Op::N, 1.0, xd, xd, 0.0, g);
  b.symmetric_eig(g, w);
  std::vector<double> s(static_cast<std::size_t>(n));
  b.copy(w.view(), MatrixView<double>(s.data(), n, 1, n, MemorySpace::Host));
  for (double& v : s) v = std::sqrt(std::max(v, 0.0));
  return s;
}

/// Image height and width of a row: --image-shape HxW, else the square root of the columns.
std::pair<int, int> image_shape(const Options& o, index_t cols) {
  if (o.has("image-shape")) {
    int h = 0, w = 0;
    require(std::sscanf(o.text("image-shape").c_str(), "%dx%d", &h, &w) == 2 && h > 0 && w > 0 && h * w == cols,
            "--image-shape", o.text("image-shape"), "must be HxW with H*W = " + std::to_string(cols));
    return {h, w};
  }
  const int side = static_cast<int>(std::lround(std::sqrt(static_cast<double>(cols))));
  return side * side == cols ? std::make_pair(side, side) : std::make_pair(0, 0);
}

}  // namespace

int run_pca(int argc, char** argv) {
  Options o;
  o.option("input", kFashionMnist, "data file, one sample per row (.npy, .mtx, IDX)")
      .option("components", "16", "number of principal components")
      .option("oversampling", "10", "p")
      .option("power-iterations", "2", "q")
      .option("sketch", "auto", "fp32 | tf32 | shgemm-fp16 | shgemm-tf32 | auto")
      .option("image-shape", "", "HxW of a sample for the component images (default: square)");
  if (!parse_command(o, argc, argv, "pca", "Principal components through RSVD; default input Fashion-MNIST (60000 x 784).",
                     "pca-out"))
    return 0;
  const std::string dir = o.text("output");
  const char* outputs[] = {"components.npy", "singular_values.npy", "components.png", "singular_values.png"};
  for (const char* f : outputs)
    if (!o.has("force") && access((dir + "/" + f).c_str(), F_OK) == 0)
      throw InvalidArgument("output", "'" + dir + "/" + f + "'", "exists; pass --force to replace it");
  auto b = open_backend(o);
  io::DenseMatrix x = load_matrix(o.text("input"));
  const index_t m = x.rows, n = x.cols, k = o.integer("components");
  require(k > 0 && k + o.integer("oversampling") <= std::min(m, n), "--components", k,
          "must be > 0 with components + oversampling <= min(rows, cols) = " + std::to_string(std::min(m, n)));
  if (x.source_type == "IDX type 0x08")
    for (float& v : x.data) v /= 255.0f;  // pixels to [0, 1]
  for (index_t j = 0; j < n; ++j) {  // centre each feature
    double mean = 0;
    for (index_t i = 0; i < m; ++i) mean += x.data[i + j * m];
    mean /= static_cast<double>(m);
    for (index_t i = 0; i < m; ++i) x.data[i + j * m] -= static_cast<float>(mean);
  }
  const Matrix<float> a = to_backend(*b, x);
  Progress progress;
  RsvdOptions opt;
  opt.oversampling = o.integer("oversampling");
  opt.power_iterations = static_cast<int>(o.integer("power-iterations"));
  opt.seed = static_cast<std::uint64_t>(o.integer("seed"));
  opt.sketch = parse_enum<SketchPrecision>(o.text("sketch"), "--sketch");
  opt.progress = [&](const std::string& phase, double ms) { progress(phase, ms); };
  const RsvdResult r = rsvd(*b, a, k, opt);
  const std::vector<double> exact = exact_singular_values(*b, a);
  progress("exact spectrum (FP64 Gram eigenvalues)", 0);

  std::vector<float> s(static_cast<std::size_t>(k));
  b->copy(r.S.view(), MatrixView<float>(s.data(), k, 1, k, MemorySpace::Host));
  double total = 0;
  for (double v : exact) total += v * v;
  std::printf("sketch: %s; p = %lld, q = %d; phases: %s\n", r.report.sketch_kernel.c_str(),
              static_cast<long long>(opt.oversampling), opt.power_iterations, r.report.phases.to_string().c_str());
  std::printf("\n  #   sigma exact   sigma rsvd   rel.diff   explained var. (exact / rsvd)   cumulative\n");
  double cum = 0;
  for (index_t i = 0; i < k; ++i) {
    const double ev_exact = exact[i] * exact[i] / total, ev = static_cast<double>(s[i]) * s[i] / total;
    cum += ev;
    std::printf("%3lld   %11.5f  %11.5f   %8.1e   %8.4f %% / %8.4f %%          %7.3f %%\n", static_cast<long long>(i + 1),
                exact[i], s[i], std::abs(s[i] - exact[i]) / exact[i], 100 * ev_exact, 100 * ev, 100 * cum);
  }
  double tail = 0;
  for (std::size_t i = static_cast<std::size_t>(k); i < exact.size(); ++i) tail += exact[i] * exact[i];
  std::printf("\nrelative error ||X - U S V^T||_F / ||X||_F = %.5e (exact); optimum (Eckart-Young) %.5e\n",
              exact_relative_error(*b, a, r.U, r.S, r.V), std::sqrt(tail / total));

  make_directory(dir);
  save_npy(*b, r.V, dir + "/components.npy", o.has("force"));
  save_npy(*b, r.S, dir + "/singular_values.npy", o.has("force"));
  const auto [h, w] = image_shape(o, n);
  if (h > 0) {
    std::vector<float> v(static_cast<std::size_t>(n * k));
    b->copy(r.V.view(), MatrixView<float>(v.data(), n, k, n, MemorySpace::Host));
    const Picture grid = image_grid(v.data(), h, w, static_cast<int>(k), 4, 4);
    io::write_file_atomically(dir + "/components.png", io::png_bytes(grid.pixels, grid.width, grid.height, 1), o.has("force"));
    std::printf("wrote %s/components.png (leading %lld components, gray = 0)\n", dir.c_str(), static_cast<long long>(k));
  }
  std::vector<double> head(exact.begin(), exact.begin() + std::min<std::size_t>(exact.size(), 4 * k));
  const Picture plot = log_plot({Series{head, 40, 80, 200, false, "exact"},
                                 Series{std::vector<double>(s.begin(), s.end()), 220, 40, 40, true, "randomized"}},
                                "singular values", 720, 420);
  io::write_file_atomically(dir + "/singular_values.png", io::png_bytes(plot.pixels, plot.width, plot.height, 3), o.has("force"));
  std::printf("wrote %s/singular_values.png (log scale: exact blue line, randomized red dots)\n", dir.c_str());
  return 0;
}

}  // namespace cli
}  // namespace randnla
