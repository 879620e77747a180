// The dense pieces an RSVD of rank l = k + p is made of, timed one by one on the GPU (and the
// l x l ones on the host CPU too), to choose how the orthonormalisation and the small SVD are
// built: CholeskyQR's Gram, potrf, trsm and syncs on an m x l panel; eigen, QR and SVD routines
// of cuSOLVER and LAPACK on an l x l matrix; the Tensor Core products at l = 256, 272, 384.
// Wall time with the stream synchronised (as the RSVD's phases are timed), median of 15.
// Usage: bench_dense_parts [m] [l]      (default 16384 272)
//        bench_dense_parts cholqr m l    CholeskyQR's cuBLAS and cuSOLVER pieces alone
//        bench_dense_parts passes [n]    the library's element-wise passes over n x n (35840)
//        bench_dense_parts splitqr m l   a CholeskyQR's Tensor Core pieces (split products) at m x l
//        bench_dense_parts autoqr m l    Auto's orthonormalisation ten times (for a kernel timeline)
//        bench_dense_parts syevd [l]     one Dsyevd between cudaProfilerStart/Stop, for
//                                        ncu --profile-from-start off (its kernels one by one)
//        bench_dense_parts eig [l]       the same for the library's symmetric_eig
#include <cublas_v2.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <random>
#include <vector>

#include "randnla/backends.hpp"
#include "cuda/factorizations/symmetric_eig.cuh"
#include "portable/factorizations/lapack.hpp"
#include "randnla/orthonormalize/cholesky_qr_ops.hpp"
#include "randnla/orthonormalize/orthonormalize.hpp"
#include "randnla/report.hpp"

extern "C" {
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
             int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info);
}

using namespace randnla;

namespace {

void ok(cudaError_t e, const char* w) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(w) + ": " + cudaGetErrorString(e));
}
void ok(cusolverStatus_t e, const char* w) {
  if (e != CUSOLVER_STATUS_SUCCESS) throw std::runtime_error(std::string(w) + ": cuSOLVER status " + std::to_string(e));
}
void ok(cublasStatus_t e, const char* w) {
  if (e != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(w) + ": cuBLAS status " + std::to_string(e));
}

cudaStream_t g_stream;

double stream_ms(const std::function<void()>& f, int reps = 15) {
  for (int i = 0; i < 3; ++i) f();
  ok(cudaStreamSynchronize(g_stream), "sync");
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ok(cudaStreamSynchronize(g_stream), "sync");
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void report(const std::string& what, double ms) { std::printf("%-58s %9.3f ms\n", what.c_str(), ms), std::fflush(stdout); }

__global__ void f32_to_f64(const float* x, double* y, long n) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n; i += gridDim.x * static_cast<long>(blockDim.x))
    y[i] = x[i];
}

template <class T>
T* device_array(std::size_t n) {
  void* p = nullptr;
  ok(cudaMalloc(&p, n * sizeof(T) + 16), "cudaMalloc");
  return static_cast<T*>(p);
}

std::vector<double> gaussian(std::size_t n, unsigned seed) {
  std::vector<double> v(n);
  srand(seed);
  for (auto& x : v) {
    double s = 0;
    for (int i = 0; i < 12; ++i) s += rand() / static_cast<double>(RAND_MAX);
    x = s - 6.0;
  }
  return v;
}

/// G = R R^T (l x l, column-major) with R Gaussian: the symmetric positive definite test matrix
/// of the l x l routines.
std::vector<double> spd_matrix(int l) {
  const std::size_t n = static_cast<std::size_t>(l);
  const auto r = gaussian(n * n, 2);
  std::vector<double> g(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t t = 0; t < n; ++t) g[i + j * n] += r[i + t * n] * r[j + t * n];
  return g;
}

