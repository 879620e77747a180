// QR of tall-skinny matrices on the H100 at the TSQR issue's shapes (1048576 x 16, 1048576 x 64,
// 65536 x 128, 65536 x 512; A Gaussian): every orthonormaliser of the library, among them the
// peers cuSOLVER sgeqrf + sorgqr (householder) and one FP64 CholeskyQR pass (cholqr). Each: median
// of 7 runs after a warm-up (the copy of A into the output, which every in-place method needs,
// timed alone and taken off), the peak working memory besides A and Q, the bandwidth of A read
// plus Q written over the time, ||Q^T Q - I||_F and ||A - Q R||_F / ||A||_F (R = Q^T A where the
// method does not return it).
// Then TSQR at several block heights and panel widths, and TSQR in the Tensor Core variants'
// arithmetic (fp16-refined, tf32, fp16) against its FP32 tree.
// Usage: bench_qr [--quick | --orthonormalizers]   (--orthonormalizers: the four shapes' first table only)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
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

void run(Backend& b, index_t m, index_t n) {
  Matrix<float> a(b, m, n, "A"), q(b, m, n, "Q"), r(b, n, n, "R");
  b.fill_random(RandomSpec{Distribution::Gaussian, 9, 0}, a.view());
  const double copy = randnla::median_ms(b, [&] { b.copy(a.view(), q.view()); }, 7, 1);
  for (Orthonormalizer method : {Orthonormalizer::Householder, Orthonormalizer::CholeskyQR, Orthonormalizer::CholeskyQR2,
                                 Orthonormalizer::RandCholeskyQR, Orthonormalizer::RandCholeskyQRSparse,
                                 Orthonormalizer::Auto, Orthonormalizer::Tsqr}) {
    const double ms = randnla::median_ms(b, [&] {
      b.copy(a.view(), q.view());
      if (method == Orthonormalizer::Tsqr) {
        TsqrOptions o;
        o.q_buffer = q.view();
        tsqr(b, q, o);
      } else {
        orthonormalize(b, q.view(), method);
      }
    }, 7, 1) - copy;
    b.copy(a.view(), q.view());
    b.synchronize();
    const std::size_t before = b.memory_use().bytes;
    b.reset_peak_memory();
    const Orthonormalizer ran = factor(b, method, a, q.view(), r.view());
    b.synchronize();
    const double work = static_cast<double>(b.memory_use().peak_bytes - before) / (1 << 20);
    const double gbs = 2.0 * 4.0 * static_cast<double>(m * n) / ms * 1e-6;
    const std::string name =
        std::string(to_string(method)) + (ran != method ? std::string(" (") + to_string(ran) + ")" : "");
    std::printf("%8ld x %-4ld %-18s %9.3f ms  %8.1f MiB  %7.1f GB/s (%4.1f%% of 3.0 TB/s)  orth %.2e  resid %.2e\n",
                static_cast<long>(m), static_cast<long>(n), name.c_str(), ms, work, gbs, gbs / 30.0,
                orthogonality_loss(b, q), factorization_residual(b, a, q, r));
    std::fflush(stdout);
  }
}

/// TSQR at the backend's choice, at block heights of 2, 4 and 8 times the panel's columns, and in
/// panels of 32 and 64 columns (BCGS2 between them), where the backend takes them.
void tsqr_sweep(Backend& b, index_t m, index_t n) {
  Matrix<float> a(b, m, n, "A"), q(b, m, n, "Q");
  b.fill_random(RandomSpec{Distribution::Gaussian, 9, 0}, a.view());
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
  Matrix<float> a(b, m, n, "A"), q(b, m, n, "Q");
  b.fill_random(RandomSpec{Distribution::Gaussian, 9, 0}, a.view());
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

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  auto b = make_backend(cuda_available() ? BackendKind::Cuda : BackendKind::Host);
  std::printf("bench_qr on %s\n", b->description().c_str());
  if (quick) {
    run(*b, 4096, 16);
    tsqr_arithmetics(*b, 4096, 16);
    return 0;
  }
  run(*b, 1048576, 16);
  run(*b, 1048576, 64);
  run(*b, 65536, 128);
  run(*b, 65536, 512);
  if (argc > 1 && std::strcmp(argv[1], "--orthonormalizers") == 0) return 0;
  for (auto [m, n] : {std::pair<index_t, index_t>{1048576, 16}, {1048576, 64}, {65536, 128}, {65536, 512}})
    tsqr_sweep(*b, m, n);
  for (auto [m, n] : {std::pair<index_t, index_t>{1048576, 16}, {1048576, 64}, {65536, 128}, {65536, 512}})
    tsqr_arithmetics(*b, m, n);
  return 0;
}
