// Randomized LRA benchmark on the H100, after Baboulin, Donfack, Kaya, Mary & Robeyns (2024),
// Figures 1-3: m = n = 35840, A = X Y^T with Gaussian X and Y of rank k, p = 0.
//   gemm: B = A Omega (m x n by n x k) in each product variant, TFLOP/s = 2 m n k / time;
//   qr:   an orthonormal basis of an m x k matrix (and of 16384 x 512): Householder (geqrf + orgqr)
//         against CholeskyQR with its Gram matrix in FP64 (the paper's dcholQR);
//   lra:  randLRA without and with refinement (the paper's residual refinement, and our subspace
//         refinement from a TF32 or 16|32 sketch), every variant: time, effective TFLOP/s with the
//         paper's count 4mnk + 2nk^2 - 2k^3/3 for every variant, ||A - X Y^T||_F / ||A||_F (FP32
//         residual, FP64 norm), the library's peak device memory besides A, and the speed-up over
//         the FP32 baseline (SGEMM + Householder). tf32 + Householder is what a cuBLAS user gets.
// Usage: bench_lra [--quick] [--only gemm|qr|lra] [--ranks 8,16,...]
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "randnla/backends.hpp"
#include "bench_common.hpp"
#include "randnla/lra/randomized_lra.hpp"

using namespace randnla;