void cholesky_qr_parts(cublasHandle_t blas, cusolverDnHandle_t sol, int m, int l) {
  const std::string tag = " (" + std::to_string(m) + " x " + std::to_string(l) + ")";
  const auto hy = gaussian(static_cast<std::size_t>(m) * l, 1);
  std::vector<float> hyf(hy.begin(), hy.end());
  float* yf = device_array<float>(hyf.size());
  double *y = device_array<double>(hy.size()), *y2 = device_array<double>(hy.size());
  double *g = device_array<double>(static_cast<std::size_t>(l) * l), *g0 = device_array<double>(static_cast<std::size_t>(l) * l);
  int* info = device_array<int>(1);
  ok(cudaMemcpy(yf, hyf.data(), hyf.size() * 4, cudaMemcpyHostToDevice), "copy");
  f32_to_f64<<<1024, 256, 0, g_stream>>>(yf, y, static_cast<long>(hy.size()));
  const double one = 1, zero = 0;
  const float onef = 1, zerof = 0;
  report("convert FP32 -> FP64" + tag,
         stream_ms([&] { f32_to_f64<<<1024, 256, 0, g_stream>>>(yf, y2, static_cast<long>(hy.size())); }));
  report("Gram DGEMM (T, N)" + tag, stream_ms([&] {
           ok(cublasDgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, l, l, m, &one, y, m, y, m, &zero, g0, l), "dgemm");
         }));
  report("Gram DSYRK" + tag, stream_ms([&] {
           ok(cublasDsyrk(blas, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, l, m, &one, y, m, &zero, g, l), "dsyrk");
         }));
  report("Gram SGEMM FP32 (T, N)" + tag, stream_ms([&] {
           ok(cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, l, l, m, &onef, yf, m, yf, m, &zerof,
                          reinterpret_cast<float*>(g), l), "sgemm");
         }));
  int lwork = 0;
  ok(cusolverDnDpotrf_bufferSize(sol, CUBLAS_FILL_MODE_UPPER, l, g, l, &lwork), "potrf ws");
  double* work = device_array<double>(lwork + 1);
  auto refresh = [&] { ok(cudaMemcpyAsync(g, g0, sizeof(double) * l * l, cudaMemcpyDeviceToDevice, g_stream), "copy"); };
  const double copy_ms = stream_ms(refresh);
  report("potrf, info left on the device" + std::string(" (l = ") + std::to_string(l) + ")", stream_ms([&] {
           refresh();
           ok(cusolverDnDpotrf(sol, CUBLAS_FILL_MODE_UPPER, l, g, l, work, lwork, info), "potrf");
         }) - copy_ms);
  report("potrf + info copied to the host", stream_ms([&] {
           refresh();
           ok(cusolverDnDpotrf(sol, CUBLAS_FILL_MODE_UPPER, l, g, l, work, lwork, info), "potrf");
           int h = 0;
           ok(cudaMemcpyAsync(&h, info, sizeof h, cudaMemcpyDeviceToHost, g_stream), "info");
           ok(cudaStreamSynchronize(g_stream), "sync");
         }) - copy_ms);
  refresh();
  ok(cusolverDnDpotrf(sol, CUBLAS_FILL_MODE_UPPER, l, g, l, work, lwork, info), "potrf");
  report("DTRSM right upper, Y := Y R^-1" + tag, stream_ms([&] {
           ok(cublasDtrsm(blas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, m, l, &one,
                          g, l, y2, m), "trsm");
         }));
  std::size_t dws = 0, hws = 0;
  cusolverDnParams_t prm;
  ok(cusolverDnCreateParams(&prm), "params");
  ok(cusolverDnXtrtri_bufferSize(sol, CUBLAS_FILL_MODE_UPPER, CUBLAS_DIAG_NON_UNIT, l, CUDA_R_64F, g, l, &dws, &hws),
     "trtri ws");
  void* dw = device_array<char>(dws + 1);
  std::vector<char> hw(hws + 1);
  double* rinv = device_array<double>(static_cast<std::size_t>(l) * l);
  report("DGEMM Y R^-1 alone (out of place)" + tag, stream_ms([&] {
           ok(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, l, l, &one, y, m, g, l, &zero, y2, m), "dgemm");
         }));
  report("DTRMM right upper, Y R^-1 (out of place)" + tag, stream_ms([&] {
           ok(cublasDtrmm(blas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, m, l, &one,
                          g, l, y, m, y2, m), "trmm");
         }));
  report("trtri R^-1 + DGEMM Y R^-1 (out of place)" + tag, stream_ms([&] {
           ok(cudaMemcpyAsync(rinv, g, sizeof(double) * l * l, cudaMemcpyDeviceToDevice, g_stream), "copy");
           ok(cusolverDnXtrtri(sol, CUBLAS_FILL_MODE_UPPER, CUBLAS_DIAG_NON_UNIT, l, CUDA_R_64F, rinv, l, dw, dws,
                               hw.data(), hws, info), "trtri");
           ok(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, l, l, &one, y, m, rinv, l, &zero, y2, m), "dgemm");
         }));
  double *eye = device_array<double>(static_cast<std::size_t>(l) * l), *eye0 = device_array<double>(static_cast<std::size_t>(l) * l);
  {
    std::vector<double> h(static_cast<std::size_t>(l) * l, 0.0);
    for (int i = 0; i < l; ++i) h[i + static_cast<std::size_t>(i) * l] = 1.0;
    ok(cudaMemcpy(eye0, h.data(), h.size() * 8, cudaMemcpyHostToDevice), "copy");
  }
  report("DTRSM left R X = I, then DGEMM Y X (out of place)" + tag, stream_ms([&] {
           ok(cudaMemcpyAsync(eye, eye0, sizeof(double) * l * l, cudaMemcpyDeviceToDevice, g_stream), "identity");
           ok(cublasDtrsm(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, l, l, &one,
                          g, l, eye, l), "trsm identity");
           ok(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, l, l, &one, y, m, eye, l, &zero, y2, m), "dgemm");
         }));
  report("DTRSM left R X = I alone (l = " + std::to_string(l) + ")", stream_ms([&] {
           ok(cudaMemcpyAsync(eye, eye0, sizeof(double) * l * l, cudaMemcpyDeviceToDevice, g_stream), "identity");
           ok(cublasDtrsm(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, l, l, &one,
                          g, l, eye, l), "trsm identity");
         }) - copy_ms);
  {  // the batched routines with one matrix: one kernel each instead of a blocked sequence?
    double** ptrs = device_array<double*>(2);
    const double* const* cptrs = reinterpret_cast<const double* const*>(ptrs);
    double* const host_ptrs[2] = {g, eye};
    ok(cudaMemcpy(ptrs, host_ptrs, sizeof host_ptrs, cudaMemcpyHostToDevice), "ptrs");
    report("DTRSM batched (batch 1) left R X = I (l = " + std::to_string(l) + ")", stream_ms([&] {
             ok(cudaMemcpyAsync(eye, eye0, sizeof(double) * l * l, cudaMemcpyDeviceToDevice, g_stream), "identity");
             ok(cublasDtrsmBatched(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, l, l,
                                   &one, cptrs, l, ptrs + 1, l, 1), "trsm batched");
           }) - copy_ms);
    report("potrf batched (batch 1) (l = " + std::to_string(l) + ")", stream_ms([&] {
             refresh();
             ok(cusolverDnDpotrfBatched(sol, CUBLAS_FILL_MODE_UPPER, l, ptrs, l, info, 1), "potrf batched");
           }) - copy_ms);
    std::size_t pd = 0, ph = 0;
    ok(cusolverDnXpotrf_bufferSize(sol, prm, CUBLAS_FILL_MODE_UPPER, l, CUDA_R_64F, g, l, CUDA_R_64F, &pd, &ph), "ws");
    void* pw = device_array<char>(pd + 1);
    std::vector<char> phw(ph + 1);
    cudaFree(pw);
    for (cusolverAlgMode_t alg : {CUSOLVER_ALG_0, CUSOLVER_ALG_1, CUSOLVER_ALG_2}) {
      if (cusolverDnSetAdvOptions(prm, CUSOLVERDN_POTRF, alg) != CUSOLVER_STATUS_SUCCESS) {
        std::printf("Xpotrf algorithm %d: not accepted\n", static_cast<int>(alg)), std::fflush(stdout);
        continue;
      }
      ok(cusolverDnXpotrf_bufferSize(sol, prm, CUBLAS_FILL_MODE_UPPER, l, CUDA_R_64F, g, l, CUDA_R_64F, &pd, &ph), "ws");
      pw = device_array<char>(pd + 1);
      phw.resize(ph + 1);
      report("Xpotrf, algorithm " + std::to_string(static_cast<int>(alg)) + " (l = " + std::to_string(l) + ")", stream_ms([&] {
               refresh();
               ok(cusolverDnXpotrf(sol, prm, CUBLAS_FILL_MODE_UPPER, l, CUDA_R_64F, g, l, CUDA_R_64F, pw, pd, phw.data(),
                                   ph, info), "xpotrf");
             }) - copy_ms);
      cudaFree(pw);
    }
    ok(cusolverDnSetAdvOptions(prm, CUSOLVERDN_POTRF, CUSOLVER_ALG_0), "default potrf");
    cudaFree(ptrs);
  }
  cudaFree(eye);
  cudaFree(eye0);
  report("a 4-byte copy to the host and a stream sync", stream_ms([&] {
           int h = 0;
           ok(cudaMemcpyAsync(&h, info, sizeof h, cudaMemcpyDeviceToHost, g_stream), "info");
           ok(cudaStreamSynchronize(g_stream), "sync");
         }));
  cusolverDnDestroyParams(prm);
  for (void* p : {static_cast<void*>(yf), static_cast<void*>(y), static_cast<void*>(y2), static_cast<void*>(g),
                  static_cast<void*>(g0), static_cast<void*>(work), dw, static_cast<void*>(rinv), static_cast<void*>(info)})
    cudaFree(p);
}

