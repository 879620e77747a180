// randnla gemm: every GEMM variant on the user's matrices (or random ones): time and relative
// error against FP64, and what auto chose.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>

#include "commands.hpp"
#include "randnla/report.hpp"

namespace randnla {
namespace cli {
namespace {

double relative_error(Backend& b, MatrixView<const float> c, MatrixView<const double> ref) {
  const index_t n = c.size();
  std::vector<float> hc(static_cast<std::size_t>(n));
  std::vector<double> hr(static_cast<std::size_t>(n));
  b.copy(c, MatrixView<float>(hc.data(), c.rows(), c.cols(), c.rows(), MemorySpace::Host));
  b.copy(ref, MatrixView<double>(hr.data(), c.rows(), c.cols(), c.rows(), MemorySpace::Host));
  double num = 0, den = 0;
  for (index_t i = 0; i < n; ++i) num += (hc[i] - hr[i]) * (hc[i] - hr[i]), den += hr[i] * hr[i];
  return std::sqrt(num / std::max(den, 1e-300));
}

std::string explain(const ProductReport& r, bool fp16_b) {
  if (r.mode == ProductMode::Split && r.a_format == TensorCore::TF32)
    return describe(r, fp16_b) + " (an operand holds Inf/NaN or elements more than 2^38 below its largest)";
  return describe(r, fp16_b);
}

}  // namespace

int run_gemm(int argc, char** argv) {
  Options o("gemm", "C = A B with every variant: cuBLAS/host SGEMM, TF32, FP16, SHGEMM, TCEC-SGEMM; prints each "
            "one's time and error against FP64 (writes no file).",
            "randnla gemm --m 4096 --n 4096 --k 1024 --reps 5");
  o.text("--a", std::nullopt, "matrix file for A (m x k); random N(0,1) if absent")
      .text("--b", std::nullopt, "matrix file for B (k x n); random N(0,1) if absent")
      .integer("--m", 2048, 1, kMaxRank, "rows of random A")
      .integer("--n", 2048, 1, kMaxRank, "columns of random B")
      .integer("--k", 2048, 1, kMaxRank, "inner dimension of random A, B")
      .integer("reps", 5, 1, 1000000, "timed repetitions (median reported)");
  if (const int status = parse_command(o, argc, argv, ""); status >= 0) return status;
  if (o.has("a"))
    for (const char* dim : {"m", "k"})
      if (o.has(dim)) throw UsageError(std::string("--") + dim, o.text(dim), "applies to a random A only (--a given)");
  if (o.has("b") && o.has("n")) throw UsageError("--n", o.text("n"), "applies to a random B only (--b given)");
  auto b = open_backend(o);
  auto operand = [&](const char* name, index_t rows, index_t cols, std::uint64_t stream) {
    if (o.has(name)) return to_backend(*b, load_matrix(o.text(name)));
    Matrix<float> x(*b, rows, cols, name);
    b->fill_random(RandomSpec{Distribution::Gaussian, static_cast<std::uint64_t>(o.integer("seed")), stream}, x.view());
    return x;
  };
  const Matrix<float> a = operand("a", o.integer("m"), o.integer("k"), 1);
  const Matrix<float> bm = operand("b", a.cols(), o.integer("n"), 2);
  require(bm.rows() == a.cols(), "B.rows", bm.rows(), "must equal A.cols = " + std::to_string(a.cols()));
  const index_t m = a.rows(), n = bm.cols(), k = a.cols();
  std::printf("C = A B with m = %lld, n = %lld, k = %lld\n", static_cast<long long>(m), static_cast<long long>(n),
              static_cast<long long>(k));
  // SHGEMM's B is FP16: B scaled by a power of two into FP16's range first (2^s, exact), the
  // product unscaled by alpha = 2^-s, so that heavy tails do not overflow and small scales do not
  // underflow where SGEMM's result is finite and accurate.
  const int s = plan_operand(b->exponent_histogram(bm), TensorCore::FP16).scale_exponent;
  Matrix<fp16> b16(*b, k, n, "B16");
  Matrix<float> b16f(*b, k, n, "B16f");  // B as SHGEMM multiplies it: 2^-s fp16(2^s B)
  b->copy(bm.view(), b16f.view());
  b->scale(exp2i(s), b16f.view());
  b->convert(b16f, b16.view());
  b->convert(b16, b16f.view());
  b->scale(exp2i(-s), b16f.view());
  std::printf("B scaled by 2^%d before its rounding to FP16 (SHGEMM)\n", s);
  auto reference = [&](MatrixView<const float> bb) {
    Matrix<double> ad(*b, m, k), bd(*b, k, n), r(*b, m, n);
    b->convert(a, ad.view());
    b->convert(bb, bd.view());
    b->product(Op::N, Op::N, 1.0, ad, bd, 0.0, r);
    return r;
  };
  const Matrix<double> ref = reference(bm), ref16 = reference(b16f);
  Matrix<float> c(*b, m, n, "C");
  const int reps = static_cast<int>(o.integer("reps"));
  Progress progress;
  std::printf("\n%-24s %10s %10s %12s\n", "variant", "ms", "TFLOP/s", "rel. error");
  auto run = [&](const std::string& name, const Matrix<double>& r, const std::function<void()>& f) {
    const double ms = median_ms(*b, f, reps, 1);
    const double error = relative_error(*b, c, r);
    std::printf("%-24s %10.3f %10.2f %12.3e\n", name.c_str(), ms, 2.0 * m * n * k / ms / 1e9, error);
    progress(name, ms * reps);
    report()["result"]["variants"].push_back({{"variant", name}, {"ms", ms}, {"tflops", 2.0 * m * n * k / ms / 1e9},
                                              {"relative_error", error}});
  };
  auto product = [&](MatrixView<const float> bb, float alpha, ProductPrecision precision, ProductReport* report) {
    return [=, &b, &a, &c] { b->product(Op::N, Op::N, alpha, a, bb, 0.0f, c, precision, report); };
  };
  auto product16 = [&](ProductPrecision precision, ProductReport* report) {
    return [=, &b, &a, &c, &b16] { b->product(Op::N, Op::N, exp2i(-s), a, b16, 0.0f, c, precision, report); };
  };
  run("sgemm fp32", ref, product(bm, 1.0f, ProductPrecision::fp32(), nullptr));
  run("gemm tf32", ref, product(bm, 1.0f, ProductPrecision::tf32(), nullptr));
  run("gemm fp16", ref, product(bm, 1.0f, ProductPrecision::fp16(), nullptr));
  ProductReport rep_sh, rep_tcec, rep_auto;
  for (TensorCore tc : {TensorCore::FP16, TensorCore::TF32, TensorCore::Auto}) {
    const bool automatic = tc == TensorCore::Auto;
    run(std::string("shgemm ") + to_string(tc) + " (B fp16)", ref16,
        product16(ProductPrecision::split_in(tc), automatic ? &rep_sh : nullptr));
    run(std::string("tcec ") + to_string(tc), ref, product(bm, 1.0f, ProductPrecision::split_in(tc), automatic ? &rep_tcec : nullptr));
  }
  run("auto", ref, product(bm, 1.0f, ProductPrecision::automatic(), &rep_auto));
  std::printf("\nsplit with auto format chose: %s; %s\nauto ran: %s\n", explain(rep_sh, true).c_str(),
              explain(rep_tcec, false).c_str(), explain(rep_auto, false).c_str());
  return 0;
}

}  // namespace cli
}  // namespace randnla
