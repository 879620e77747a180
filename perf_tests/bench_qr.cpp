// QR of tall-skinny matrices on the H100 at the TSQR issue's shapes (1048576 x 16, 1048576 x 64,
// 65536 x 128, 65536 x 512; A Gaussian): every orthonormaliser of the library, among them the
// peers cuSOLVER sgeqrf + sorgqr (householder) and one FP64 CholeskyQR pass (cholqr). Each: median
// of 7 runs after a warm-up (the copy of A into the output, which every in-place method needs,
// timed alone and taken off), the peak working memory besides A and Q, the bandwidth of A read
// plus Q written over the time, ||Q^T Q - I||_F and ||A - Q R||_F / ||A||_F (R = Q^T A where the
// method does not return it).
// Then TSQR at several block heights and panel widths, and TSQR in the Tensor Core variants'
// arithmetic (fp16-refined, tf32, fp16) against its FP32 tree.
// --conditions: the first table again at each shape for A = U diag(sigma) V^T of condition number
// 1e2, 1e8, 1e12 and 1e15 (conditioned() says what the FP32 A then holds).
// Usage: bench_qr [--quick | --orthonormalizers | --conditions]   (--orthonormalizers: the four shapes'
// first table only; --quick: 4096 x 16, Gaussian and conditioned)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "randnla/backends.hpp"
#include "bench_common.hpp"
#include "randnla/orthonormalize/orthonormalize.hpp"
#include "randnla/tsqr/tsqr.hpp"

using namespace randnla;