/// What cuSOLVER's syevd is made of at this l: the reduction to tridiagonal form (sytrd), the
/// formation of its Q (orgtr), the eigenvalues alone, the FP32 routine, the top l - 16 pairs.
template <class Timed>
void syevd_stages(cusolverDnHandle_t sol, double* g, const double* g0, double* w, int* info, int l, const Timed& timed) {
  const std::size_t ll = static_cast<std::size_t>(l) * l;
  double *d = device_array<double>(l), *e = device_array<double>(l), *tau = device_array<double>(l);
  int lt = 0, lo = 0, lv = 0;
  ok(cusolverDnDsytrd_bufferSize(sol, CUBLAS_FILL_MODE_UPPER, l, g, l, d, e, tau, &lt), "ws");
  ok(cusolverDnDorgtr_bufferSize(sol, CUBLAS_FILL_MODE_UPPER, l, g, l, tau, &lo), "ws");
  ok(cusolverDnDsyevd_bufferSize(sol, CUSOLVER_EIG_MODE_NOVECTOR, CUBLAS_FILL_MODE_UPPER, l, g, l, w, &lv), "ws");
  double* work = device_array<double>(std::max({lt, lo, lv}) + 1);
  timed("cuSOLVER Dsytrd", [&] { ok(cusolverDnDsytrd(sol, CUBLAS_FILL_MODE_UPPER, l, g, l, d, e, tau, work, lt, info), "sytrd"); });
  timed("cuSOLVER Dsytrd + Dorgtr", [&] {
    ok(cusolverDnDsytrd(sol, CUBLAS_FILL_MODE_UPPER, l, g, l, d, e, tau, work, lt, info), "sytrd");
    ok(cusolverDnDorgtr(sol, CUBLAS_FILL_MODE_UPPER, l, g, l, tau, work, lo, info), "orgtr");
  });
  timed("cuSOLVER Dsyevd, eigenvalues only", [&] {
    ok(cusolverDnDsyevd(sol, CUSOLVER_EIG_MODE_NOVECTOR, CUBLAS_FILL_MODE_UPPER, l, g, l, w, work, lv, info), "syevd");
  });
  int lx = 0, found = 0;
  const int il = 17;
  ok(cusolverDnDsyevdx_bufferSize(sol, CUSOLVER_EIG_MODE_VECTOR, CUSOLVER_EIG_RANGE_I, CUBLAS_FILL_MODE_UPPER, l, g, l,
                                  0.0, 0.0, il, l, &found, w, &lx), "ws");
  double* workx = device_array<double>(lx + 1);
  timed("cuSOLVER Dsyevdx, the top l - 16 pairs", [&] {
    ok(cusolverDnDsyevdx(sol, CUSOLVER_EIG_MODE_VECTOR, CUSOLVER_EIG_RANGE_I, CUBLAS_FILL_MODE_UPPER, l, g, l, 0.0, 0.0,
                         il, l, &found, w, workx, lx, info), "syevdx");
  });
  float *gf0 = device_array<float>(ll), *gf = device_array<float>(ll), *wf = device_array<float>(l);
  std::vector<double> hg(ll);
  ok(cudaMemcpy(hg.data(), g0, ll * 8, cudaMemcpyDeviceToHost), "copy");
  const std::vector<float> hgf(hg.begin(), hg.end());
  ok(cudaMemcpy(gf0, hgf.data(), ll * 4, cudaMemcpyHostToDevice), "copy");
  int ls = 0;
  ok(cusolverDnSsyevd_bufferSize(sol, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, l, gf, l, wf, &ls), "ws");
  float* works = device_array<float>(ls + 1);
  timed("cuSOLVER Ssyevd (FP32)", [&] {  // its device-side copy of G: half the bytes of the one subtracted
    ok(cudaMemcpyAsync(gf, gf0, ll * 4, cudaMemcpyDeviceToDevice, g_stream), "copy");
    ok(cusolverDnSsyevd(sol, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, l, gf, l, wf, works, ls, info), "ssyevd");
  });
  for (void* p : {static_cast<void*>(d), static_cast<void*>(e), static_cast<void*>(tau), static_cast<void*>(work),
                  static_cast<void*>(workx), static_cast<void*>(gf0), static_cast<void*>(gf), static_cast<void*>(wf),
                  static_cast<void*>(works)})
    cudaFree(p);
}

