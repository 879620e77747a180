// Kernel attributes set once per kernel and device, from any host thread: cudaFuncSetAttribute
// applies to the calling thread's current device only, and backends on several devices and host
// threads launch the same kernels.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <mutex>
#include <set>
#include <utility>

#include "cuda_check.hpp"

namespace randnla {
namespace cuda {

/// Runs `configure` (which sets `kernel`'s attributes) the first time it is asked for on the
/// current device; every later call, from any thread, returns once that one has finished.
inline void configure_once(const void* kernel, const std::function<void()>& configure) {
  static std::mutex mutex;
  static std::set<std::pair<const void*, int>> configured;
  const int device = current_device();
  std::lock_guard<std::mutex> lock(mutex);
  if (configured.count({kernel, device}) != 0) return;
  configure();
  configured.insert({kernel, device});
}

/// Kernel's dynamic shared memory limit raised to `bytes`, once per device.
template <class Kernel>
void allow_dynamic_shared_memory(Kernel* kernel, int bytes) {
  configure_once(reinterpret_cast<const void*>(kernel), [&] {
    RANDNLA_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  });
}

}  // namespace cuda
}  // namespace randnla
