// randnla rsvd: rank-k (or fixed-accuracy) randomized SVD of a matrix file; writes U, S, V.
#include <algorithm>
#include <cstdio>
#include <utility>

#include "commands.hpp"
#include "randnla/rsvd/rsvd.hpp"
#include "randnla/sparse/sparse_rsvd.hpp"

namespace randnla {
namespace cli {
namespace {

void print_report(const RsvdReport& r) {
  std::printf("sketch: %s\northonormalisers:", r.sketch_kernel.c_str());
  for (const auto& o : r.orthonormalizers) std::printf(" %s", o.c_str());
  std::printf("\nphases: %s\n", r.phases.to_string().c_str());
}

/// Refuses a result with NaN/Inf, prints the report and records it with its singular values and
/// working precision ("single": FP32 data and factors; "double": FP64).
template <class T>
void report_result(Backend& b, const RsvdResultOf<T>& r, const char* precision) {
  require_finite(b, r.S, "S");
  require_finite(b, r.U, "U");
  require_finite(b, r.V, "V");
  std::printf("working precision: %s\n", std::string(precision) == "double" ? "FP64 (data and factors; the sketch in FP32)"
                                                                            : "FP32");
  print_report(r.report);
  std::vector<T> s(static_cast<std::size_t>(r.S.rows()));
  b.copy(r.S.view(), MatrixView<T>(s.data(), r.S.rows(), 1, std::max<index_t>(r.S.rows(), 1), MemorySpace::Host));
  report()["result"] = {{"rank", r.S.rows()}, {"singular_values", s}, {"sketch", r.report.sketch_kernel},
                        {"orthonormalizers", r.report.orthonormalizers}, {"precision", precision}};
}

void report_error(double e, bool exact) {
  report()["result"][exact ? "relative_error" : "relative_error_estimate"] = e;
  std::printf("relative error ||A - U S V^T||_F / ||A||_F %s %.4e (%s)\n", exact ? "=" : "~", e,
              exact ? "exact" : "estimated");
}

template <class T>
void save_factors(Backend& b, const RsvdResultOf<T>& r, OutputSet& out) {
  save_npy(b, r.U, out, "U.npy");
  save_npy(b, r.S, out, "S.npy");
  save_npy(b, r.V, out, "V.npy");
  out.commit();
}

/// --precision double: A kept in FP64 (rsvd of FP64 data), U, S and V written as float64; the exact
/// error where A is at most 2^28 entries, as in FP32.
int rsvd_in_fp64(Backend& b, const std::string& path, index_t k, const RsvdOptions& opt, OutputSet& out) {
  const Matrix<double> a = load_input_fp64(b, path);
  const RsvdResultOf<double> r = rsvd(b, MatrixView<const double>(a.view()), k, opt);
  std::printf("rank k = %lld, oversampling p = %lld, power iterations q = %d\n", static_cast<long long>(k),
              static_cast<long long>(opt.oversampling), opt.power_iterations);
  report_result(b, r, "double");
  const bool exact = a.rows() * a.cols() <= (std::int64_t(1) << 28);
  report_error(exact ? exact_relative_error(b, a.view(), r.U, r.S, r.V) : r.report.relative_error_estimate, exact);
  save_factors(b, r, out);
  return 0;
}

}  // namespace

int run_rsvd(int argc, char** argv) {
  Options o("rsvd", "Randomized SVD A ~ U diag(S) V^T; writes U.npy, S.npy, V.npy (float32; float64 with --precision double) into --output.",
            "randnla rsvd --input a.npy --rank 10 --power-iterations 2 --output rsvd-out");
  const RsvdOptions lib;
  const FixedAccuracyOptions fixed;
  products_option(o, lib.products, "the products' precision (split-fp16: SHGEMM with Omega in FP16)");
  o.text("input,i", std::nullopt, "matrix file: .npy (float32/64, C or Fortran order), .mtx (coordinate files kept sparse: CSR), scipy.sparse .npz (kept sparse), IDX (.gz too)")
      .required("input")
      .integer("rank,k", std::nullopt, 1, kMaxRank, "k, the rank of the approximation (or give --tolerance)")
      .integer("oversampling,p", lib.oversampling, 0, kMaxRank, "p, columns: the sketch has k + p columns")
      .integer("power-iterations,q", lib.power_iterations, 0, kMaxPowerIterations,
               "q: power iterations (A A^T)^q A (0 for the fastest, least accurate)")
      .choice("sketch-operator", lib.sketch_operator, "Omega (sparse-sign: very sparse, never stored; --rank only)")
      .choice("orthonormalizer", lib.orthonormalizer,
              "orthonormaliser of the sketch (auto: cholqr passes until orthonormal to FP32; --rank only)")
      .choice("svd", lib.small_svd, "the small SVD (polar: GPU only; auto = gram)")
      .real("tolerance", std::nullopt, [](double t) { return t > 0 && t < 1; }, "in (0, 1)",
            "fixed-accuracy mode: grow the rank until ||A - U S V^T||_F <= tolerance ||A||_F (relative)")
      .integer("block-size", fixed.block_size, 1, kMaxRank, "fixed-accuracy mode: columns added per step")
      .text("precision", std::string("single"),
            "working precision: single (FP32 data and factors) or double (A kept in FP64, sketched in FP32 on A "
            "rounded once, U, S, V in FP64 and written as float64; dense input, --rank, --sketch-operator gaussian)",
            [](const std::string& v) {
              if (v != "single" && v != "double") throw UsageError("--precision", v, "must be single or double");
            });
  if (const int status = parse_command(o, argc, argv, "rsvd-out"); status >= 0) return status;
  if (o.has("rank") == o.has("tolerance"))
    throw UsageError("--rank/--tolerance", o.has("rank") ? "both" : "neither", "give exactly one");
  for (const char* fixed_only : {"block-size"})
    if (o.has("rank") && o.has(fixed_only))
      throw UsageError(std::string("--") + fixed_only, o.text(fixed_only), "applies to --tolerance only");
  for (const char* rank_only : {"oversampling", "sketch-operator", "orthonormalizer"})
    if (o.has("tolerance") && o.has(rank_only))
      throw UsageError(std::string("--") + rank_only, o.text(rank_only), "applies to --rank only");
  if (o.text("precision") == "double" && o.has("tolerance"))
    throw UsageError("--precision", "double", "applies to --rank only (the fixed-accuracy RSVD takes FP32 data)");
  OutputSet out(o.text("output"), {"U.npy", "S.npy", "V.npy"}, o.has("force"));
  auto backend = open_backend(o);
  Progress progress;
  const auto rank_options = [&] {
    RsvdOptions opt;
    opt.oversampling = o.integer("oversampling");
    opt.power_iterations = static_cast<int>(o.integer("power-iterations"));
    opt.seed = static_cast<std::uint64_t>(o.integer("seed"));
    opt.products = products_of(o);
    opt.sketch_operator = parse_enum<SketchOperator>(o.text("sketch-operator"), "--sketch-operator");
    opt.orthonormalizer = parse_enum<Orthonormalizer>(o.text("orthonormalizer"), "--orthonormalizer");
    opt.small_svd = parse_enum<SmallSvd>(o.text("svd"), "--svd");
    opt.progress = [&](const std::string& phase, double ms) { progress(phase, ms); };
    return opt;
  };
  if (o.text("precision") == "double") return rsvd_in_fp64(*backend, o.text("input"), o.integer("rank"), rank_options(), out);
  const InputMatrix a = load_input(*backend, o.text("input"));
  RsvdResult r;
  if (o.has("rank")) {
    const RsvdOptions opt = rank_options();
    const index_t k = o.integer("rank");
    r = a.sparse() ? rsvd(*backend, a.csr->view, k, opt) : rsvd(*backend, a.dense, k, opt);
    std::printf("rank k = %lld, oversampling p = %lld, power iterations q = %d\n", static_cast<long long>(k),
                static_cast<long long>(opt.oversampling), opt.power_iterations);
  } else {
    FixedAccuracyOptions opt;
    opt.tolerance = o.real("tolerance");
    opt.block_size = o.integer("block-size");
    opt.power_iterations = static_cast<int>(o.integer("power-iterations"));
    opt.seed = static_cast<std::uint64_t>(o.integer("seed"));
    opt.products = products_of(o);
    opt.small_svd = parse_enum<SmallSvd>(o.text("svd"), "--svd");
    r = a.sparse() ? rsvd_fixed_accuracy(*backend, a.csr->view, opt) : rsvd_fixed_accuracy(*backend, a.dense, opt);
    std::printf("fixed accuracy: tolerance %.2e reached at rank %lld\n", opt.tolerance, static_cast<long long>(r.S.rows()));
  }
  report_result(*backend, r, "single");
  // The exact error where it costs no more than the RSVD did: an m x n buffer (dense, m n <= 2^28),
  // 2 nnz k + 2 (m + n) k^2 flops (sparse: randnla::relative_error, within 1e11 flops on the host).
  const double k = static_cast<double>(r.S.rows());
  const bool exact = a.sparse() ? backend->memory_space() == MemorySpace::Device ||
                                      2 * (static_cast<double>(a.csr->view.nnz) * k + static_cast<double>(a.rows + a.cols) * k * k) <= 1e11
                                : a.rows * a.cols <= (std::int64_t(1) << 28);
  if (!exact) report_error(r.report.relative_error_estimate, false);
  else if (a.sparse()) report_error(relative_error(*backend, a.csr->view, r.U, r.S, r.V), true);
  else report_error(exact_relative_error(*backend, a.dense, r.U, r.S, r.V), true);
  save_factors(*backend, r, out);
  return 0;
}

}  // namespace cli
}  // namespace randnla