void small_parts(cusolverDnHandle_t sol, cublasHandle_t blas, int l) {
  const std::string tag = " (l = " + std::to_string(l) + ", FP64)";
  const std::vector<double> hg = spd_matrix(l);
  const std::size_t ll = static_cast<std::size_t>(l) * l;
  double *g0 = device_array<double>(ll), *g = device_array<double>(ll), *w = device_array<double>(l),
         *tau = device_array<double>(l);
  int* info = device_array<int>(1);
  ok(cudaMemcpy(g0, hg.data(), ll * 8, cudaMemcpyHostToDevice), "copy");
  auto refresh = [&] { ok(cudaMemcpyAsync(g, g0, ll * 8, cudaMemcpyDeviceToDevice, g_stream), "copy"); };
  const double copy_ms = stream_ms(refresh);
  auto timed = [&](const std::string& name, const std::function<void()>& f) {
    report(name + tag, stream_ms([&] {
             refresh();
             f();
           }) - copy_ms);
  };
  cusolverDnParams_t prm;
  ok(cusolverDnCreateParams(&prm), "params");
  {
    int lwork = 0;
    ok(cusolverDnDsyevd_bufferSize(sol, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, l, g, l, w, &lwork), "ws");
    double* work = device_array<double>(lwork + 1);
    timed("cuSOLVER Dsyevd", [&] {
      ok(cusolverDnDsyevd(sol, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, l, g, l, w, work, lwork, info), "syevd");
    });
    cudaFree(work);
  }
  {
    std::size_t dws = 0, hws = 0;
    ok(cusolverDnXsyevd_bufferSize(sol, prm, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, l, CUDA_R_64F, g, l,
                                   CUDA_R_64F, w, CUDA_R_64F, &dws, &hws), "ws");
    void* dw = device_array<char>(dws + 1);
    std::vector<char> hw(hws + 1);
    timed("cuSOLVER Xsyevd", [&] {
      ok(cusolverDnXsyevd(sol, prm, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, l, CUDA_R_64F, g, l, CUDA_R_64F, w,
                          CUDA_R_64F, dw, dws, hw.data(), hws, info), "xsyevd");
    });
    cudaFree(dw);
    ok(cusolverDnXsyevBatched_bufferSize(sol, prm, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, l, CUDA_R_64F, g, l,
                                         CUDA_R_64F, w, CUDA_R_64F, &dws, &hws, 1), "ws");
    dw = device_array<char>(dws + 1);
    hw.resize(hws + 1);
    timed("cuSOLVER XsyevBatched (batch 1)", [&] {
      ok(cusolverDnXsyevBatched(sol, prm, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, l, CUDA_R_64F, g, l,
                                CUDA_R_64F, w, CUDA_R_64F, dw, dws, hw.data(), hws, info, 1), "xsyevbatched");
    });
    cudaFree(dw);
  }
  syevd_stages(sol, g, g0, w, info, l, timed);
  {
    syevjInfo_t params;
    ok(cusolverDnCreateSyevjInfo(&params), "syevj info");
    int lwork = 0;
    ok(cusolverDnDsyevj_bufferSize(sol, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, l, g, l, w, &lwork, params), "ws");
    double* work = device_array<double>(lwork + 1);
    timed("cuSOLVER Dsyevj (default tolerance)", [&] {
      ok(cusolverDnDsyevj(sol, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, l, g, l, w, work, lwork, info, params),
         "syevj");
    });
    cusolverDnDestroySyevjInfo(params);
    cudaFree(work);
  }
  {
    int lq = 0, lo = 0;
    ok(cusolverDnDgeqrf_bufferSize(sol, l, l, g, l, &lq), "ws");
    ok(cusolverDnDorgqr_bufferSize(sol, l, l, l, g, l, tau, &lo), "ws");
    double* work = device_array<double>(std::max(lq, lo) + 1);
    timed("cuSOLVER Dgeqrf + Dorgqr", [&] {
      ok(cusolverDnDgeqrf(sol, l, l, g, l, tau, work, lq, info), "geqrf");
      ok(cusolverDnDorgqr(sol, l, l, l, g, l, tau, work, lo, info), "orgqr");
    });
    cudaFree(work);
  }
  {
    int lwork = 0;
    ok(cusolverDnDgesvd_bufferSize(sol, l, l, &lwork), "ws");
    double *work = device_array<double>(lwork + 1), *u = device_array<double>(ll), *vt = device_array<double>(ll);
    timed("cuSOLVER Dgesvd", [&] {
      ok(cusolverDnDgesvd(sol, 'S', 'S', l, l, g, l, w, u, l, vt, l, work, lwork, nullptr, info), "gesvd");
    });
    std::size_t dws = 0, hws = 0;
    double err = 0;
    ok(cusolverDnXgesvdp_bufferSize(sol, prm, CUSOLVER_EIG_MODE_VECTOR, 1, l, l, CUDA_R_64F, g, l, CUDA_R_64F, w,
                                    CUDA_R_64F, u, l, CUDA_R_64F, vt, l, CUDA_R_64F, &dws, &hws), "ws");
    void* dw = device_array<char>(dws + 1);
    std::vector<char> hw(hws + 1);
    timed("cuSOLVER Xgesvdp", [&] {
      ok(cusolverDnXgesvdp(sol, prm, CUSOLVER_EIG_MODE_VECTOR, 1, l, l, CUDA_R_64F, g, l, CUDA_R_64F, w, CUDA_R_64F, u, l,
                           CUDA_R_64F, vt, l, CUDA_R_64F, dw, dws, hw.data(), hws, info, &err), "gesvdp");
    });
    const double one = 1, zero = 0;
    timed("DGEMM l x l x l", [&] {
      ok(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, l, l, l, &one, g0, l, g0, l, &zero, u, l), "dgemm");
    });
    for (void* p : {static_cast<void*>(work), static_cast<void*>(u), static_cast<void*>(vt), dw}) cudaFree(p);
  }
  // The same on the host CPU, counting the copies of G there and back.
  std::vector<double> a(ll), wh(l), tauh(l), u(ll), vt(ll);
  auto host_timed = [&](const std::string& name, const std::function<void()>& f) {
    report(name + " (l = " + std::to_string(l) + ", host LAPACK, copies included)", stream_ms([&] {
             ok(cudaMemcpyAsync(a.data(), g0, ll * 8, cudaMemcpyDeviceToHost, g_stream), "d2h");
             ok(cudaStreamSynchronize(g_stream), "sync");
             f();
             ok(cudaMemcpyAsync(g, a.data(), ll * 8, cudaMemcpyHostToDevice, g_stream), "h2d");
           }, 7));
  };
  host_timed("dsyevd", [&] {
    int n = l, lw = -1, liw = -1, inf = 0, iq = 0;
    double q = 0;
    dsyevd_("V", "U", &n, a.data(), &n, wh.data(), &q, &lw, &iq, &liw, &inf);
    std::vector<double> wk(static_cast<std::size_t>(q) + 1);
    std::vector<int> iw(iq + 1);
    lw = static_cast<int>(wk.size()), liw = static_cast<int>(iw.size());
    dsyevd_("V", "U", &n, a.data(), &n, wh.data(), wk.data(), &lw, iw.data(), &liw, &inf);
  });
  host_timed("dgeqrf + dorgqr", [&] {
    int n = l, lw = 64 * l, inf = 0;
    std::vector<double> wk(lw);
    dgeqrf_(&n, &n, a.data(), &n, tauh.data(), wk.data(), &lw, &inf);
    dorgqr_(&n, &n, &n, a.data(), &n, tauh.data(), wk.data(), &lw, &inf);
  });
  host_timed("dgesdd", [&] {
    int n = l, lw = -1, inf = 0;
    double q = 0;
    std::vector<int> iw(8 * l);
    dgesdd_("S", &n, &n, a.data(), &n, wh.data(), u.data(), &n, vt.data(), &n, &q, &lw, iw.data(), &inf);
    std::vector<double> wk(static_cast<std::size_t>(q) + 1);
    lw = static_cast<int>(wk.size());
    dgesdd_("S", &n, &n, a.data(), &n, wh.data(), u.data(), &n, vt.data(), &n, wk.data(), &lw, iw.data(), &inf);
  });
  cusolverDnDestroyParams(prm);
  for (void* p : {static_cast<void*>(g0), static_cast<void*>(g), static_cast<void*>(w), static_cast<void*>(tau),
                  static_cast<void*>(info)})
    cudaFree(p);
}

