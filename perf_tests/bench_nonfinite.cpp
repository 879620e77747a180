// Split products whose operands hold Inf or NaN, against the same product on finite operands
// (the target: within 2x of the finite time), on the square shape of the issue (2048^3) and an
// RSVD shape. Each case puts non-finite values into A (FP32, the split operand) or B.
// Usage: bench_nonfinite [--only SHAPE CASE]   e.g. --only 16384x256x16384 "1% +Inf": that shape and
//        case alone (with the finite one it is compared with), one timed run each, for a profiler.
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "randnla/backends.hpp"
#include "bench_common.hpp"

using namespace randnla;

namespace {

struct Poison {
  const char* name;
  std::function<void(std::vector<float>& a, index_t rows, index_t cols)> apply;
};

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  if (!cuda_available()) {
    std::printf("bench_nonfinite: no GPU, nothing to measure\n");
    return 0;
  }
  const bool only = argc == 4 && std::string(argv[1]) == "--only";
  const std::string only_shape = only ? argv[2] : "", only_case = only ? argv[3] : "";
  auto b = make_backend(BackendKind::Cuda);
  auto time_ms = [&](const std::function<void()>& f) { return only ? median_ms(*b, f, 1, 1) : bench::median_ms(*b, f); };
  auto host = make_backend(BackendKind::Host);
  std::printf("device: %s\n", b->description().c_str());
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Poison> poisons = {
      {"finite", [](std::vector<float>&, index_t, index_t) {}},
      {"one Inf", [&](std::vector<float>& a, index_t r, index_t) { a[r / 2 + 7 * r] = inf; }},
      {"one NaN", [&](std::vector<float>& a, index_t r, index_t) { a[r / 3 + 5 * r] = nan; }},
      {"a column of Inf", [&](std::vector<float>& a, index_t r, index_t) {
         for (index_t i = 0; i < r; ++i) a[i + 3 * r] = inf;
       }},
      {"1% Inf and NaN", [&](std::vector<float>& a, index_t, index_t) {
         for (std::size_t e = 0; e < a.size(); e += 97) a[e] = (e / 97) % 2 ? inf : nan;
       }},
      {"1% +Inf", [&](std::vector<float>& a, index_t, index_t) {
         for (std::size_t e = 0; e < a.size(); e += 97) a[e] = inf;
       }}};
  struct Shape { index_t m, n, k; };
  std::printf("%-16s %-22s %-18s %10s %10s\n", "shape", "product", "A holds", "ms", "x finite");
  for (const Shape s : {Shape{2048, 2048, 2048}, Shape{16384, 256, 16384}}) {
    Matrix<float> a(*b, s.m, s.k, "A"), bf(*b, s.k, s.n, "B"), c(*b, s.m, s.n, "C"), ha(*host, s.m, s.k, "hA");
    Matrix<fp16> bh(*b, s.k, s.n, "B16");
    b->fill_random(RandomSpec{Distribution::Gaussian, 1, 0}, a.view());
    b->fill_random(RandomSpec{Distribution::Gaussian, 2, 0}, bf.view());
    b->fill_random(RandomSpec{Distribution::Gaussian, 2, 0}, bh.view());
    b->copy(MatrixView<const float>(a.view()), ha.view());
    const std::vector<float> clean(ha.data(), ha.data() + s.m * s.k);
    const std::string shape = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    if (only && shape != only_shape) continue;
    for (TensorCore tc : {TensorCore::FP16, TensorCore::TF32}) {
      double finite_sh = 0, finite_tcec = 0;
      for (const Poison& p : poisons) {
        if (only && p.name != poisons.front().name && p.name != only_case) continue;
        std::vector<float> poisoned = clean;
        p.apply(poisoned, s.m, s.k);
        b->copy(MatrixView<const float>(poisoned.data(), s.m, s.k, s.m, MemorySpace::Host), a.view());
        const ProductPrecision split = ProductPrecision::split_in(tc);
        const double sh = time_ms([&] { b->product(Op::N, Op::N, 1.0f, a, bh, 0.0f, c, split); });
        const double tcec = time_ms([&] { b->product(Op::N, Op::N, 1.0f, a, bf, 0.0f, c, split); });
        if (p.name == poisons.front().name) finite_sh = sh, finite_tcec = tcec;
        std::printf("%-16s %-22s %-18s %10.3f %10.2f\n", shape.c_str(), (std::string("shgemm ") + to_string(tc)).c_str(),
                    p.name, sh, sh / finite_sh);
        std::printf("%-16s %-22s %-18s %10.3f %10.2f\n", shape.c_str(), (std::string("tcec ") + to_string(tc)).c_str(),
                    p.name, tcec, tcec / finite_tcec);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