namespace {

constexpr index_t kSize = 35840;  // the paper's m = n

double median_of(Backend& b, const std::function<void()>& f, int reps) { return randnla::median_ms(b, f, reps, 1); }

Matrix<float> rank_k_matrix(Backend& b, index_t m, index_t n, index_t k) {
  Matrix<float> x(b, m, k, "X"), y(b, n, k, "Y"), a(b, m, n, "A");
  b.fill_random(RandomSpec{Distribution::Gaussian, 500, 0}, x.view());
  b.fill_random(RandomSpec{Distribution::Gaussian, 501, 0}, y.view());
  b.product(Op::N, Op::T, 1.0f, x, y, 0.0f, a, ProductPrecision::fp32());
  return a;
}

void gemm_figure(Backend& b, const std::vector<index_t>& ranks, index_t size) {
  for (index_t k : ranks) {
    const Matrix<float> a = rank_k_matrix(b, size, size, k);
    Matrix<fp16> a16(b, size, size, "A16"), omega16(b, size, k, "Omega16"), c16(b, size, k, "C16");
    Matrix<float> omega(b, size, k, "Omega"), c(b, size, k, "C");
    b.fill_random(RandomSpec{Distribution::Gaussian, 1, 0}, omega.view());
    b.convert(a, a16.view());
    b.convert(omega, omega16.view());
    const double flops = 2.0 * size * size * k;
    auto report = [&](const char* name, const std::function<void()>& f) {
      const double ms = median_of(b, f, 7);
      std::printf("gemm k=%-5ld %-10s %9.3f ms %8.1f TFLOP/s\n", static_cast<long>(k), name, ms, flops / ms * 1e-9);
    };
    auto variant = [&](ProductPrecision p) { return [&, p] { b.product(Op::N, Op::N, 1.0f, a, omega, 0.0f, c, p); }; };
    report("fp32", variant(ProductPrecision::fp32()));
    report("tf32", variant(ProductPrecision::tf32()));
    report("fp16", variant(ProductPrecision::fp16()));
    report("fp16-once", [&] { b.product(Op::N, Op::N, 1.0f, a16, omega16, 0.0f, c); });
    report("fp16-all", [&] { b.product(Op::N, Op::N, 1.0f, a16, omega16, 0.0f, c16.view()); });
    report("split", [&] { b.product(Op::N, Op::N, 1.0f, a, omega16, 0.0f, c, ProductPrecision::split_in(TensorCore::FP16)); });
    // The refinement's residual E = A - X Y^T (m x n, rank-k update, C read and written).
    Matrix<float> e(b, size, size, "E"), y(b, size, k, "Y");
    b.fill_random(RandomSpec{Distribution::Gaussian, 3, 0}, y.view());
    for (ProductPrecision p : {ProductPrecision::fp32(), ProductPrecision::tf32(), ProductPrecision::automatic()}) {
      const double ms = median_of(b, [&] { b.product(Op::N, Op::T, -1.0f, c, y, 1.0f, e, p); }, 7);
      const double ms_add = median_of(b, [&] {
        b.product(Op::N, Op::T, -1.0f, c, y, 0.0f, e, p);
        b.add(1.0f, a, 1.0f, e);
      }, 7);
      std::printf("residual k=%-5ld %-10s %9.3f ms in place, %9.3f ms written then A added\n", static_cast<long>(k),
                  to_string(p.mode), ms, ms_add);
    }
    std::fflush(stdout);
  }
}

void qr_one(Backend& b, index_t m, index_t k) {
  Matrix<float> y(b, m, k, "Y"), work(b, m, k, "work");
  b.fill_random(RandomSpec{Distribution::Gaussian, 2, 0}, y.view());
  const double copy = median_of(b, [&] { b.copy(y.view(), work.view()); }, 7);
  for (Orthonormalizer method :
       {Orthonormalizer::Householder, Orthonormalizer::CholeskyQR, Orthonormalizer::RandCholeskyQR, Orthonormalizer::Tsqr}) {
    const double ms = median_of(b, [&] {
      b.copy(y.view(), work.view());
      orthonormalize(b, work.view(), method);
    }, 7);
    std::printf("qr %ldx%-5ld %-12s %9.3f ms\n", static_cast<long>(m), static_cast<long>(k), to_string(method), ms - copy);
  }
  std::fflush(stdout);
}

/// ||A - X Y^T||_F / ||A||_F: the residual in FP32, its norm in FP64.
double lra_error(Backend& b, MatrixView<const float> a, const LraResult& r, double norm_a) {
  Matrix<float> e(b, a.rows(), a.cols(), "E");
  b.copy(a, e.view());
  b.product(Op::N, Op::T, -1.0f, r.X, r.Y, 1.0f, e, ProductPrecision::fp32());
  return b.frobenius_norm(e) / norm_a;
}

struct LraVariant {
  const char* name;
  ProductPrecision products;
  Orthonormalizer orthonormalizer;
  int refinements;
  bool recompress;
  LraRefinement refinement = LraRefinement::Residual;
};

void lra_figure(Backend& b, const std::vector<index_t>& ranks, index_t size) {
  const std::vector<LraVariant> variants = {
      {"fp32+hh (baseline)", ProductPrecision::fp32(), Orthonormalizer::Householder, 0, false},
      {"tf32+hh (cuBLAS)", ProductPrecision::tf32(), Orthonormalizer::Householder, 0, false},
      {"fp32", ProductPrecision::fp32(), Orthonormalizer::CholeskyQR, 0, false},
      {"tf32", ProductPrecision::tf32(), Orthonormalizer::CholeskyQR, 0, false},
      {"fp16 (32|32)", ProductPrecision::fp16(), Orthonormalizer::CholeskyQR, 0, false},
      {"fp16-once (16|32)", ProductPrecision::fp16_once(), Orthonormalizer::CholeskyQR, 0, false},
      {"fp16-all (16|16)", ProductPrecision::fp16_all(), Orthonormalizer::CholeskyQR, 0, false},
      {"split", ProductPrecision::split_in(TensorCore::Auto), Orthonormalizer::CholeskyQR, 0, false},
      {"tf32 refined", ProductPrecision::tf32(), Orthonormalizer::CholeskyQR, 1, false},
      {"fp16 refined", ProductPrecision::fp16(), Orthonormalizer::CholeskyQR, 1, false},
      {"fp16-once refined", ProductPrecision::fp16_once(), Orthonormalizer::CholeskyQR, 1, false},
      {"fp16-all refined x2", ProductPrecision::fp16_all(), Orthonormalizer::CholeskyQR, 2, false},
      {"fp16-once refined, rank k", ProductPrecision::fp16_once(), Orthonormalizer::CholeskyQR, 1, true},
      {"tf32 subspace-refined", ProductPrecision::tf32(), Orthonormalizer::CholeskyQR, 1, false, LraRefinement::Subspace},
      {"fp16-once subspace-refined", ProductPrecision::fp16_once(), Orthonormalizer::CholeskyQR, 1, false,
       LraRefinement::Subspace},
      {"tf32 subspace-refined, auto QR", ProductPrecision::tf32(), Orthonormalizer::Auto, 1, false, LraRefinement::Subspace},
      {"fp16-once subspace-refined, auto QR", ProductPrecision::fp16_once(), Orthonormalizer::Auto, 1, false,
       LraRefinement::Subspace},
  };
  for (index_t k : ranks) {
    const Matrix<float> a = rank_k_matrix(b, size, size, k);
    const double norm_a = b.frobenius_norm(a);
    const double flops = 4.0 * size * size * k + 2.0 * size * k * k - 2.0 / 3.0 * k * k * k;
    double baseline = 0;
    for (const LraVariant& v : variants) {
      LraOptions o;
      o.products = v.products, o.orthonormalizer = v.orthonormalizer, o.refinements = v.refinements;
      o.recompress = v.recompress, o.refinement = v.refinement;
      LraResult r;
      const int reps = k >= 512 ? 3 : 5;
      b.reset_peak_memory();
      const std::size_t before = b.memory_use().bytes;
      const double ms = median_of(b, [&] { r = randomized_lra(b, a, k, o); }, reps);
      const double peak_gib = static_cast<double>(b.memory_use().peak_bytes - before) / (1 << 30);
      if (baseline == 0) baseline = ms;
      std::printf("lra k=%-5ld %-36s %9.3f ms %8.1f TFLOP/s  error %.3e  rank %5ld  peak %6.2f GiB  %5.2fx  [%s] %s\n",
                  static_cast<long>(k), v.name, ms, flops / ms * 1e-9, lra_error(b, a, r, norm_a),
                  static_cast<long>(r.X.cols()), peak_gib, baseline / ms, r.report.phases.to_string().c_str(),
                  r.report.orthonormalizers.empty() ? "" : r.report.orthonormalizers.back().c_str());
      std::fflush(stdout);
    }
  }
}

std::vector<index_t> parse_ranks(const char* text) {
  std::vector<index_t> ranks;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) ranks.push_back(std::stol(item));
  return ranks;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  std::string only;
  bool quick = false;
  std::vector<index_t> ranks = {8, 16, 32, 64, 128, 256, 512, 1024};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true, ranks = {64, 256};
    if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
    if (std::strcmp(argv[i], "--ranks") == 0 && i + 1 < argc) ranks = parse_ranks(argv[++i]);
  }
  if (!cuda_available()) {
    std::printf("bench_lra: no GPU, nothing to measure\n");
    return 0;
  }
  auto b = make_backend(BackendKind::Cuda);
  std::printf("device: %s; m = n = %ld, p = 0\n", b->description().c_str(), static_cast<long>(kSize));
  const index_t size = quick ? 16384 : kSize;
  if (only.empty() || only == "gemm") gemm_figure(*b, ranks, size);
  if (only.empty() || only == "qr") {
    for (index_t k : ranks) qr_one(*b, size, k);
    qr_one(*b, 16384, 512);
  }
  if (only.empty() || only == "lra") lra_figure(*b, ranks, size);
  return 0;
}