/// The Tensor Core products of an RSVD at this l: Y = A Omega, Z = A^T Y, B = Y^T A.
/// rinv := R^{-1} of G0 = R^T R by the backend's potrf and trsm on the identity (g: G0's copy, factored).
void potrf_inverse(Backend& b, MatrixView<const double> g0, MatrixView<double> g, MatrixView<double> rinv) {
  b.copy(g0, g);
  if (b.cholesky(g) != 0) throw std::runtime_error("not positive definite");
  b.scale(0.0, rinv);
  b.add_to_diagonal(rinv, 1.0);
  b.triangular_solve(Side::Left, Op::N, 1.0, g, rinv);
}

void products(Backend& b, index_t m, index_t l) {
  Matrix<float> a(b, m, m, "A"), y(b, m, l, "Y"), z(b, m, l, "Z"), bm(b, l, m, "B");
  Matrix<fp16> omega(b, m, l, "Omega");
  b.fill_random(RandomSpec{Distribution::Gaussian, 1, 0}, a.view());
  b.fill_random(RandomSpec{Distribution::Gaussian, 2, 0}, omega.view());
  b.fill_random(RandomSpec{Distribution::Gaussian, 3, 0}, y.view());
  const double f = 2.0 * m * m * l / 1e9;
  const std::string tag = " (" + std::to_string(m) + "^2, l = " + std::to_string(l) + ")";
  auto run = [&](const std::string& name, const std::function<void()>& fn, bool product = true) {
    const double ms = randnla::median_ms(b, fn, 15, 3);
    std::printf("%-58s %9.3f ms", (name + tag).c_str(), ms);
    if (product) std::printf(" %7.1f TFLOP/s", f / ms);
    std::printf("\n");
    std::fflush(stdout);
  };
  run("shgemm fp16 Y = A Omega", [&] { b.product(Op::N, Op::N, 1.0f, a, omega, 0.0f, y, ProductPrecision::split_in(TensorCore::FP16)); });
  run("tcec fp16 Z = A^T Y", [&] { b.product(Op::T, Op::N, 1.0f, a, y, 0.0f, z, ProductPrecision::split_in(TensorCore::FP16)); });
  run("tcec fp16 Y = A Z", [&] { b.product(Op::N, Op::N, 1.0f, a, z, 0.0f, y, ProductPrecision::split_in(TensorCore::FP16)); });
  run("tcec fp16 B = Y^T A", [&] { b.product(Op::T, Op::N, 1.0f, y, a, 0.0f, bm, ProductPrecision::split_in(TensorCore::FP16)); });
  run("non-finite check of A (exponent histogram)", [&] { b.exponent_histogram(a); }, false);
  {
    Matrix<double> g(b, l, l, "G"), g0(b, l, l, "G0"), rinv(b, l, l, "R^-1"), yd(b, m, l, "Y");
    b.convert(y.view(), yd.view());
    b.product(Op::T, Op::N, 1.0, yd, yd, 0.0, g0);
    run("inverse Cholesky factor (library potrf + trsm; G copy included)",
        [&] { potrf_inverse(b, g0.view(), g.view(), rinv.view()); }, false);
  }
  run("CholeskyQR2 of Y (library)", [&] { orthonormalize(b, y.view(), Orthonormalizer::CholeskyQR2); }, false);
  run("CholeskyQR, second pass when needed (library)", [&] { orthonormalize(b, y.view(), Orthonormalizer::Auto); },
      false);
}

