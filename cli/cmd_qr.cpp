// randnla qr: A = Q R of a matrix file by any of the library's orthonormalisers (TSQR by
// default); prints the time, the orthogonality ||Q^T Q - I||_F and the residual
// ||A - Q R||_F / ||A||_F (FP64 sums), says when R's diagonal shows A rank deficient, and writes
// Q.npy and R.npy.
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "randnla/report.hpp"
#include "randnla/orthonormalize/orthonormalize.hpp"
#include "randnla/tsqr/tsqr.hpp"

namespace randnla {
namespace cli {
namespace {

/// R's diagonal entries that are zero or not finite, relative to its largest (|r_jj| <= n u max).
index_t deficient_diagonal(Backend& b, MatrixView<const float> r) {
  const index_t n = r.rows();
  std::vector<float> h(static_cast<std::size_t>(n * n));
  b.copy(r, MatrixView<float>(h.data(), n, n, n, MemorySpace::Host));
  double largest = 0;
  for (index_t j = 0; j < n; ++j) largest = std::max(largest, std::fabs(static_cast<double>(h[j * n + j])));
  index_t bad = 0;
  for (index_t j = 0; j < n; ++j) {
    const double d = std::fabs(static_cast<double>(h[j * n + j]));
    bad += !std::isfinite(d) || d <= static_cast<double>(n) * 0x1p-24 * largest;
  }
  return bad;
}

}  // namespace

int run_qr(int argc, char** argv) {
  Options o("qr",
            "A = Q R by an orthonormaliser of the library; writes Q.npy and R.npy (float32) into --output and "
            "reports the time, the orthogonality and the residual.",
            "randnla qr --input tall.npy --orthonormalizer tsqr --arithmetic fp16-refined --output qr-out");
  o.text("input,i", std::nullopt, "matrix file (m x n, m >= n): .npy (float32/64, C or Fortran order), .mtx, IDX (.gz too)")
      .required("input")
      .choice("orthonormalizer", Orthonormalizer::Tsqr, "the orthonormaliser")
      .choice("arithmetic", TsqrArithmetic::FP32, "tsqr's blocks (fp16-refined, tf32, fp16: the Tensor Core variants)");
  if (const int status = parse_command(o, argc, argv, "qr-out"); status >= 0) return status;
  const auto method = parse_enum<Orthonormalizer>(o.text("orthonormalizer"), "--orthonormalizer");
  const auto arithmetic = parse_enum<TsqrArithmetic>(o.text("arithmetic"), "--arithmetic");
  if (method != Orthonormalizer::Tsqr && arithmetic != TsqrArithmetic::FP32)
    throw UsageError("--arithmetic", o.text("arithmetic"), "applies to --orthonormalizer tsqr only");
  OutputSet out(o.text("output"), {"Q.npy", "R.npy"}, o.has("force"));
  auto backend = open_backend(o);
  Backend& b = *backend;
  const Matrix<float> a = to_backend(b, load_matrix(o.text("input")));  // all zero: R = 0, said rank deficient
  const index_t m = a.rows(), n = a.cols();
  require(m >= n && n >= 1, "--input", std::to_string(m) + " x " + std::to_string(n), "must have rows >= columns >= 1");
  Matrix<float> q(b, m, n, "Q"), r(b, n, n, "R");
  b.copy(a.view(), q.view());
  Progress progress;
  Stopwatch clock(b);
  clock.lap("copy");
  Orthonormalizer used = method;
  TsqrReport tree;
  if (method == Orthonormalizer::Tsqr) {
    TsqrOptions t;
    t.q_buffer = q.view();
    t.arithmetic = arithmetic;
    TsqrResult f = tsqr(b, q, t);
    r = std::move(f.R);
    tree = f.report;
  } else {
    used = orthonormalize(b, q.view(), method);
  }
  const double ms = clock.lap_ms("qr");
  progress("qr", ms);
  if (method != Orthonormalizer::Tsqr) b.product(Op::T, Op::N, 1.0f, q, a, 0.0f, r, ProductPrecision::fp32());  // R = Q^T A
  std::printf("A %lld x %lld: %s in %.3f ms\n", static_cast<long long>(m), static_cast<long long>(n), to_string(used), ms);
  if (method == Orthonormalizer::Tsqr)
    std::printf("tree: %d levels, %lld leaves, %lld panels, blocks %s (%s)\n", tree.levels,
                static_cast<long long>(tree.leaves), static_cast<long long>(tree.panels), tree.blocks.c_str(),
                tree.arithmetic.c_str());
  const double orth = orthogonality_loss(b, q), resid = factorization_residual(b, a, q, r);
  progress("orthogonality and residual", clock.lap_ms("checks"));
  report()["result"] = {{"orthonormalizer", to_string(used)}, {"ms", ms}, {"orthogonality", orth}, {"residual", resid}};
  std::printf("orthogonality ||Q^T Q - I||_F = %.3e, residual ||A - Q R||_F / ||A||_F = %.3e\n", orth, resid);
  if (const index_t bad = deficient_diagonal(b, r))
    std::printf("R has %lld diagonal entries zero (below n u max |r_jj|) or not finite: A is rank deficient or not "
                "finite, and Q's matching columns are not determined by A\n",
                static_cast<long long>(bad));
  save_npy(b, q, out, "Q.npy");
  save_npy(b, r, out, "R.npy");
  out.commit();
  return 0;
}

}  // namespace cli
}  // namespace randnla
