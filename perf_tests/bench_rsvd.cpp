// RSVD benchmark on the H100: m = n = 16384 (and 32768), k = 256, p = 16, q = 0 and 2, every
// sketch precision against cuSOLVER gesvdr, with the exact relative residual ||A - U S V^T||_F /
// ||A||_F computed on the device, and the phase breakdown of the median run.
// A = U diag(sigma) V^T, sigma_i = i^-1.5 for i <= 1024 (U, V Householder Q of Gaussians).
// Usage: bench_rsvd [--quick|--full] [gesvd|gesdd|jacobi|polar|gram|auto]  (the small SVD; auto = gram)
//        bench_rsvd --double [--quick]   FP64 data (the same matrix in FP64): rsvd of FP64 data
//                                        against cuSOLVER's FP64 gesvdr, the exact error in FP64
//        bench_rsvd --profile n q   one RSVD (auto, k = 256, p = 16) between cudaProfilerStart/Stop,
//                                   after a warm-up run, for ncu --profile-from-start off
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "randnla/backends.hpp"
#include "bench_common.hpp"
#include "randnla/rsvd/rsvd.hpp"

using namespace randnla;

double gesvdr_median_ms(const float* a, int m, int n, int k, int p, int iters, float* s, float* u, float* v,
                        double* copy_ms);
double gesvdr_median_ms(const double* a, int m, int n, int k, int p, int iters, double* s, double* u, double* v,
                        double* copy_ms);
#if defined(RANDNLA_BENCH_GESVDR)
void cuda_profiler(bool on);
#else
void cuda_profiler(bool) {}
#endif