/// y := U diag(sigma) V^T, U and V orthonormal from Gaussians, sigma geometric from 1 to 1/cond.
void conditioned(Backend& b, MatrixView<float> y, double cond) {
  const index_t m = y.rows(), l = y.cols();
  Matrix<float> u(b, m, l, "U"), v(b, l, l, "V");
  b.fill_random(RandomSpec{Distribution::Gaussian, 7, 0}, u.view());
  b.fill_random(RandomSpec{Distribution::Gaussian, 8, 0}, v.view());
  orthonormalize(b, u.view(), Orthonormalizer::Householder);
  orthonormalize(b, v.view(), Orthonormalizer::Householder);
  std::vector<float> sigma(static_cast<std::size_t>(l));
  for (index_t j = 0; j < l; ++j)
    sigma[j] = static_cast<float>(std::pow(cond, -static_cast<double>(j) / std::max<index_t>(1, l - 1)));
  Matrix<float> s(b, l, 1, "sigma");
  b.copy(MatrixView<const float>(sigma.data(), l, 1, l, MemorySpace::Host), s.view());
  b.scale_columns(s, u.view());
  b.product(Op::N, Op::T, 1.0f, u, v, 0.0f, y, ProductPrecision::fp32());
}

/// ||Y - Q Q^T Y||_F / ||Y||_F in FP32 products.
double relative_span_residual(Backend& b, MatrixView<const float> y, MatrixView<const float> q) {
  const index_t m = y.rows(), l = y.cols();
  Matrix<float> r(b, l, l, "Q^T Y"), e(b, m, l, "E");
  b.product(Op::T, Op::N, 1.0f, q, y, 0.0f, r, ProductPrecision::fp32());
  b.copy(y, e.view());
  b.product(Op::N, Op::N, -1.0f, q, r, 1.0f, e, ProductPrecision::fp32());
  return b.frobenius_norm(MatrixView<const float>(e.view())) / b.frobenius_norm(y);
}

/// An l x l upper triangular matrix (column-major) of Gaussian entries over sqrt(l), zeros below.
std::vector<float> upper_triangular(index_t l) {
  std::mt19937 engine(9);
  std::normal_distribution<float> normal(0.0f, 1.0f / std::sqrt(static_cast<float>(l)));
  std::vector<float> r(static_cast<std::size_t>(l * l), 0.0f);
  for (index_t j = 0; j < l; ++j)
    for (index_t i = 0; i <= j; ++i) r[i + j * l] = normal(engine);
  return r;
}