namespace {

/// Q over `q` (holding A) by `method`, R into r; returns the method that ran.
Orthonormalizer factor(Backend& b, Orthonormalizer method, MatrixView<const float> a, MatrixView<float> q,
                       MatrixView<float> r) {
  if (method == Orthonormalizer::Tsqr) {
    TsqrOptions o;
    o.q_buffer = q;
    TsqrResult t = tsqr(b, q, o);
    b.copy(t.R.view(), r);
    return method;
  }
  const Orthonormalizer ran = orthonormalize(b, q, method);
  b.product(Op::T, Op::N, 1.0f, MatrixView<const float>(q), a, 0.0f, r, ProductPrecision::fp32());
  return ran;
}

/// A Gaussian m x n matrix.
Matrix<float> gaussian(Backend& b, index_t m, index_t n) {
  Matrix<float> a(b, m, n, "A");
  b.fill_random(RandomSpec{Distribution::Gaussian, 9, 0}, a.view());
  return a;
}

/// The Q factor (Householder) of a Gaussian m x n matrix drawn from `stream`.
Matrix<float> random_orthonormal(Backend& b, index_t m, index_t n, std::uint64_t stream) {
  Matrix<float> q(b, m, n, "Q"), tau(b, n, 1, "tau");
  b.fill_random(RandomSpec{Distribution::Gaussian, 9, stream}, q.view());
  b.qr(q.view(), tau.view());
  b.form_q(q.view(), tau.view());
  return q;
}

/// A = U diag(sigma) V^T (m x n, n >= 2), sigma_j = cond^(-j / (n - 1)), U and V random orthonormal.
/// Rounded to FP32, A keeps singular values down to about 2^-24 ||A||_2 only: beyond cond ~1e7 it
/// is numerically rank-deficient in FP32, which is what a QR of it must survive or report.
Matrix<float> conditioned(Backend& b, index_t m, index_t n, double cond) {
  Matrix<float> u = random_orthonormal(b, m, n, 1), v = random_orthonormal(b, n, n, 2);
  std::vector<float> sigma(static_cast<std::size_t>(n));
  for (index_t j = 0; j < n; ++j) sigma[j] = static_cast<float>(std::pow(cond, -static_cast<double>(j) / (n - 1)));
  Matrix<float> s(b, n, 1, "sigma"), a(b, m, n, "A");
  b.copy(MatrixView<const float>(sigma.data(), n, 1, n, MemorySpace::Host), s.view());
  b.scale_columns(s, u.view());
  b.product(Op::N, Op::T, 1.0f, u, v, 0.0f, a, ProductPrecision::fp32());
  return a;
}

/// One orthonormaliser on A, Q into q and R into r: its row of the table (the copy of A, `copy`
/// ms, taken off its time).
void run_method(Backend& b, MatrixView<const float> a, MatrixView<float> q, MatrixView<float> r, double copy,
                Orthonormalizer method, const std::string& name) {
  const index_t m = a.rows(), n = a.cols();
  const double ms = randnla::median_ms(b, [&] {
    b.copy(a, q);
    if (method == Orthonormalizer::Tsqr) {
      TsqrOptions o;
      o.q_buffer = q;
      tsqr(b, q, o);
    } else {
      orthonormalize(b, q, method);
    }
  }, 7, 1) - copy;
  b.copy(a, q);
  b.synchronize();
  const std::size_t before = b.memory_use().bytes;
  b.reset_peak_memory();
  const Orthonormalizer ran = factor(b, method, a, q, r);
  b.synchronize();
  const double work = static_cast<double>(b.memory_use().peak_bytes - before) / (1 << 20);
  const double gbs = 2.0 * 4.0 * static_cast<double>(m * n) / ms * 1e-6;
  const std::string shown = name + (ran != method ? std::string(" (") + to_string(ran) + ")" : "");
  std::printf("%8ld x %-4ld %-30s %9.3f ms  %8.1f MiB  %7.1f GB/s (%4.1f%% of 3.0 TB/s)  orth %.2e  resid %.2e\n",
              static_cast<long>(m), static_cast<long>(n), shown.c_str(), ms, work, gbs, gbs / 30.0,
              orthogonality_loss(b, q), factorization_residual(b, a, q, r));
}

/// Every orthonormaliser on A (m x n); `label` (may be empty) goes before the method's name. A
/// method that throws gets a row saying so.
void run(Backend& b, MatrixView<const float> a, const std::string& label = "") {
  Matrix<float> q(b, a.rows(), a.cols(), "Q"), r(b, a.cols(), a.cols(), "R");
  const double copy = randnla::median_ms(b, [&] { b.copy(a, q.view()); }, 7, 1);
  for (Orthonormalizer method : {Orthonormalizer::Householder, Orthonormalizer::CholeskyQR, Orthonormalizer::CholeskyQR2,
                                 Orthonormalizer::RandCholeskyQR, Orthonormalizer::RandCholeskyQRSparse,
                                 Orthonormalizer::Auto, Orthonormalizer::Tsqr}) {
    const std::string name = label + (label.empty() ? "" : " ") + to_string(method);
    try {
      run_method(b, a, q.view(), r.view(), copy, method, name);
    } catch (const Error& e) {
      std::printf("%8ld x %-4ld %-30s fails: %s\n", static_cast<long>(a.rows()), static_cast<long>(a.cols()),
                  name.c_str(), e.what());
    }
    std::fflush(stdout);
  }
}

/// TSQR at the backend's choice, at block heights of 2, 4 and 8 times the panel's columns, and in
/// panels of 32 and 64 columns (BCGS2 between them), where the backend takes them.
void tsqr_sweep(Backend& b, index_t m, index_t n) {
  const Matrix<float> a = gaussian(b, m, n);
  Matrix<float> q(b, m, n, "Q");
  struct Config {
    index_t leaf, panel;
  };
  const index_t w = std::min<index_t>(n, 128);
  for (Config c : {Config{0, 0}, Config{2 * w, 0}, Config{4 * w, 0}, Config{8 * w, 0}, Config{0, 32}, Config{0, 64}}) {
    if (c.panel >= n) continue;
    TsqrOptions o;
    o.leaf_rows = c.leaf;
    o.panel_columns = c.panel;
    o.q_buffer = q.view();
    TsqrReport report;
    const double ms = randnla::median_ms(b, [&] {
      b.copy(a.view(), q.view());
      try {
        report = tsqr(b, q, o).report;
      } catch (const InvalidArgument&) {
        report.levels = 0;
      }
    }, 7, 1);
    if (report.levels > 0)
      std::printf("%8ld x %-4ld tsqr leaf_rows %-5ld panel_columns %-3ld %9.3f ms (copy of A included), %d levels, %ld "
                  "leaves, %ld panels, %s, orth %.2e\n",
                  static_cast<long>(m), static_cast<long>(n), static_cast<long>(c.leaf), static_cast<long>(c.panel), ms,
                  report.levels, static_cast<long>(report.leaves), static_cast<long>(report.panels),
                  report.blocks.c_str(), orthogonality_loss(b, q));
  }
}

/// TSQR in each arithmetic (FP32, then the Tensor Core variants), Q over a copy of A: time with the
/// copy taken off, both error measures.
void tsqr_arithmetics(Backend& b, index_t m, index_t n) {
  const Matrix<float> a = gaussian(b, m, n);
  Matrix<float> q(b, m, n, "Q");
  const double copy = randnla::median_ms(b, [&] { b.copy(a.view(), q.view()); }, 7, 1);
  for (TsqrArithmetic arithmetic :
       {TsqrArithmetic::FP32, TsqrArithmetic::FP16Refined, TsqrArithmetic::TF32, TsqrArithmetic::FP16}) {
    TsqrOptions o;
    o.arithmetic = arithmetic;
    o.q_buffer = q.view();
    TsqrResult t;
    const double ms = randnla::median_ms(b, [&] {
      b.copy(a.view(), q.view());
      t = tsqr(b, q, o);
    }, 7, 1) - copy;
    std::printf("%8ld x %-4ld tsqr %-13s %9.3f ms  %d levels, %ld panels, %s, orth %.2e  resid %.2e\n",
                static_cast<long>(m), static_cast<long>(n), to_string(arithmetic), ms, t.report.levels,
                static_cast<long>(t.report.panels), t.report.blocks.c_str(), orthogonality_loss(b, q),
                factorization_residual(b, a, q, t.R));
    std::fflush(stdout);
  }
}

/// The orthonormalisers' table for conditioned() matrices of each shape at cond 1e2, 1e8, 1e12, 1e15.
void run_conditions(Backend& b, const std::vector<std::pair<index_t, index_t>>& shapes) {
  for (auto [m, n] : shapes)
    for (double cond : {1e2, 1e8, 1e12, 1e15}) {
      char label[32];
      std::snprintf(label, sizeof label, "cond %.0e", cond);
      run(b, conditioned(b, m, n, cond), label);
    }
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  auto b = make_backend(cuda_available() ? BackendKind::Cuda : BackendKind::Host);
  std::printf("bench_qr on %s\n", b->description().c_str());
  const bool conditions = argc > 1 && std::strcmp(argv[1], "--conditions") == 0;
  if (quick) {
    run(*b, gaussian(*b, 4096, 16));
    run_conditions(*b, {{4096, 16}});
    tsqr_arithmetics(*b, 4096, 16);
    return 0;
  }
  const std::vector<std::pair<index_t, index_t>> shapes{{1048576, 16}, {1048576, 64}, {65536, 128}, {65536, 512}};
  if (conditions) return run_conditions(*b, shapes), 0;
  for (auto [m, n] : shapes) run(*b, gaussian(*b, m, n));
  if (argc > 1 && std::strcmp(argv[1], "--orthonormalizers") == 0) return 0;
  for (auto [m, n] : shapes) tsqr_sweep(*b, m, n);
  for (auto [m, n] : shapes) tsqr_arithmetics(*b, m, n);
  return 0;
}