namespace {

constexpr index_t kRank = 256, kOversampling = 16;  // the benchmark: k = 256, p = 16

Matrix<float> test_matrix(Backend& b, index_t n, index_t rank) {
  Matrix<float> u(b, n, rank, "U"), v(b, n, rank, "V"), sigma(b, rank, 1, "sigma"), a(b, n, n, "A");
  b.fill_random(RandomSpec{Distribution::Gaussian, 100, 0}, u.view());
  b.fill_random(RandomSpec{Distribution::Gaussian, 101, 0}, v.view());
  orthonormalize(b, u.view(), Orthonormalizer::Householder);
  orthonormalize(b, v.view(), Orthonormalizer::Householder);
  auto host = make_backend(BackendKind::Host);
  Matrix<float> hs(*host, rank, 1);
  for (index_t i = 0; i < rank; ++i) hs.data()[i] = static_cast<float>(std::pow(i + 1.0, -1.5));
  b.copy(hs.view(), sigma.view());
  b.scale_columns(sigma, u.view());
  b.product(Op::N, Op::T, 1.0f, u, v, 0.0f, a, ProductPrecision::fp32());
  return a;
}

/// ||A - U diag(S) V^T||_F / ||A||_F, the residual formed on the device in A's precision.
template <class T>
double exact_error(Backend& b, MatrixView<const T> a, MatrixView<const T> u, MatrixView<const T> s,
                   MatrixView<const T> v, double norm_a) {
  Matrix<T> e(b, a.rows(), a.cols(), "E"), us(b, u.rows(), u.cols(), "US");
  b.copy(a, e.view());
  b.copy(u, us.view());
  b.scale_columns(s, us.view());
  if constexpr (std::is_same<T, float>::value) b.product(Op::N, Op::T, -1.0f, us, v, 1.0f, e, ProductPrecision::fp32());
  else b.product(Op::N, Op::T, -1.0, us, v, 1.0, e);
  return b.frobenius_norm(MatrixView<const T>(e.view())) / norm_a;
}

/// FP64 data: the benchmark's matrix converted to FP64, rsvd of FP64 data (auto) against FP64
/// gesvdr, q = 0 and 2, the medians of 5 runs after 2 warm-ups.
void run_double(Backend& b, const std::vector<index_t>& sizes) {
  for (index_t n : sizes) {
    Matrix<double> a(b, n, n, "A");
    {
      const Matrix<float> a32 = test_matrix(b, n, 1024);
      b.convert(MatrixView<const float>(a32.view()), a.view());
    }
    const double norm_a = b.frobenius_norm(MatrixView<const double>(a.view()));
    for (int q : {0, 2}) {
      Matrix<double> s(b, kRank, 1), u(b, n, kRank), v(b, n, kRank);
#if defined(RANDNLA_BENCH_GESVDR)
      double copy_ms = 0;
      const double ms_peer = gesvdr_median_ms(a.data(), static_cast<int>(n), static_cast<int>(n), static_cast<int>(kRank),
                                              static_cast<int>(kOversampling), q, s.data(), u.data(), v.data(), &copy_ms);
      std::printf("fp64 n=%ld q=%d %-14s total %8.3f ms (A copy %.3f ms excluded)  error %.4e\n", static_cast<long>(n), q,
                  "gesvdr-fp64", ms_peer, copy_ms, exact_error<double>(b, a, u, s, v, norm_a));
#endif
      RsvdOptions o;
      o.oversampling = kOversampling;
      o.power_iterations = q;
      std::vector<RsvdResultOf<double>> runs;
      for (int r = 0; r < 7; ++r) runs.push_back(rsvd(b, MatrixView<const double>(a.view()), kRank, o));
      runs.erase(runs.begin(), runs.begin() + 2);
      std::sort(runs.begin(), runs.end(), [](const auto& x, const auto& y) { return x.report.total_ms() < y.report.total_ms(); });
      const RsvdResultOf<double>& med = runs[runs.size() / 2];
      std::string orth;
      for (const std::string& name : med.report.orthonormalizers) orth += (orth.empty() ? "" : ",") + name;
      std::printf("fp64 n=%ld q=%d %-14s total %8.3f ms  error %.4e  [%s] %s; %s\n", static_cast<long>(n), q, "rsvd-fp64",
                  med.report.total_ms(), exact_error<double>(b, a, med.U, med.S, med.V, norm_a),
                  med.report.phases.to_string().c_str(), med.report.sketch_kernel.c_str(), orth.c_str());
      std::fflush(stdout);
    }
  }
}

/// One auto RSVD of the benchmark's n x n matrix under the profiler, its phases printed.
void profile_one(Backend& b, index_t n, int q) {
  const Matrix<float> a = test_matrix(b, n, 1024);
  RsvdOptions o;
  o.oversampling = kOversampling;
  o.power_iterations = q;
  o.error_probes = 0;
  for (int rep = 0; rep < 2; ++rep) {
    if (rep == 1) cuda_profiler(true);
    const RsvdResult r = rsvd(b, a, kRank, o);
    if (rep == 1) cuda_profiler(false);
    const RsvdReport& rp = r.report;
    std::printf("n=%ld q=%d auto total %.3f ms [%s]\n", static_cast<long>(n), q, rp.total_ms(),
                rp.phases.to_string().c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const bool profile = argc > 3 && std::strcmp(argv[1], "--profile") == 0;
  const bool fp64 = argc > 1 && std::strcmp(argv[1], "--double") == 0;
  const SmallSvd small_svd =
      argc > 2 && !profile && !fp64 ? parse_enum<SmallSvd>(argv[2], "small svd") : RsvdOptions{}.small_svd;
  if (!cuda_available()) {
    std::printf("bench_rsvd: no GPU, nothing to measure\n");
    return 0;
  }
  auto b = make_backend(BackendKind::Cuda);
  std::printf("device: %s\n", b->description().c_str());
  if (profile) {
    profile_one(*b, std::atol(argv[2]), std::atoi(argv[3]));
    return 0;
  }
  if (fp64) {
    const bool quick_double = argc > 2 && std::strcmp(argv[2], "--quick") == 0;
    run_double(*b, quick_double ? std::vector<index_t>{16384} : std::vector<index_t>{16384, 32768});
    return 0;
  }
  const index_t k = kRank, p = kOversampling;
  {  // The small SVD of the RSVD: an l x l factor, l = k + p.
    const index_t l = k + p;
    Matrix<float> r(*b, l, l), work(*b, l, l), s(*b, l, 1), u(*b, l, l), vt(*b, l, l);
    b->fill_random(RandomSpec{Distribution::Gaussian, 7, 0}, r.view());
    for (SvdMethod m : {SvdMethod::Gesvd, SvdMethod::Gesdd, SvdMethod::Jacobi, SvdMethod::Polar}) {
      if (!b->capabilities().supports(m)) continue;
      const double copy_ms = bench::median_ms(*b, [&] { b->copy(r.view(), work.view()); });
      const double ms = bench::median_ms(*b, [&] {
        b->copy(r.view(), work.view());
        b->svd(work.view(), s.view(), u.view(), vt.view(), m);
      });
      std::printf("small svd %ldx%ld %-7s %8.3f ms\n", static_cast<long>(l), static_cast<long>(l), to_string(m), ms - copy_ms);
    }
  }
  for (index_t n : quick ? std::vector<index_t>{16384} : std::vector<index_t>{16384, 32768}) {
    const Matrix<float> a = test_matrix(*b, n, 1024);
    const double norm_a = b->frobenius_norm(a);
    for (int q : {0, 2}) {
      Matrix<float> s(*b, k, 1), u(*b, n, k), v(*b, n, k);
      double copy_ms = 0;
#if defined(RANDNLA_BENCH_GESVDR)
      const double ms_peer = gesvdr_median_ms(a.data(), static_cast<int>(n), static_cast<int>(n), static_cast<int>(k),
                                              static_cast<int>(p), q, s.data(), u.data(), v.data(), &copy_ms);
      const double err_peer = exact_error<float>(*b, a, u, s, v, norm_a);
      std::printf("n=%ld q=%d %-14s total %8.3f ms (A copy %.3f ms excluded)  error %.4e\n", static_cast<long>(n), q,
                  "gesvdr", ms_peer, copy_ms, err_peer);
#endif
      for (auto sk : {ProductPrecision::fp32(), ProductPrecision::tf32(), ProductPrecision::split_in(TensorCore::FP16),
                      ProductPrecision::split_in(TensorCore::TF32), ProductPrecision::automatic()}) {
        RsvdOptions o;
        o.small_svd = small_svd;
        o.oversampling = p;
        o.power_iterations = q;
        o.products = sk;
        o.error_probes = 0;
        std::vector<RsvdResult> runs;
        for (int r = 0; r < 7; ++r) runs.push_back(rsvd(*b, a, k, o));
        runs.erase(runs.begin(), runs.begin() + 2);  // warm-up
        std::sort(runs.begin(), runs.end(),
                  [](const RsvdResult& x, const RsvdResult& y) { return x.report.total_ms() < y.report.total_ms(); });
        const RsvdResult& med = runs[runs.size() / 2];
        const RsvdReport& rp = med.report;
        const double err = exact_error<float>(*b, a, med.U, med.S, med.V, norm_a);
        std::string orth;
        for (const std::string& name : rp.orthonormalizers) orth += (orth.empty() ? "" : ",") + name;
        std::printf("n=%ld q=%d %-14s total %8.3f ms  error %.4e  [%s] %s; %s\n", static_cast<long>(n), q,
                    to_string(sk), rp.total_ms(), err, rp.phases.to_string().c_str(), rp.sketch_kernel.c_str(),
                    orth.c_str());
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