/// The pieces of a CholeskyQR pass built on FP32-accurate Tensor Core products at m x l: the Gram
/// matrix Y^T Y and the product Y R^{-1}, split in FP16 and in TF32, and the FP64 inverse Cholesky
/// factor of the l x l Gram matrix.
void split_cholesky_qr_parts(Backend& b, index_t m, index_t l) {
  Matrix<float> y(b, m, l, "Y"), q(b, m, l, "Q"), g(b, l, l, "G"), r(b, l, l, "R");
  b.fill_random(RandomSpec{Distribution::Gaussian, 3, 0}, y.view());
  b.fill_random(RandomSpec{Distribution::Gaussian, 4, 0}, r.view());
  b.scale(1.0f / std::sqrt(static_cast<float>(m)), r.view());
  const double gram_flops = 2.0 * m * l * l / 1e9;
  const std::string tag = " (" + std::to_string(m) + " x " + std::to_string(l) + ")";
  auto run = [&](const std::string& name, const std::function<void()>& fn, double gflop) {
    const double ms = randnla::median_ms(b, fn, 15, 3);
    std::printf("%-58s %9.3f ms", (name + tag).c_str(), ms);
    if (gflop > 0) std::printf(" %7.1f TFLOP/s", gflop / ms);
    std::printf("\n");
    std::fflush(stdout);
  };
  for (TensorCore t : {TensorCore::FP16, TensorCore::TF32}) {
    const std::string name = t == TensorCore::FP16 ? "fp16" : "tf32";
    const ProductPrecision split = ProductPrecision::split_in(t);
    run("split " + name + " Gram Y^T Y", [&] { b.product(Op::T, Op::N, 1.0f, y, y, 0.0f, g, split); }, gram_flops);
    run("split " + name + " Y R", [&] { b.product(Op::N, Op::N, 1.0f, y, r, 0.0f, q, split); }, gram_flops);
  }
  CholeskyQrOps& ops = b.ops<CholeskyQrOps>();
  run("split Gram, lower tiles alone (split_gram, Auto)", [&] { ops.split_gram(y, g); }, gram_flops);
  {
    Matrix<float> upper(b, l, l, "R");
    const std::vector<float> host = upper_triangular(l);
    b.copy(MatrixView<const float>(host.data(), l, l, l, MemorySpace::Host), upper.view());
    run("split Y R, R upper triangular (split_multiply_upper_triangular)",
        [&] { ops.split_multiply_upper_triangular(y, upper, q); }, gram_flops);
  }
  {
    Matrix<float> omega(b, l, 8, "Omega");
    Matrix<double> probe_work(b, ops.orthogonality_probe_workspace(m, l, 8), 1, "work");
    b.fill_random(RandomSpec{Distribution::Gaussian, 5, 0}, omega.view());
    run("orthogonality probe, 8 probes", [&] { ops.orthogonality_probe(y, omega, {}, probe_work); }, 0);
    run("orthogonality probe, 8 probes, copying W", [&] { ops.orthogonality_probe(y, omega, q, probe_work); }, 0);
  }
  run("fp32 (SGEMM) Gram Y^T Y", [&] { b.product(Op::T, Op::N, 1.0f, y, y, 0.0f, g, ProductPrecision::fp32()); },
      gram_flops);
  run("copy Y", [&] { b.copy(MatrixView<const float>(y.view()), q.view()); }, 0);
  Matrix<double> gd(b, l, l, "G"), g0(b, l, l, "G0"), rinv(b, l, l, "R^-1");
  b.product(Op::T, Op::N, 1.0f, y, y, 0.0f, g, ProductPrecision::split_in(TensorCore::FP16));
  b.convert(MatrixView<const float>(g.view()), g0.view());
  run("inverse Cholesky factor (potrf + trsm; G copy included)",
      [&] { potrf_inverse(b, g0.view(), gd.view(), rinv.view()); }, 0);
  Matrix<double> work(b, ops.inverse_cholesky_workspace(l), 1, "work");
  run("inverse Cholesky factor (one kernel)", [&] {
    if (ops.inverse_cholesky_factor(g0, rinv, work) != 0) throw std::runtime_error("not positive definite");
  }, 0);
  run("Auto (library)", [&] {
    b.copy(MatrixView<const float>(y.view()), q.view());
    orthonormalize(b, q.view(), Orthonormalizer::Auto);
  }, 0);
  for (TensorCore t : {TensorCore::FP16, TensorCore::TF32}) {
    const ProductPrecision split = ProductPrecision::split_in(t);
    const std::string name = t == TensorCore::FP16 ? "fp16" : "tf32";
    Matrix<float> rinv32(b, l, l, "R^-1"), q2(b, m, l, "Q2");
    Matrix<double> d(b, l, 1, "D");
    int status = 0;
    auto pass = [&](MatrixView<const float> in, MatrixView<float> out) {
      b.product(Op::T, Op::N, 1.0f, in, in, 0.0f, g, split);
      b.convert(MatrixView<const float>(g.view()), gd.view());
      ops.equilibrate(gd, d);
      status = ops.inverse_cholesky_factor(gd, rinv, work);
      b.scale_rows(d, rinv);
      b.convert(MatrixView<const double>(rinv.view()), rinv32.view());
      b.product(Op::N, Op::N, 1.0f, in, rinv32, 0.0f, out, split);
    };
    auto split_distance = [&](MatrixView<const float> x) {
      b.product(Op::T, Op::N, 1.0f, x, x, 0.0f, g, split);
      b.convert(MatrixView<const float>(g.view()), gd.view());
      b.add_to_diagonal(gd.view(), -1.0);
      return b.frobenius_norm(MatrixView<const double>(gd.view()));
    };
    run("split " + name + " CholeskyQR pass", [&] { pass(y, q); }, 0);
    run("split " + name + " Gram distance from I", [&] { split_distance(q); }, 0);
    for (double cond : {1.0, 1e2, 1e3, 1e4, 1e5}) {
      Matrix<float> yc(b, m, l, "Y");
      conditioned(b, yc.view(), cond);
      pass(yc, q);
      const int first = status;
      const double orth1 = orthogonality_loss(b, q), seen1 = split_distance(q);
      pass(q, q2);
      std::printf("split %s cond %.0e (%s): pass 1 status %d orth %.3e (split Gram says %.3e); pass 2 status %d "
                  "orth %.3e (split Gram says %.3e); residual %.3e\n",
                  name.c_str(), cond, tag.c_str(), first, orth1, seen1, status, orthogonality_loss(b, q2),
                  split_distance(q2), relative_span_residual(b, yc, q2));
      std::fflush(stdout);
    }
  }
}

/// The library's element-wise passes over an n x n FP32 matrix (the randomized LRA's A at n =
/// 35840), with the rate of the bytes each moves: the exponent histogram, the FP16 conversion alone
/// and with the histogram, scale, add and a device copy.
void elementwise_passes(Backend& b, index_t n) {
  Matrix<float> x(b, n, n, "X"), y(b, n, n, "Y");
  Matrix<fp16> h(b, n, n, "H");
  b.fill_random(RandomSpec{Distribution::Gaussian, 4, 0}, x.view());
  b.fill_random(RandomSpec{Distribution::Gaussian, 5, 0}, y.view());
  const double elements = static_cast<double>(n) * n;
  auto run = [&](const std::string& name, double bytes_per_element, const std::function<void()>& fn) {
    const double ms = randnla::median_ms(b, fn, 15, 3);
    std::printf("%-58s %9.3f ms %6.2f TB/s\n", (name + " (" + std::to_string(n) + "^2)").c_str(), ms,
                elements * bytes_per_element / ms * 1e-9);
    std::fflush(stdout);
  };
  run("exponent histogram (4 B read)", 4, [&] { b.exponent_histogram(x.view()); });
  run("convert FP32 -> FP16 (4 B read, 2 written)", 6, [&] { b.convert(x.view(), h.view()); });
  run("convert_measured: the same and the histogram", 6, [&] { b.convert_measured(x.view(), h.view()); });
  run("scale (4 B read, 4 written)", 8, [&] { b.scale(1.0f, y.view()); });
  run("add (8 B read, 4 written)", 12, [&] { b.add(1.0f, x.view(), 0.5f, y.view()); });
  run("copy (4 B read, 4 written)", 8, [&] { b.copy(MatrixView<const float>(x.view()), y.view()); });
}

