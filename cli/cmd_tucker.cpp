// randnla tucker: random-projection HOSVD of a dataset read as a tensor (Fashion-MNIST: 60000 x
// 28 x 28, images x columns x rows); writes the core and the factors, reports the relative error,
// the compression ratio and each phase's time, and draws original against reconstructed images.
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "plot.hpp"
#include "randnla/tucker/tucker.hpp"

namespace randnla {
namespace cli {
namespace {

/// "64,16,16" -> {64, 16, 16}; throws InvalidArgument naming `option` for anything else.
std::vector<index_t> integer_list(const std::string& text, const std::string& option) {
  std::vector<index_t> v;
  for (const auto& item : split_list(text)) {
    const auto x = to_integer(item);
    require(x && *x >= 1 && *x <= kMaxRank, option, text,
            "must be a comma-separated list of integers in [1, " + std::to_string(kMaxRank) + "]");
    v.push_back(static_cast<index_t>(*x));
  }
  require(v.size() <= 16, option, text, "names at most 16 extents");
  return v;
}

/// The largest tensor order a .npy input may have.
constexpr int kMaxTensorOrder = 5;

/// The extents after the first: an N-D input's own (--shape, if given, must equal them), else --shape's.
std::vector<index_t> tensor_shape(const io::DenseMatrix& input, const Options& o) {
  if (input.extents.empty()) return integer_list(o.text("shape"), "--shape");
  const std::vector<index_t> own(input.extents.begin() + 1, input.extents.end());
  if (o.has("shape"))
    require(integer_list(o.text("shape"), "--shape") == own, "--shape", o.text("shape"),
            "must be left out or equal the extents after the first of the " + std::to_string(input.extents.size()) +
                "-D input '" + o.text("input") + "'");
  return own;
}

/// Rows 0 .. count-1 of the images x h x w tensor (originals) over the same rows of the
/// reconstruction, as captioned tiles.
std::vector<Tile> comparison(const std::vector<float>& a, const std::vector<float>& x, index_t images, int h, int w, int count) {
  std::vector<Tile> tiles(static_cast<std::size_t>(2 * count));
  for (int c = 0; c < count; ++c) {
    Tile& original = tiles[static_cast<std::size_t>(c)];
    Tile& approximation = tiles[static_cast<std::size_t>(count + c)];
    original.caption = "sample " + std::to_string(c + 1);
    approximation.caption = "Tucker " + std::to_string(c + 1);
    for (int p = 0; p < h * w; ++p) {
      const std::size_t at = static_cast<std::size_t>(c + images * p);
      original.pixels.push_back(a[at]);
      approximation.pixels.push_back(x[at]);
    }
  }
  return tiles;
}

}  // namespace

int run_tucker(int argc, char** argv) {
  Options o("tucker",
            "Random-projection HOSVD of a tensor: a dataset (samples x the --shape extents) or a 3-D to 5-D .npy; writes core.npy (the "
            "core's mode-1 unfolding), Q1.npy .. QN.npy and reconstruction.png into --output.",
            "randnla tucker --shape 28,28 --ranks 64,16,16 --variant two-pass --output tucker-out");
  const TuckerOptions lib;
  auto list_check = [](const char* option) {
    return [option](const std::string& v) { integer_list(v, option); };
  };
  products_option(o, lib.products, "the sketches' and the core's products' precision");
  o.text("input,i", kFashionMnist,
         "data file: one sample per row (.npy, .mtx, IDX), or a 3-D to 5-D .npy tensor (C or Fortran order)")
      .text("shape", "28,28", "the extents the columns of each row are split into (first fastest); an N-D .npy's own",
            list_check("--shape"))
      .text("ranks", "64,16,16", "J_1,...,J_N: the core's size, the samples' mode first", list_check("--ranks"))
      .choice("variant", lib.variant, "the RP-HOSVD variant")
      .choice("orthonormalizer", lib.orthonormalizer, "orthonormaliser of each mode's sketch")
      .integer("oversampling,p", lib.oversampling, 0, kMaxRank, "p, columns: each mode is sketched with J_i + p columns, then truncated")
      .integer("power-iterations,q", lib.power_iterations, 0, kMaxPowerIterations, "q per mode (two-pass and sequential)");
  if (const int status = parse_command(o, argc, argv, "tucker-out"); status >= 0) return status;
  OutputSet out(o.text("output"), {"core.npy", "reconstruction.png"}, o.has("force"), [](const std::string& f) {
    return f.size() > 5 && f[0] == 'Q' && f.compare(f.size() - 4, 4, ".npy") == 0 &&
           f.find_first_not_of("0123456789", 1) == f.size() - 4;
  });
  auto backend = open_backend(o);
  io::DenseMatrix loaded = load_matrix(o.text("input"), kMaxTensorOrder);
  require_nonzero(loaded, o.text("input"));
  const std::vector<index_t> shape = tensor_shape(loaded, o);
  const Matrix<float> a = to_backend(*backend, std::move(loaded));
  std::vector<index_t> extents{a.rows()};
  index_t columns = 1;
  for (index_t e : shape) {
    extents.push_back(e);
    require(columns <= a.cols() / e, "--shape", o.text("shape"),
            "must split the " + std::to_string(a.cols()) + " columns of each row (its product is larger)");
    columns *= e;
  }
  require(columns == a.cols(), "--shape", o.text("shape"),
          "must split the " + std::to_string(a.cols()) + " columns of each row (its product is " +
              std::to_string(columns) + ")");
  if (extents.size() == 3) require_plots("reconstruction.png");
  TuckerOptions t;
  t.variant = parse_enum<TuckerVariant>(o.text("variant"), "--variant");
  t.products = products_of(o);
  t.oversampling = o.integer("oversampling");
  t.orthonormalizer = parse_enum<Orthonormalizer>(o.text("orthonormalizer"), "--orthonormalizer");
  t.power_iterations = static_cast<int>(o.integer("power-iterations"));
  t.seed = static_cast<std::uint64_t>(o.integer("seed"));
  Progress progress;
  t.progress = [&](const std::string& phase, double ms) { progress(phase, ms); };
  const PackedTensor x{a.data(), extents, a.space()};
  const TuckerResult r = rp_hosvd(*backend, x, integer_list(o.text("ranks"), "--ranks"), t);

  Matrix<float> approx = tucker_reconstruct(*backend, r);
  std::vector<float> ha(static_cast<std::size_t>(x.size())), hx(ha.size());
  const MatrixView<const float> am = x.matrix(1);
  backend->copy(am, MatrixView<float>(ha.data(), am.rows(), am.cols(), am.rows(), MemorySpace::Host));
  backend->copy(MatrixView<const float>(approx.data(), am.rows(), am.cols(), am.rows(), backend->memory_space()),
                MatrixView<float>(hx.data(), am.rows(), am.cols(), am.rows(), MemorySpace::Host));
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ha.size(); ++i) {
    const double d = static_cast<double>(ha[i]) - hx[i];
    num += d * d, den += static_cast<double>(ha[i]) * ha[i];
  }
  index_t stored = r.core.rows() * r.core.cols();
  std::string ranks;
  for (std::size_t n = 0; n < extents.size(); ++n) {
    stored += extents[n] * r.core_extents[n];
    ranks += (n ? " x " : "") + std::to_string(r.core_extents[n]);
  }
  std::printf("Tucker (%s, sketch %s): core %s, relative error ||A - g x_i Q_i||_F / ||A||_F = %.4e\n",
              to_string(t.variant), r.report.sketch_kernel.c_str(), ranks.c_str(), std::sqrt(num / den));
  std::printf("compression ratio %.1f (%lld elements of A, %lld in the core and the factors)\n",
              static_cast<double>(x.size()) / stored, static_cast<long long>(x.size()), static_cast<long long>(stored));
  std::printf("phases: %s\n", r.report.phases.to_string().c_str());
  report()["result"] = {{"core", r.core_extents}, {"relative_error", std::sqrt(num / den)},
                        {"compression_ratio", static_cast<double>(x.size()) / stored}, {"sketch", r.report.sketch_kernel}};

  save_npy(*backend, r.core, out, "core.npy");  // the mode-1 unfolding g_(1)
  for (std::size_t n = 0; n < r.factors.size(); ++n) save_npy(*backend, r.factors[n], out, "Q" + std::to_string(n + 1) + ".npy");
  if (extents.size() == 3) {
    const int count = static_cast<int>(std::min<index_t>(8, x.extents[0]));
    const auto tiles = comparison(ha, hx, x.extents[0], static_cast<int>(extents[2]), static_cast<int>(extents[1]), count);
    out.write("reconstruction.png", image_grid(tiles, static_cast<int>(extents[2]), static_cast<int>(extents[1]), count, 130, false));
    std::printf("reconstruction.png: top, the first %d samples; bottom, their reconstruction\n", count);
  }
  out.commit();
  return 0;
}

}  // namespace cli
}  // namespace randnla
