// randnla pca: principal components of the rows of a data matrix through RSVD, checked against
// the exact spectrum (the backend's symmetric eigensolver on the FP64 Gram matrix) where asked or
// where that costs less than the RSVD; writes the components, their singular values, a PNG grid of
// the leading components and a PNG plot of the spectrum.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "commands.hpp"
#include "plot.hpp"
#include "randnla/rsvd/rsvd.hpp"

namespace randnla {
namespace cli {
namespace {

/// Singular values of the centred data X (descending), from the eigenvalues of X^T X in FP64.
std::vector<double> exact_singular_values(Backend& b, MatrixView<const float> x) {
  const index_t n = x.cols();
  Matrix<double> xd(b, x.rows(), n, "X"), g(b, n, n, "G"), w(b, n, 1, "w");
  b.convert(x, xd.view());
  b.product(Op::T, Op::N, 1.0, xd, xd, 0.0, g);
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
    require(std::sscanf(o.text("image-shape").c_str(), "%dx%d", &h, &w) == 2 && h > 0 && w > 0 &&
                static_cast<long long>(h) * w == cols,
            "--image-shape", o.text("image-shape"), "must be HxW with H*W = " + std::to_string(cols));
    return {h, w};
  }
  const int side = static_cast<int>(std::lround(std::sqrt(static_cast<double>(cols))));
  return side * side == cols ? std::make_pair(side, side) : std::make_pair(0, 0);
}

/// --exact: on, off, or auto, on where the FP64 Gram matrix and its eigendecomposition
/// (2 m n^2 + ~9 n^3 flops, at about half the FP32 rate) cost fewer flops than the RSVD's products
/// (2 m n l per product, 2q + 2 of them): for Fashion-MNIST (60000 x 784, l = 26, q = 2) the exact
/// spectrum costs about ten times the RSVD, so auto leaves it out.
bool exact_spectrum_wanted(const std::string& choice, index_t m, index_t n, index_t l, int q) {
  if (choice != "auto") return choice == "on";
  const double mn = static_cast<double>(m) * static_cast<double>(n), nd = static_cast<double>(n);
  const double exact = 2.0 * (2.0 * mn * nd + 9.0 * nd * nd * nd);
  return exact <= (2.0 * q + 2.0) * 2.0 * mn * static_cast<double>(l);
}

}  // namespace

int run_pca(int argc, char** argv) {
  Options o("pca", "Principal components through RSVD; default input Fashion-MNIST (60000 x 784). Writes "
            "components.npy, singular_values.npy, components.png and singular_values.png into --output.",
            "randnla pca --rank 16 --exact on --output pca-out");
  const RsvdOptions lib;
  o.text("input,i", kFashionMnist, "data file, one sample per row (.npy, .mtx, IDX)")
      .integer("rank,k", 16, 1, kMaxRank, "k, the number of principal components")
      .integer("oversampling,p", lib.oversampling, 0, kMaxRank, "p, columns: the sketch has k + p columns")
      .integer("power-iterations,q", lib.power_iterations, 0, kMaxPowerIterations, "q: power iterations")
      .choice("sketch", lib.sketch, "the sketch's product precision")
      .choice("orthonormalizer", lib.orthonormalizer, "orthonormaliser of the sketch")
      .text("image-shape", std::nullopt, "HxW, pixels, of a sample for the component images (default: square)",
            [](const std::string& v) {
              int h = 0, w = 0;
              char tail = 0;
              require(std::sscanf(v.c_str(), "%dx%d%c", &h, &w, &tail) == 2 && h > 0 && w > 0 && h <= 65536 && w <= 65536,
                      "--image-shape", v, "must be HxW with H, W in [1, 65536]");
            })
      .text("exact", "auto",
            "compare with the exact spectrum, from the FP64 Gram matrix: on | off | auto (on where it costs fewer "
            "flops than the RSVD)",
            [](const std::string& v) { require(v == "on" || v == "off" || v == "auto", "--exact", v, "must be on, off or auto"); });
  if (const int status = parse_command(o, argc, argv, "pca-out"); status >= 0) return status;
  OutputSet out(o.text("output"), {"components.npy", "singular_values.npy", "components.png", "singular_values.png"},
                o.has("force"));
  auto b = open_backend(o);
  io::DenseMatrix x = load_matrix(o.text("input"));
  const index_t m = x.rows, n = x.cols, k = o.integer("rank");
  require(k + o.integer("oversampling") <= std::min(m, n), "--rank", k,
          "must have k + oversampling <= min(rows, cols) = " + std::to_string(std::min(m, n)));
  const auto [h, w] = image_shape(o, n);  // checked before anything is computed or written
  const float unit = x.source_type == "IDX type 0x08" ? 1.0f / 255.0f : 1.0f;  // pixels to [0, 1]
  double total = 0;  // ||X||_F^2 of the centred X: the total variance, times m
  for (index_t j = 0; j < n; ++j) {  // centre each feature, one column at a time (it stays in cache)
    float* column = x.data.data() + j * m;
    double mean = 0;
    for (index_t i = 0; i < m; ++i) mean += column[i] * unit;
    const float shift = static_cast<float>(mean / static_cast<double>(m));
    double squares = 0;
    for (index_t i = 0; i < m; ++i) {
      column[i] = column[i] * unit - shift;
      squares += static_cast<double>(column[i]) * column[i];
    }
    total += squares;
  }
  if (!(total > 0))
    throw InvalidArgument("file", "'" + o.text("input") + "'",
                          "has every sample equal (zero variance after centring): there is no principal component");
  const Matrix<float> a = to_backend(*b, std::move(x));
  Progress progress;
  RsvdOptions opt;
  opt.oversampling = o.integer("oversampling");
  opt.power_iterations = static_cast<int>(o.integer("power-iterations"));
  opt.seed = static_cast<std::uint64_t>(o.integer("seed"));
  opt.sketch = parse_enum<SketchPrecision>(o.text("sketch"), "--sketch");
  opt.orthonormalizer = parse_enum<Orthonormalizer>(o.text("orthonormalizer"), "--orthonormalizer");
  opt.progress = [&](const std::string& phase, double ms) { progress(phase, ms); };
  opt.error_probes = 0;  // the exact relative error is printed below
  const RsvdResult r = rsvd(*b, a, k, opt);
  require_finite(*b, r.S, "the singular values");
  require_finite(*b, r.V, "the components");
  const bool with_exact = exact_spectrum_wanted(o.text("exact"), m, n, k + opt.oversampling, opt.power_iterations);
  std::vector<double> exact;
  if (with_exact) {
    exact = exact_singular_values(*b, a);
    progress("exact spectrum (FP64 Gram eigenvalues)", 0);
  }

  std::vector<float> s(static_cast<std::size_t>(k));
  b->copy(r.S.view(), MatrixView<float>(s.data(), k, 1, k, MemorySpace::Host));
  std::printf("sketch: %s; p = %lld, q = %d; phases: %s\n", r.report.sketch_kernel.c_str(),
              static_cast<long long>(opt.oversampling), opt.power_iterations, r.report.phases.to_string().c_str());
  if (with_exact)
    std::printf("\n  #   sigma exact   sigma rsvd   rel.diff   explained var. (exact / rsvd)   cumulative\n");
  else
    std::printf("\n  #   sigma rsvd   explained var.   cumulative   (exact spectrum: --exact on)\n");
  report()["result"] = {{"singular_values", s}, {"total_variance", total / static_cast<double>(m)},
                        {"sketch", r.report.sketch_kernel}};
  if (with_exact) report()["result"]["exact_singular_values"] = exact;
  double cum = 0;
  for (index_t i = 0; i < k; ++i) {
    const double ev = static_cast<double>(s[i]) * s[i] / total;
    cum += ev;
    if (with_exact)
      std::printf("%3lld   %11.5f  %11.5f   %8.1e   %8.4f %% / %8.4f %%          %7.3f %%\n",
                  static_cast<long long>(i + 1), exact[i], s[i], std::abs(s[i] - exact[i]) / exact[i],
                  100 * exact[i] * exact[i] / total, 100 * ev, 100 * cum);
    else
      std::printf("%3lld  %11.5f   %8.4f %%     %7.3f %%\n", static_cast<long long>(i + 1), s[i], 100 * ev, 100 * cum);
  }
  if (with_exact) {
    std::printf("\nrelative error ||X - U S V^T||_F / ||X||_F = %.5e (exact)", exact_relative_error(*b, a, r.U, r.S, r.V));
    double tail = 0;
    for (std::size_t i = static_cast<std::size_t>(k); i < exact.size(); ++i) tail += exact[i] * exact[i];
    std::printf("; optimum (Eckart-Young) %.5e\n", std::sqrt(tail / total));
  } else {
    // U diag(S) V^T = U U^T X, an orthogonal projection: ||X - U U^T X||_F^2 = ||X||_F^2 - sum s_i^2.
    double captured = 0;
    for (float v : s) captured += static_cast<double>(v) * v;
    std::printf("\nrelative error ||X - U S V^T||_F / ||X||_F = %.4e (from ||X||_F^2 - sum s_i^2; exact: --exact on)\n",
                std::sqrt(std::max(total - captured, 0.0) / total));
  }

  save_npy(*b, r.V, out, "components.npy");
  save_npy(*b, r.S, out, "singular_values.npy");
  if (h > 0) {
    std::vector<float> v(static_cast<std::size_t>(n * k));
    b->copy(r.V.view(), MatrixView<float>(v.data(), n, k, n, MemorySpace::Host));
    const Picture grid = image_grid(v.data(), h, w, static_cast<int>(k), 4, 4);
    out.write("components.png", io::png_bytes(grid.pixels, grid.width, grid.height, 1));
  }
  std::vector<Series> series{Series{std::vector<double>(s.begin(), s.end()), 220, 40, 40, true, "randomized"}};
  if (with_exact)
    series.insert(series.begin(), Series{std::vector<double>(exact.begin(), exact.begin() + std::min<std::size_t>(
                                                                                              exact.size(), 4 * k)),
                                         40, 80, 200, false, "exact"});
  const Picture plot = log_plot(series, "singular values", 720, 420);
  out.write("singular_values.png", io::png_bytes(plot.pixels, plot.width, plot.height, 3));
  out.commit();
  std::printf("components.png: the leading %lld components, gray = 0; singular_values.png: log scale, %srandomized red dots\n",
              static_cast<long long>(k), with_exact ? "exact blue line, " : "");
  return 0;
}

}  // namespace cli
}  // namespace randnla