/// The library's symmetric_eig (the CUDA backend's own tridiagonalisation and divide and conquer
/// where it applies) on the SPD test matrix, G's copy subtracted, and its tridiagonalisation alone.
void library_eig(Backend& b, index_t l) {
  const std::vector<double> hg = spd_matrix(static_cast<int>(l));
  Matrix<double> g0(b, l, l, "G0"), g(b, l, l, "G"), w(b, l, 1, "w"), v(b, l, l, "V"), de(b, 3 * l + 3, 1, "d, e, tau");
  b.copy(MatrixView<const double>(hg.data(), l, l, l, MemorySpace::Host), g0.view());
  auto copy = [&] { b.copy(MatrixView<const double>(g0.view()), g.view()); };
  const double copy_ms = randnla::median_ms(b, copy, 15, 3);
  const double ms = randnla::median_ms(b, [&] {
    copy();
    b.symmetric_eig(g.view(), w.view());
  }, 15, 3);
  const std::string tag = " (l = " + std::to_string(l) + ", FP64)";
  report("randnla symmetric_eig" + tag, ms - copy_ms);
  const int n = static_cast<int>(l);
  if (n < 3 || n > cuda::tridiagonalize_max_order(0)) return;
  int* status = device_array<int>(2);
  cudaStream_t s = nullptr;  // the backend's stream is not exposed: time on the legacy stream, synchronised
  const double tri_ms = randnla::median_ms(b, [&] {
    cuda::launch_tridiagonalize(g0.data(), l, n, de.data(), de.data() + l, v.data(), l, de.data() + 2 * l, status,
                                status + 1, s);
    ok(cudaStreamSynchronize(s), "sync");
  }, 15, 3);
  report("  of it the cluster tridiagonalisation" + tag, tri_ms);
  cudaFree(status);
}

/// One symmetric_eig of the library inside cudaProfilerStart/Stop (a warm-up call before).
void profile_one_library_eig(Backend& b, index_t l) {
  const std::vector<double> hg = spd_matrix(static_cast<int>(l));
  Matrix<double> g(b, l, l, "G"), w(b, l, 1, "w");
  for (int rep = 0; rep < 2; ++rep) {
    b.copy(MatrixView<const double>(hg.data(), l, l, l, MemorySpace::Host), g.view());
    b.synchronize();
    if (rep == 1) ok(cudaProfilerStart(), "profiler start");
    b.symmetric_eig(g.view(), w.view());
    b.synchronize();
    if (rep == 1) ok(cudaProfilerStop(), "profiler stop");
  }
}

/// One Dsyevd of an l x l SPD matrix inside cudaProfilerStart/Stop (a warm-up call before).
void profile_one_syevd(cusolverDnHandle_t sol, int l) {
  const std::size_t ll = static_cast<std::size_t>(l) * l;
  const std::vector<double> hg = spd_matrix(l);
  double *g = device_array<double>(ll), *w = device_array<double>(l);
  int* info = device_array<int>(1);
  int lwork = 0;
  ok(cusolverDnDsyevd_bufferSize(sol, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, l, g, l, w, &lwork), "ws");
  double* work = device_array<double>(lwork + 1);
  for (int rep = 0; rep < 2; ++rep) {
    ok(cudaMemcpy(g, hg.data(), ll * 8, cudaMemcpyHostToDevice), "copy");
    if (rep == 1) ok(cudaProfilerStart(), "profiler start");
    const auto t0 = std::chrono::steady_clock::now();
    ok(cusolverDnDsyevd(sol, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, l, g, l, w, work, lwork, info), "syevd");
    ok(cudaStreamSynchronize(g_stream), "sync");
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (rep == 1) ok(cudaProfilerStop(), "profiler stop");
    std::printf("Dsyevd l = %d: %.3f ms wall\n", l, ms);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::printf("bench_dense_parts: no GPU, nothing to measure\n");
    return 0;
  }
  const std::string mode = argc > 1 ? argv[1] : "";
  const bool syevd_once = mode == "syevd", eig_once = mode == "eig", passes = mode == "passes", cholqr = mode == "cholqr";
  if (mode == "autoqr") {  // Auto alone, ten times: for a kernel timeline of its passes
    auto b = make_backend(BackendKind::Cuda);
    const index_t m = argc > 2 ? std::atol(argv[2]) : 65536, l = argc > 3 ? std::atol(argv[3]) : 512;
    Matrix<float> y(*b, m, l, "Y");
    for (int rep = 0; rep < 10; ++rep) {
      b->fill_random(RandomSpec{Distribution::Gaussian, 3, 0}, y.view());
      orthonormalize(*b, y.view(), Orthonormalizer::Auto);
    }
    b->synchronize();
    return 0;
  }
  if (mode == "splitqr") {
    auto b = make_backend(BackendKind::Cuda);
    split_cholesky_qr_parts(*b, argc > 2 ? std::atol(argv[2]) : 65536, argc > 3 ? std::atol(argv[3]) : 512);
    return 0;
  }
  const int first = cholqr ? 2 : 1;  // the position of m
  const int m = argc > first && !syevd_once && !eig_once && !passes ? std::atoi(argv[first]) : 16384;
  const int l = argc > first + 1 ? std::atoi(argv[first + 1]) : 272;
  if (eig_once || passes) {
    auto b = make_backend(BackendKind::Cuda);
    if (eig_once) profile_one_library_eig(*b, l);
    if (passes) elementwise_passes(*b, argc > 2 ? std::atol(argv[2]) : 35840);
    return 0;
  }
  ok(cudaStreamCreate(&g_stream), "stream");
  cublasHandle_t blas;
  cusolverDnHandle_t sol;
  ok(cublasCreate(&blas), "cublas");
  ok(cublasSetStream(blas, g_stream), "cublas stream");
  ok(cusolverDnCreate(&sol), "cusolver");
  ok(cusolverDnSetStream(sol, g_stream), "cusolver stream");
  if (syevd_once) {
    profile_one_syevd(sol, l);
    return 0;
  }
  cholesky_qr_parts(blas, sol, m, l);
  if (cholqr) return 0;
  small_parts(sol, blas, l);
  cublasDestroy(blas);
  cusolverDnDestroy(sol);
  auto b = make_backend(BackendKind::Cuda);
  std::printf("device: %s\n", b->description().c_str());
  for (index_t ll : {index_t{32}, index_t{128}, static_cast<index_t>(l), index_t{400}, index_t{600}}) library_eig(*b, ll);
  for (index_t ll : {static_cast<index_t>(l), index_t{256}, index_t{384}}) products(*b, m, ll);
  return 0;
}
