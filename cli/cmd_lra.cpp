// randnla lra: the mixed-precision randomized LRA of a matrix file with every product variant, with
// and without refinement, side by side (time, error, the library's peak memory besides A); writes X
// and Y of the first variant asked for.
#include <cstdio>
#include <sstream>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "randnla/lra/randomized_lra.hpp"

namespace randnla {
namespace cli {
namespace {

std::vector<ProductPrecision> products_list(const std::string& text) {
  std::vector<ProductPrecision> list;
  for (const auto& item : split_list(text)) list.push_back(parse_enum<ProductPrecision>(item, "--products"));
  require(!list.empty(), "--products", "''", "names at least one variant");
  return list;
}

/// ||A - X Y^T||_F / ||A||_F on the backend.
double lra_error(Backend& b, MatrixView<const float> a, const LraResult& r) {
  const std::vector<float> ones(static_cast<std::size_t>(r.X.cols()), 1.0f);
  Matrix<float> s(b, r.X.cols(), 1, "ones");
  b.copy(MatrixView<const float>(ones.data(), r.X.cols(), 1, r.X.cols(), MemorySpace::Host), s.view());
  return exact_relative_error(b, a, r.X, s, r.Y);
}

}  // namespace

int run_lra(int argc, char** argv) {
  Options o("lra",
            "Randomized LRA A ~ X Y^T, each product variant with and without refinement; writes X.npy and Y.npy "
            "(float32) of the first variant, refined, into --output.",
            "randnla lra --input a.npy --rank 32 --products fp32,fp16 --refinements 2 --output lra-out");
  const LraOptions lib;
  o.text("input,i", std::nullopt, "matrix file: .npy (float32/64, C or Fortran order), .mtx, IDX (.gz too)")
      .required("input")
      .integer("rank,k", std::nullopt, 1, kMaxRank, "k, the rank of the approximation")
      .required("rank")
      .integer("oversampling,p", lib.oversampling, 0, kMaxRank, "p, columns: Omega has k + p columns")
      .text("products", "fp32,tf32,fp16,fp16-once,fp16-all,split",
            "comma-separated variants: fp32 | tf32 | fp16 (32|32) | fp16-once (16|32) | fp16-all (16|16) | split | "
            "split-fp16 | split-tf32 | auto",
            [](const std::string& v) { products_list(v); })
      .choice("orthonormalizer", lib.orthonormalizer, "orthonormaliser of the sketch (cholqr: FP64 Gram)")
      .integer("refinements", 1, 0, 1000, "refinement steps for the refined rows")
      .choice("refinement", lib.refinement,
              "residual: the paper's Algorithm 5, each step adds rank 2k, recompressed to k; subspace: FP32-accurate "
              "half power iterations, rank k, no m x n buffer")
      .real("tolerance", lib.tolerance, [](double t) { return t >= 0 && t < 1; }, "in [0, 1)",
            "stop refining once ||A - X Y^T||_F <= tolerance ||A||_F (relative; 0: every step)");
  if (const int status = parse_command(o, argc, argv, "lra-out"); status >= 0) return status;
  if (o.integer("refinements") == 0)
    for (const char* refining : {"refinement", "tolerance"})
      if (o.has(refining)) throw UsageError(std::string("--") + refining, o.text(refining), "has no effect with --refinements 0");
  OutputSet out(o.text("output"), {"X.npy", "Y.npy"}, o.has("force"));
  const auto variants = products_list(o.text("products"));
  auto backend = open_backend(o);
  io::DenseMatrix loaded = load_matrix(o.text("input"));
  require_nonzero(loaded, o.text("input"));
  const Matrix<float> a = to_backend(*backend, std::move(loaded));
  LraOptions opt;
  opt.oversampling = o.integer("oversampling");
  opt.seed = static_cast<std::uint64_t>(o.integer("seed"));
  opt.orthonormalizer = parse_enum<Orthonormalizer>(o.text("orthonormalizer"), "--orthonormalizer");
  const int refinements = static_cast<int>(o.integer("refinements"));
  opt.refinement = parse_enum<LraRefinement>(o.text("refinement"), "--refinement");
  opt.tolerance = o.real("tolerance");
  const index_t k = o.integer("rank");
  std::printf("rank k = %lld, oversampling p = %lld, refinement steps %d (%s, rank k)\n", static_cast<long long>(k),
              static_cast<long long>(opt.oversampling), refinements, to_string(opt.refinement));
  std::printf("%-9s %-8s %10s %12s %6s %10s\n", "products", "refined", "ms", "rel. error", "steps", "peak MiB");
  LraResult first;
  Progress progress;
  for (const ProductPrecision& p : variants)
    for (int steps : {0, refinements}) {
      opt.products = p;
      opt.refinements = steps;
      randomized_lra(*backend, a, k, opt);  // warm-up: handles, workspaces
      backend->reset_peak_memory();
      const std::size_t before = backend->memory_use().bytes;
      LraResult r = randomized_lra(*backend, a, k, opt);
      require_finite(*backend, r.X, std::string(to_string(p)) + "'s X");
      require_finite(*backend, r.Y, std::string(to_string(p)) + "'s Y");
      const double error = lra_error(*backend, a, r);
      const double peak = static_cast<double>(backend->memory_use().peak_bytes - before) / (1 << 20);
      std::printf("%-9s %-8s %10.2f %12.4e %6d %10.1f\n", to_string(p), steps ? "yes" : "no", r.report.total_ms(), error,
                  r.report.refinements, peak);
      progress(std::string(to_string(p)) + (steps ? " refined" : ""), r.report.total_ms());
      report()["result"]["variants"].push_back({{"products", to_string(p)}, {"refined", steps != 0}, {"ms", r.report.total_ms()},
                                                {"relative_error", error}, {"steps", r.report.refinements}, {"peak_mib", peak}});
      if (p == variants.front() && steps == refinements) first = std::move(r);
      if (refinements == 0) break;
    }
  save_npy(*backend, first.X, out, "X.npy");
  save_npy(*backend, first.Y, out, "Y.npy");
  out.commit();
  return 0;
}

}  // namespace cli
}  // namespace randnla
