// Status checks: every CUDA, cuBLAS and cuSOLVER call goes through one of these and a failure
// becomes randnla::DeviceError carrying the library's own status text.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <string>

#include "randnla/error.hpp"
#include "randnla/matrix_view.hpp"

namespace randnla {
namespace cuda {

inline const char* cusolver_status_text(cusolverStatus_t s) {
  switch (s) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    default: return "cuSOLVER status (unlisted)";
  }
}

inline void check(cudaError_t s, const char* call) {
  if (s != cudaSuccess) throw DeviceError(std::string(call) + ": " + cudaGetErrorName(s) + " (" + cudaGetErrorString(s) + ")");
}
inline void check(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw DeviceError(std::string(call) + ": " + cublasGetStatusName(s) + " (" + cublasGetStatusString(s) + ")");
}
inline void check(cusolverStatus_t s, const char* call) {
  if (s != CUSOLVER_STATUS_SUCCESS) throw DeviceError(std::string(call) + ": " + cusolver_status_text(s) + " (cuSOLVER)");
}

/// v as cuBLAS's and cuSOLVER's 32-bit int, refused (naming the parameter) where it does not fit.
inline int blas_int(index_t v, const char* name) {
  require(v <= 0x7fffffff, name, v, "must fit cuBLAS/cuSOLVER's 32-bit integers");
  return static_cast<int>(v);
}

}  // namespace cuda
}  // namespace randnla

#define RANDNLA_CUDA(call) ::randnla::cuda::check((call), #call)
/// After a kernel launch: the launch's own error, if any.
#define RANDNLA_CUDA_LAUNCH(what) ::randnla::cuda::check(cudaGetLastError(), what)

namespace randnla {
namespace cuda {

/// The device the calling thread works on.
inline int current_device() {
  int device = 0;
  RANDNLA_CUDA(cudaGetDevice(&device));
  return device;
}

/// A device's SM count (persistent grids are sized by it).
inline int multiprocessors(int device = current_device()) {
  int count = 0;
  RANDNLA_CUDA(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

/// The most shared memory a block of a device may opt in to.
inline int shared_memory_per_block(int device = current_device()) {
  int bytes = 0;
  RANDNLA_CUDA(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return bytes;
}

}  // namespace cuda
}  // namespace randnla
