// randnla project: very sparse random projection of a dataset (one sample per row) to k
// dimensions without storing S; reports how well pairwise distances survive, against the
// Johnson-Lindenstrauss bound for the chosen k, and writes the projected samples.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "commands.hpp"
#include "randnla/sparse_projection/sparse_sign_projection.hpp"

namespace randnla {
namespace cli {
namespace {

/// The smallest k with which the JL lemma keeps all n points' pairwise distances within 1 +- eps
/// with probability >= 1 - 1/n (Dasgupta & Gupta 2003): k >= 4 ln n / (eps^2/2 - eps^3/3).
double jl_dimension(double n, double eps) { return 4 * std::log(n) / (eps * eps / 2 - eps * eps * eps / 3); }

/// The eps the bound gives for k dimensions and n points (bisection on jl_dimension, eps < 1).
double jl_epsilon(double n, double k) {
  double lo = 1e-6, hi = 0.999;
  if (jl_dimension(n, hi) > k) return INFINITY;  // no eps < 1 guarantees anything for this k
  for (int it = 0; it < 60; ++it) {
    const double mid = (lo + hi) / 2;
    (jl_dimension(n, mid) > k ? lo : hi) = mid;
  }
  return hi;
}

double squared_distance(const float* x, const float* y, index_t n, index_t stride) {
  double s = 0;
  for (index_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(x[i * stride]) - y[i * stride];
    s += d * d;
  }
  return s;
}

}  // namespace

int run_project(int argc, char** argv) {
  Options o("project",
            "Very sparse random projection Y = S A of the samples (S never stored); writes Y.npy (one projected "
            "sample per row) into --output and reports the pairwise-distance distortion.",
            "randnla project --dimension 256 --density very-sparse --output project-out");
  o.text("input,i", kFashionMnist, "data file, one sample per row (.npy, .mtx, IDX)")
      .integer("dimension,k", 256, 0, kMaxRank, "k, the projected dimension (0: the JL bound for --eps and the dataset's n)")
      .real("eps", 0.2, [](double e) { return e > 0 && e < 1; }, "in (0, 1)", "the relative distortion the JL bound is taken for")
      .text("density", "very-sparse", "very-sparse (p = 1/sqrt(D)) | achlioptas (p = 1/3) | a probability p in (0, 1]",
            [](const std::string& v) {
              if (v == "very-sparse" || v == "achlioptas") return;
              const auto p = to_real(v);
              require(p && *p > 0 && *p <= 1, "--density", v, "must be very-sparse, achlioptas or a probability in (0, 1]");
            })
      .choice("scaling", SparseScaling::Isometric, "isometric: entries +-sqrt(1/(p k)); none: +-1")
      .integer("pairs", 20000, 0, 1000000000, "sampled pairs whose distances are compared");
  if (const int status = parse_command(o, argc, argv, "project-out"); status >= 0) return status;
  OutputSet out(o.text("output"), {"Y.npy"}, o.has("force"));
  auto backend = open_backend(o);
  const Matrix<float> a = to_backend(*backend, load_matrix(o.text("input")));  // n x D: samples as rows
  const index_t n = a.rows(), d = a.cols();
  const double eps = o.real("eps");
  index_t k = o.integer("dimension");
  if (k == 0) k = static_cast<index_t>(std::ceil(jl_dimension(static_cast<double>(n), eps)));
  SparseProjectionOptions opt;
  opt.layout = SampleLayout::Rows;
  opt.seed = static_cast<std::uint64_t>(o.integer("seed"));
  opt.scaling = parse_enum<SparseScaling>(o.text("scaling"), "--scaling");
  const std::string density = o.text("density");
  if (density == "very-sparse" || density == "achlioptas") {
    opt.density = parse_enum<SparseDensity>(density, "--density");
  } else {
    opt.density = SparseDensity::Given;
    opt.density_value = o.real("density");
  }
  Progress progress;
  const SparseProjectionResult r = sparse_sign_projection(*backend, a, k, opt);
  progress("projection", r.report.ms);
  std::printf("projected %lld samples from D = %lld to k = %lld: p = %.4g, non-zeros +-%.4g, %.2f ms [%s]\n",
              static_cast<long long>(n), static_cast<long long>(d), static_cast<long long>(k), r.report.density,
              r.report.value, r.report.ms, r.report.kernel.c_str());

  auto host = make_backend(BackendKind::Host);
  Matrix<float> x(*host, n, d), y(*host, k, n);
  backend->copy(a.view(), x.view());
  backend->copy(r.Y.view(), y.view());
  const long long pairs = std::min<long long>(o.integer("pairs"), static_cast<long long>(n) * (n - 1) / 2);
  const double pairs_from_s = progress.elapsed_s();
  long long within = 0, counted = 0;
  double worst = 0;
  // Bounded: rows that are all equal (or few distinct ones) give no pair to count.
  const long long tries = 64 * pairs + 1000;
  for (long long t = 0; counted < pairs && t < tries; ++t) {  // pairs (u, v) spread over the dataset, no RNG needed
    const index_t u = static_cast<index_t>((t * 7919) % n), v = static_cast<index_t>((t * 104729 + 1) % n);
    if (u == v) continue;
    const double before = squared_distance(x.data() + u, x.data() + v, d, n);
    if (before == 0) continue;
    const double ratio = std::sqrt(squared_distance(y.data() + u * k, y.data() + v * k, k, 1) / before);
    within += std::abs(ratio - 1) <= eps;
    worst = std::max(worst, std::abs(ratio - 1));
    ++counted;
  }
  progress("pairwise distances", 1e3 * (progress.elapsed_s() - pairs_from_s));
  if (counted == 0)
    std::printf("pairwise distances: no two distinct samples found in %lld tries: distortion not measured\n", tries);
  else
    std::printf("pairwise distances: %lld of %lld sampled pairs within 1 +- %.2f (%.2f%%), largest distortion %.3f\n",
              within, counted, eps, 100.0 * within / std::max(counted, 1LL), worst);
  report()["result"] = {{"dimension", k}, {"density", r.report.density}, {"ms", r.report.ms}, {"kernel", r.report.kernel},
                        {"pairs", counted}, {"pairs_within_eps", within}, {"largest_distortion", worst}};
  const double bound = jl_epsilon(static_cast<double>(n), static_cast<double>(k));
  if (std::isfinite(bound))
    std::printf("Johnson-Lindenstrauss: k = %lld guarantees 1 +- %.3f for all %lld samples with probability >= 1 - 1/n\n",
                static_cast<long long>(k), bound, static_cast<long long>(n));
  else
    std::printf("Johnson-Lindenstrauss: k = %lld guarantees no eps < 1 for %lld samples (eps = %.2f needs k >= %.0f)\n",
                static_cast<long long>(k), static_cast<long long>(n), eps,
                std::ceil(jl_dimension(static_cast<double>(n), eps)));
  Matrix<float> yt(*host, n, k);
  host->transpose(y.view(), yt.view());
  save_npy(*host, yt.view(), out, "Y.npy");
  out.commit();
  return 0;
}

}  // namespace cli
}  // namespace randnla
