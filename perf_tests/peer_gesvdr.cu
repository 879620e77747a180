// cuSOLVER's randomized SVD (cusolverDnXgesvdr), FP32 and FP64, as the RSVD benchmark's peer; and the
// profiler switch of bench_rsvd --profile (the benchmark's CUDA runtime calls live here).
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
void ok(cudaError_t e, const char* w) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(w) + ": " + cudaGetErrorString(e));
}
void ok(cusolverStatus_t e, const char* w) {
  if (e != CUSOLVER_STATUS_SUCCESS) throw std::runtime_error(std::string(w) + ": cuSOLVER status " + std::to_string(e));
}
}  // namespace

/// Median ms of gesvdr on a copy of A (gesvdr overwrites its input; the copy's time is reported
/// apart in *copy_ms). U (m x k), S (k), V (n x k) are left in the given device buffers. T: float
/// (CUDA_R_32F) or double (CUDA_R_64F).
template <class T>
double gesvdr_median_ms_of(const T* a, int m, int n, int k, int p, int iters, T* s, T* u, T* v, double* copy_ms) {
  constexpr cudaDataType type = sizeof(T) == 4 ? CUDA_R_32F : CUDA_R_64F;
  cusolverDnHandle_t h;
  ok(cusolverDnCreate(&h), "cusolverDnCreate");
  cusolverDnParams_t prm;
  ok(cusolverDnCreateParams(&prm), "params");
  T* work_a = nullptr;
  ok(cudaMalloc(&work_a, sizeof(T) * m * static_cast<size_t>(n)), "malloc A copy");
  size_t dws = 0, hws = 0;
  ok(cusolverDnXgesvdr_bufferSize(h, prm, 'S', 'S', m, n, k, p, iters, type, work_a, m, type, s, type, u, m, type, v, n,
                                  type, &dws, &hws),
     "gesvdr_bufferSize");
  void* dw = nullptr;
  int* info = nullptr;
  ok(cudaMalloc(&dw, dws + 1), "malloc work");
  ok(cudaMalloc(&info, sizeof(int)), "malloc info");
  std::vector<char> hw(hws + 1);
  auto timed = [&](bool with_svd) {
    std::vector<double> t;
    for (int r = 0; r < 7; ++r) {
      ok(cudaDeviceSynchronize(), "sync");
      const auto t0 = std::chrono::steady_clock::now();
      ok(cudaMemcpy(work_a, a, sizeof(T) * m * static_cast<size_t>(n), cudaMemcpyDeviceToDevice), "copy");
      if (with_svd)
        ok(cusolverDnXgesvdr(h, prm, 'S', 'S', m, n, k, p, iters, type, work_a, m, type, s, type, u, m, type, v, n, type,
                             dw, dws, hw.data(), hws, info),
           "gesvdr");
      ok(cudaDeviceSynchronize(), "sync");
      if (r >= 2) t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  const double total = timed(true);
  *copy_ms = timed(false);
  cudaFree(work_a);
  cudaFree(dw);
  cudaFree(info);
  cusolverDnDestroyParams(prm);
  cusolverDnDestroy(h);
  return total - *copy_ms;
}

double gesvdr_median_ms(const float* a, int m, int n, int k, int p, int iters, float* s, float* u, float* v,
                        double* copy_ms) {
  return gesvdr_median_ms_of(a, m, n, k, p, iters, s, u, v, copy_ms);
}
double gesvdr_median_ms(const double* a, int m, int n, int k, int p, int iters, double* s, double* u, double* v,
                        double* copy_ms) {
  return gesvdr_median_ms_of(a, m, n, k, p, iters, s, u, v, copy_ms);
}

/// cudaProfilerStart (on) or cudaProfilerStop, for ncu --profile-from-start off.
void cuda_profiler(bool on) { ok(on ? cudaProfilerStart() : cudaProfilerStop(), "profiler"); }
