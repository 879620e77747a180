// Very sparse random projection on the H100: Y = S A with b = 32 samples, k = 16384, D = 10^7 and
// 10^8 at p = 1/sqrt(D), and D = 10^6 at p = 1/3. Each GPU kernel (the write-up's v3 rebuilt as
// row-warp, warp-gathers, tensor-core-tiles): median time, effective bandwidth against A's bytes
// (D b 4) and against the bytes its non-zeros load (k p D b 4), and the error of up to 64 rows of Y
// against an FP64 product with the same S; at p = 1/3, cuBLAS with S stored in FP16 as the peer
// (at D = 10^6: S takes 32.8 GB). Then, at D = 10^6, the densities between where warp-gathers and
// tensor-core-tiles cross (the choice of SparseKernel::Auto); last, p = 1/3 at D = 10^7 and 10^8,
// where no stored S fits.
// Usage: bench_sparse_projection [--quick] [--layout rows|columns] [--kernel K (only K, no peer)]
//        [--dimension D (only D at p = 1/sqrt(D))]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "randnla/backends.hpp"
#include "bench_common.hpp"
#include "randnla/sparse_projection/sparse_sign_projection.hpp"

using namespace randnla;

namespace {

/// Rows of Y the error samples: 64, fewer where their FP64 reference would take the host more than
/// about 7 10^9 additions (p = 1/3 at D = 10^8).
std::int64_t sampled_rows(const SparseSignOperator& s, index_t cols) {
  const double per_row = s.density * static_cast<double>(s.cols) * static_cast<double>(cols);
  return std::max<std::int64_t>(4, std::min<std::int64_t>(64, static_cast<std::int64_t>(7e9 / per_row)));
}

/// max over sampled_rows() rows of |Y(j, c) - (S A)(j, c)| / ||(S A)(j, :)|| with S A in FP64 from the
/// host's walk.
double sampled_error(Backend& b, const SparseSignOperator& s, const Matrix<float>& a, SampleLayout layout,
                     const Matrix<float>& y) {
  auto host = make_backend(BackendKind::Host);
  Matrix<float> ha(*host, a.rows(), a.cols()), hy(*host, y.rows(), y.cols());
  b.copy(a.view(), ha.view());
  b.copy(y.view(), hy.view());
  const index_t cols = y.cols();
  const std::int64_t step = std::max<std::int64_t>(1, s.rows / sampled_rows(s, cols));
  double worst = 0;
  for (std::int64_t j = 0; j < s.rows; j += step) {
    std::vector<double> ref(static_cast<std::size_t>(cols), 0.0);
    for (std::int64_t g = 0; g < s.segments(); ++g)
      s.walk(j, g, [&](std::int64_t i, bool neg) {
        for (index_t c = 0; c < cols; ++c) {
          const double v = layout == SampleLayout::Columns ? ha.data()[i + c * ha.rows()] : ha.data()[c + i * ha.rows()];
          ref[static_cast<std::size_t>(c)] += neg ? -v : v;
        }
      });
    double num = 0, den = 0;
    for (index_t c = 0; c < cols; ++c) {
      const double r = ref[static_cast<std::size_t>(c)] * s.value, e = hy.data()[j + c * hy.rows()] - r;
      num += e * e, den += r * r;
    }
    worst = std::max(worst, std::sqrt(num / den));
  }
  return worst;
}

/// A call longer than this (its warm-up) is timed once more, not five times (the rebuilt v3 at p = 1/3
/// and D = 10^8 takes about 32 s).
constexpr double kLongMs = 1000;

void run(Backend& b, index_t d, SparseProjectionOptions o, const std::vector<SparseKernel>& kernels) {
  const index_t batch = 32, k = 16384;
  const bool columns = o.layout == SampleLayout::Columns;
  Matrix<float> a(b, columns ? d : batch, columns ? batch : d, "A");
  b.fill_random(RandomSpec{Distribution::Gaussian, 77, 0}, a.view());
  const SparseSignOperator s = sparse_sign_operator(k, d, o);
  const double a_bytes = 4.0 * d * batch, loaded = 4.0 * k * s.density * d * batch;
  for (SparseKernel kernel : kernels) {
    o.kernel = kernel;
    SparseProjectionResult r;
    const auto call = [&] { r = sparse_sign_projection(b, a, k, o); };
    const double warm_up = randnla::median_ms(b, call, 1, 0);
    const double ms = randnla::median_ms(b, call, warm_up > kLongMs ? 1 : 5, 0);
    std::printf("D=%-10ld p=%-9.3g %-7s %-17s %10.3f ms  %7.1f GB/s of A  %8.1f GB/s loaded  error %.2e\n",
                static_cast<long>(d), s.density, to_string(o.layout), to_string(kernel), ms, a_bytes / ms * 1e-6,
                loaded / ms * 1e-6, sampled_error(b, s, a, o.layout, r.Y));
    std::fflush(stdout);
  }
}

/// The peer a user without this library writes: S stored in FP16 (k x D, filled once, not timed)
/// and cuBLAS's FP16 GEMM with FP32 sums (Backend::product of two FP16 matrices), Y = S A^T for
/// the rows layout.
void stored_peer(Backend& b, index_t d) {
  const index_t batch = 32, k = 16384;
  Matrix<fp16> s(b, k, d, "S"), a(b, batch, d, "A");
  b.fill_random(RandomSpec{Distribution::Ternary, 5, 0, 1.0 / 3.0}, s.view());
  b.fill_random(RandomSpec{Distribution::Gaussian, 77, 0}, a.view());
  Matrix<float> y(b, k, batch, "Y");
  const double ms = randnla::median_ms(b, [&] { b.product(Op::N, Op::T, 1.0f, s, a, 0.0f, y); }, 5, 1);
  std::printf("D=%-10ld p=%-9.3g rows    cuBLAS, S stored %10.3f ms  (S: %.1f GB in FP16, its fill not timed)\n",
              static_cast<long>(d), 1.0 / 3.0, ms, 2.0 * k * d * 1e-9);
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  bool quick = false;
  SampleLayout layout = SampleLayout::Rows;
  std::vector<SparseKernel> all{SparseKernel::RowWarp, SparseKernel::WarpGathers, SparseKernel::TensorCoreTiles};
  bool peer = true;
  index_t only = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--layout") == 0 && i + 1 < argc) layout = parse_enum<SampleLayout>(argv[++i], "--layout");
    if (std::strcmp(argv[i], "--dimension") == 0 && i + 1 < argc) {
      only = static_cast<index_t>(std::strtod(argv[++i], nullptr));  // 1e7 as well as 10000000
      require(only > 0, "--dimension", argv[i], "must be a positive number");
    }
    if (std::strcmp(argv[i], "--kernel") == 0 && i + 1 < argc) {
      all = {parse_enum<SparseKernel>(argv[++i], "--kernel")};
      peer = false;
    }
  }
  if (!cuda_available()) {
    std::printf("bench_sparse_projection: no GPU, nothing to measure\n");
    return 0;
  }
  auto b = make_backend(BackendKind::Cuda);
  std::printf("device: %s; b = 32, k = 16384\n", b->description().c_str());
  SparseProjectionOptions o;
  o.layout = layout;
  o.density = SparseDensity::VerySparse;
  if (only > 0) {
    run(*b, only, o, all);
    return 0;
  }
  run(*b, 10000000, o, all);
  if (!quick) run(*b, 100000000, o, all);
  o.density = SparseDensity::Achlioptas;
  run(*b, 1000000, o, all);
  if (peer) stored_peer(*b, 1000000);
  o.density = SparseDensity::Given;
  for (double p : {1.0 / 16, 1.0 / 64, 1.0 / 128, 1.0 / 256}) {
    o.density_value = p;
    run(*b, 1000000, o, peer ? std::vector<SparseKernel>{SparseKernel::WarpGathers, SparseKernel::TensorCoreTiles} : all);
  }
  o.density = SparseDensity::Achlioptas;
  run(*b, 10000000, o, all);
  if (!quick) run(*b, 100000000, o, all);
  return 0;
}
