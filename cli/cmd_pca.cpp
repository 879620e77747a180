// randnla pca: principal components of the rows of a data matrix (randnla::pca), checked against
// the exact spectrum (the backend's symmetric eigensolver on the FP64 Gram matrix of the centred
// data) where asked or where that costs less than the RSVD; writes scikit-learn-shaped .npy files
// (components k x n, 1-D singular values, mean, explained variance and its ratio), a PNG grid of
// the leading components and a PNG plot of the spectrum.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "commands.hpp"
#include "plot.hpp"
#include "randnla/pca/pca.hpp"
#include "randnla/sparse/sparse_rsvd.hpp"

namespace randnla {
namespace cli {
namespace {

/// Singular values of the centred data X - 1 mu^T (descending), from the eigenvalues of its Gram
/// matrix X^T X - m mu mu^T, all in FP64 (mu the FP64 column means).
std::vector<double> exact_singular_values(Backend& b, MatrixView<const float> x) {
  const index_t m = x.rows(), n = x.cols();
  Matrix<double> xd(b, m, n, "X"), ones(b, m, 1, "1"), mean(b, n, 1, "mu"), g(b, n, n, "G"), w(b, n, 1, "w");
  const std::vector<double> host_ones(static_cast<std::size_t>(m), 1.0);
  b.copy(MatrixView<const double>(host_ones.data(), m, 1, m, MemorySpace::Host), ones.view());
  b.convert(x, xd.view());
  b.product(Op::T, Op::N, 1.0 / static_cast<double>(m), xd, ones, 0.0, mean);
  b.product(Op::T, Op::N, 1.0, xd, xd, 0.0, g);
  b.product(Op::N, Op::T, -static_cast<double>(m), mean, mean, 1.0, g);
  b.symmetric_eig(g, w);
  std::vector<double> s(static_cast<std::size_t>(n));
  b.copy(w.view(), MatrixView<double>(s.data(), n, 1, n, MemorySpace::Host));
  for (double& v : s) v = std::sqrt(std::max(v, 0.0));
  return s;
}

/// A backend column (size x 1) on the host.
std::vector<float> host_column(Backend& b, MatrixView<const float> c) {
  std::vector<float> h(static_cast<std::size_t>(c.rows()));
  b.copy(c, MatrixView<float>(h.data(), c.rows(), 1, std::max<index_t>(c.rows(), 1), MemorySpace::Host));
  return h;
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
/// (2 `entries` l per product, 2q + 2 of them; entries = m n dense, nnz sparse): for Fashion-MNIST
/// (60000 x 784, l = 26, q = 2) the exact spectrum costs about ten times the RSVD, so auto leaves it out.
bool exact_spectrum_wanted(const std::string& choice, index_t m, index_t n, index_t entries, index_t l, int q) {
  if (choice != "auto") return choice == "on";
  const double mn = static_cast<double>(m) * static_cast<double>(n), nd = static_cast<double>(n);
  const double exact = 2.0 * (2.0 * mn * nd + 9.0 * nd * nd * nd);
  return exact <= (2.0 * q + 2.0) * 2.0 * static_cast<double>(entries) * static_cast<double>(l);
}

/// The CSR matrix `a` as a dense matrix in b's memory (for the exact spectrum only): refused, naming
/// the memory, where m n elements exceed what the readers accept.
Matrix<float> densified(Backend& b, const io::SparseMatrix& a) {
  if (a.cols != 0 && a.rows > io::kMaxElements / a.cols)
    throw InvalidArgument("--exact", "on", "needs X dense, " + std::to_string(a.rows) + " x " + std::to_string(a.cols) +
                                               " (" + std::to_string(4.0 * static_cast<double>(a.rows) * static_cast<double>(a.cols) / 1e9) +
                                               " GB): too large; use --exact off");
  io::DenseMatrix d;
  d.rows = a.rows, d.cols = a.cols;
  d.data.assign(static_cast<std::size_t>(a.rows * a.cols), 0.0f);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int32_t e = a.row_ptr[static_cast<std::size_t>(i)]; e < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++e)
      d.data[static_cast<std::size_t>(i + a.rows * a.col_idx[static_cast<std::size_t>(e)])] = a.values[static_cast<std::size_t>(e)];
  return to_backend(b, std::move(d));
}

}  // namespace

int run_pca(int argc, char** argv) {
  Options o("pca", "Principal components (randnla::pca); default input Fashion-MNIST (60000 x 784). Writes "
            "components.npy (k x n), singular_values.npy, mean.npy, explained_variance.npy, "
            "explained_variance_ratio.npy (scikit-learn's PCA attributes), components.png and singular_values.png "
            "into --output.",
            "randnla pca --rank 16 --exact on --output pca-out");
  const PcaOptions lib;
  products_option(o, lib.products, "the products' precision (split-fp16: SHGEMM with Omega in FP16)");
  o.text("input,i", kFashionMnist, "data file, one sample per row (.npy, .mtx and scipy.sparse .npz: coordinate and .npz files kept sparse and centred implicitly, IDX)")
      .integer("rank,k", 16, 1, kMaxRank, "k, the number of principal components")
      .integer("oversampling,p", lib.oversampling, 0, kMaxRank, "p, columns: the sketch has k + p columns")
      .integer("power-iterations,q", lib.power_iterations, 0, kMaxPowerIterations, "q: power iterations")
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
  OutputSet out(o.text("output"),
                {"components.npy", "singular_values.npy", "mean.npy", "explained_variance.npy",
                 "explained_variance_ratio.npy", "components.png", "singular_values.png"},
                o.has("force"));
  require_plots("components.png and singular_values.png");
  auto b = open_backend(o);
  const InputMatrix x = load_input(*b, o.text("input"));
  const index_t m = x.rows, n = x.cols, k = o.integer("rank");
  require(k + o.integer("oversampling") <= std::min(m, n), "--rank", k,
          "must have k + oversampling <= min(rows, cols) = " + std::to_string(std::min(m, n)));
  const auto [h, w] = image_shape(o, n);  // checked before anything is computed or written
  // Pixels to [0, 1], as scikit-learn users divide by 255.
  if (x.source_type == "IDX type 0x08") b->scale(1.0f / 255.0f, x.dense.view());
  Progress progress;
  PcaOptions opt;
  opt.oversampling = o.integer("oversampling");
  opt.power_iterations = static_cast<int>(o.integer("power-iterations"));
  opt.seed = static_cast<std::uint64_t>(o.integer("seed"));
  opt.products = products_of(o);
  opt.orthonormalizer = parse_enum<Orthonormalizer>(o.text("orthonormalizer"), "--orthonormalizer");
  opt.progress = [&](const std::string& phase, double ms) { progress(phase, ms); };
  const PcaResult r = x.sparse() ? pca(*b, x.csr->view, k, opt) : pca(*b, x.dense, k, opt);
  require_finite(*b, r.singular_values, "the singular values");
  require_finite(*b, r.components, "the components");
  const bool with_exact = exact_spectrum_wanted(o.text("exact"), m, n, x.sparse() ? x.csr->view.nnz : m * n,
                                                k + opt.oversampling, opt.power_iterations);
  std::vector<double> exact;
  if (with_exact) {
    exact = exact_singular_values(*b, x.sparse() ? densified(*b, *x.host_csr) : x.dense);
    progress("exact spectrum (FP64 Gram eigenvalues)", 0);
  }

  const std::vector<float> s = host_column(*b, r.singular_values), ratio = host_column(*b, r.explained_variance_ratio);
  const double total = r.total_variance * static_cast<double>(m - 1);  // ||X - 1 mu^T||_F^2
  std::printf("sketch: %s; p = %lld, q = %d; phases: %s\n", r.report.sketch_kernel.c_str(),
              static_cast<long long>(opt.oversampling), opt.power_iterations, r.report.phases.to_string().c_str());
  if (with_exact)
    std::printf("\n  #   sigma exact   sigma rsvd   rel.diff   explained var. (exact / rsvd)   cumulative\n");
  else
    std::printf("\n  #   sigma rsvd   explained var.   cumulative   (exact spectrum: --exact on)\n");
  report()["result"] = {{"singular_values", s}, {"explained_variance_ratio", ratio},
                        {"total_variance", r.total_variance}, {"sketch", r.report.sketch_kernel}};
  if (with_exact) report()["result"]["exact_singular_values"] = exact;
  double cum = 0;
  for (index_t i = 0; i < k; ++i) {
    cum += ratio[i];
    if (with_exact)
      std::printf("%3lld   %11.5f  %11.5f   %8.1e   %8.4f %% / %8.4f %%          %7.3f %%\n",
                  static_cast<long long>(i + 1), exact[i], s[i], std::abs(s[i] - exact[i]) / exact[i],
                  100 * exact[i] * exact[i] / total, 100 * ratio[i], 100 * cum);
    else
      std::printf("%3lld  %11.5f   %8.4f %%     %7.3f %%\n", static_cast<long long>(i + 1), s[i], 100 * ratio[i], 100 * cum);
  }
  // U diag(S) V^T = U U^T Xc, an orthogonal projection: ||Xc - U U^T Xc||_F^2 = ||Xc||_F^2 - sum s_i^2.
  std::printf("\nrelative error ||Xc - U S V^T||_F / ||Xc||_F = %.5e (Xc = X - 1 mu^T; from ||Xc||_F^2 - sum s_i^2)",
              r.report.relative_error_estimate);
  if (with_exact) {
    double tail = 0;
    for (std::size_t i = static_cast<std::size_t>(k); i < exact.size(); ++i) tail += exact[i] * exact[i];
    std::printf("; optimum (Eckart-Young) %.5e", std::sqrt(tail / total));
  }
  std::printf("\n");

  save_npy(*b, r.components, out, "components.npy");
  save_npy_vector(*b, r.singular_values, out, "singular_values.npy");
  save_npy_vector(*b, r.mean, out, "mean.npy");
  save_npy_vector(*b, r.explained_variance, out, "explained_variance.npy");
  save_npy_vector(*b, r.explained_variance_ratio, out, "explained_variance_ratio.npy");
  if (h > 0) {
    std::vector<float> v(static_cast<std::size_t>(n * k));  // the components as columns, one image each
    Matrix<float> columns(*b, n, k, "V");
    b->transpose(r.components, columns.view());
    b->copy(columns.view(), MatrixView<float>(v.data(), n, k, n, MemorySpace::Host));
    std::vector<Tile> tiles;
    for (index_t c = 0; c < k; ++c) {
      char caption[64];
      std::snprintf(caption, sizeof caption, "PC %lld: %.2f %%", static_cast<long long>(c + 1), 100.0 * ratio[c]);
      tiles.push_back({std::vector<float>(v.begin() + c * n, v.begin() + (c + 1) * n), caption});
    }
    out.write("components.png", image_grid(tiles, h, w, 4, 180, true));
  }
  std::vector<Series> series{Series{std::vector<double>(s.begin(), s.end()), 220, 40, 40, true, "randomized"}};
  if (with_exact)
    series.insert(series.begin(), Series{std::vector<double>(exact.begin(), exact.begin() + std::min<std::size_t>(
                                                                                              exact.size(), 4 * k)),
                                         40, 80, 200, false, "exact"});
  out.write("singular_values.png",
            log_plot(series, "singular values of the centred data", "component index", "singular value", 720, 420));
  out.commit();
  std::printf("components.png: the leading %lld components, white = 0, with their explained variance; "
              "singular_values.png: log scale, %srandomized red circles\n",
              static_cast<long long>(k), with_exact ? "exact blue line, " : "");
  return 0;
}

}  // namespace cli
}  // namespace randnla
