// The element-wise launch of the CUDA backend's kernels (and of the algorithm-only operations
// beside it): a grid-stride loop over the elements (i, j) of a column-major matrix.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/context/cuda_check.hpp"
#include "randnla/matrix_view.hpp"

namespace randnla {
namespace cuda {

constexpr int kThreads = 256;

inline unsigned grid_for(index_t n) {
  const index_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 * 32 ? (blocks > 0 ? blocks : 1) : 65535 * 32);
}

template <class F>
__global__ void for_each_kernel(index_t rows, index_t cols, F f) {
  const index_t n = rows * cols;
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<index_t>(gridDim.x) * blockDim.x)
    f(e % rows, e / rows);
}

/// Runs f(i, j) on the device for every element of a rows x cols matrix, queued on s.
template <class F>
void for_each(index_t rows, index_t cols, cudaStream_t s, const char* what, F f) {
  if (rows * cols == 0) return;
  for_each_kernel<<<grid_for(rows * cols), kThreads, 0, s>>>(rows, cols, f);
  RANDNLA_CUDA_LAUNCH(what);
}

template <class Quad, class One>
__global__ void for_each_quad_kernel(index_t n, Quad quad, One one) {
  const index_t first = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  const index_t stride = static_cast<index_t>(gridDim.x) * blockDim.x, quads = n / 4;
  for (index_t q = first; q < quads; q += stride) quad(q);
  for (index_t e = 4 * quads + first; e < n; e += stride) one(e);
}

/// Runs quad(q) for each q < n / 4 and one(e) for the n % 4 elements after them, on the device:
/// element-wise work on contiguous FP32 data four entries at a time (on the H100 at 35840^2, scale and
/// add run at 2.8-2.9 TB/s this way, bench_dense_parts passes; through for_each they ran at 2.0-2.5 TB/s,
/// bench_lra's CUPTI timeline).
template <class Quad, class One>
void for_each_quad(index_t n, cudaStream_t s, const char* what, Quad quad, One one) {
  if (n == 0) return;
  for_each_quad_kernel<<<std::min<unsigned>(grid_for(n / 4 + 1), 2048), kThreads, 0, s>>>(n, quad, one);
  RANDNLA_CUDA_LAUNCH(what);
}

/// Whether for_each_quad takes the view: its elements contiguous (ld = rows) from a 16-byte boundary.
template <class T>
bool in_quads(const MatrixView<T>& v) {
  return v.ld() == v.rows() && reinterpret_cast<std::uintptr_t>(v.data()) % 16 == 0;
}

template <class T>
__device__ __forceinline__ T& at(const MatrixView<T>& v, index_t i, index_t j) {
  return v.data()[i + j * v.ld()];
}

/// Makes `device` current for one call and gives the caller's device back after, so that every
/// call runs on its backend's device whichever device the calling thread had.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    RANDNLA_CUDA(cudaGetDevice(&previous_));
    if (previous_ != device) RANDNLA_CUDA(cudaSetDevice(device));
    device_ = device;
  }
  ~DeviceScope() {
    if (previous_ != device_) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0, device_ = 0;
};

}  // namespace cuda
}  // namespace randnla
