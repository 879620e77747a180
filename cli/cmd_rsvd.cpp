// randnla rsvd: rank-k (or fixed-accuracy) randomized SVD of a matrix file; writes U, S, V.
#include <cstdio>

#include "commands.hpp"
#include "rsvd/rsvd.hpp"

namespace randnla {
namespace cli {
namespace {

void print_report(const RsvdReport& r) {
  std::printf("sketch: %s\northonormalisers:", r.sketch_kernel.c_str());
  for (const auto& o : r.orthonormalizers) std::printf(" %s", o.c_str());
  std::printf("\nphases: %s\n", r.phases.to_string().c_str());
}

}  // namespace

int run_rsvd(int argc, char** argv) {
  Options o;
  o.option("input", "", "matrix file: .npy (float32/64, C or Fortran order), .mtx, IDX (.gz too)")
      .option("rank", "", "k, the rank of the approximation (or give --tolerance)")
      .option("oversampling", "10", "p: the sketch has k + p columns")
      .option("power-iterations", "2", "q: power iterations (A A^T)^q A (0 for the fastest, least accurate)")
      .option("sketch", "auto", "fp32 | tf32 | shgemm-fp16 | shgemm-tf32 | auto")
      .option("sketch-operator", "gaussian", "gaussian | sparse-sign (very sparse, never stored; fixed rank only)")
      .option("orthonormalizer", "auto", "householder | cholqr | cholqr2 | scholqr3 | auto (cholqr passes until orthonormal to FP32; one pass between power-iteration products)")
      .option("svd", "auto", "small SVD: gesvd | gesdd | jacobi | polar (GPU) | gram | auto (= gram)")
      .option("tolerance", "", "fixed-accuracy mode: grow the rank until ||A - U S V^T||_F <= tol ||A||_F")
      .option("block-size", "32", "fixed-accuracy mode: columns added per step");
  if (!parse_command(o, argc, argv, "rsvd", "Randomized SVD A ~ U diag(S) V^T; writes U.npy, S.npy, V.npy (float32).",
                     "rsvd-out"))
    return 0;
  require(o.has("input"), "--input", "(missing)", "is required");
  require(o.has("rank") != o.has("tolerance"), "--rank/--tolerance", "both or neither", "give exactly one");
  const std::string dir = o.text("output");
  require_new_outputs(dir, {"U.npy", "S.npy", "V.npy"}, o.has("force"));
  auto backend = open_backend(o);
  const Matrix<float> a = to_backend(*backend, load_matrix(o.text("input")));
  Progress progress;
  RsvdResult r;
  if (o.has("rank")) {
    RsvdOptions opt;
    opt.oversampling = o.integer("oversampling");
    opt.power_iterations = static_cast<int>(o.integer("power-iterations"));
    opt.seed = static_cast<std::uint64_t>(o.integer("seed"));
    opt.sketch = parse_enum<SketchPrecision>(o.text("sketch"), "--sketch");
    opt.sketch_operator = parse_enum<SketchOperator>(o.text("sketch-operator"), "--sketch-operator");
    opt.orthonormalizer = parse_enum<Orthonormalizer>(o.text("orthonormalizer"), "--orthonormalizer");
    opt.small_svd = parse_enum<SmallSvd>(o.text("svd"), "--svd");
    opt.progress = [&](const std::string& phase, double ms) { progress(phase, ms); };
    r = rsvd(*backend, a, o.integer("rank"), opt);
    std::printf("rank k = %lld, oversampling p = %lld, power iterations q = %d\n",
                static_cast<long long>(o.integer("rank")), static_cast<long long>(opt.oversampling), opt.power_iterations);
  } else {
    FixedAccuracyOptions opt;
    opt.tolerance = o.real("tolerance");
    opt.block_size = o.integer("block-size");
    opt.power_iterations = static_cast<int>(o.integer("power-iterations"));
    opt.seed = static_cast<std::uint64_t>(o.integer("seed"));
    opt.sketch = parse_enum<SketchPrecision>(o.text("sketch"), "--sketch");
    opt.small_svd = parse_enum<SmallSvd>(o.text("svd"), "--svd");
    r = rsvd_fixed_accuracy(*backend, a, opt);
    std::printf("fixed accuracy: tolerance %.2e reached at rank %lld\n", opt.tolerance, static_cast<long long>(r.S.rows()));
  }
  print_report(r.report);
  if (a.rows() * a.cols() <= (std::int64_t(1) << 28))
    std::printf("relative error ||A - U S V^T||_F / ||A||_F = %.4e (exact)\n", exact_relative_error(*backend, a, r.U, r.S, r.V));
  else
    std::printf("relative error ||A - U S V^T||_F / ||A||_F ~ %.4e (estimated)\n", r.report.relative_error_estimate);
  make_directory(dir);
  save_npy(*backend, r.U, dir + "/U.npy", o.has("force"));
  save_npy(*backend, r.S, dir + "/S.npy", o.has("force"));
  save_npy(*backend, r.V, dir + "/V.npy", o.has("force"));
  return 0;
}

}  // namespace cli
}  // namespace randnla
