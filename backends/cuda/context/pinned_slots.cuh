// Page-locked host slots where a queued step's small results land without a wait.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "cuda_check.hpp"
#include "cuda/elementwise/for_each.cuh"

namespace randnla {
namespace cuda {

/// Slots of `bytes` page-locked host memory, mapped for the device (a kernel writes into one
/// directly; a copy into one is a single DMA), each with an event to record after the write, so
/// that reading a slot waits for its own write only. A slot goes back to the pool when dropped;
/// the pool grows to the most slots in use at once. Made with std::make_shared (its slots hold
/// the pool); the events belong to `device`.
class PinnedSlots : public std::enable_shared_from_this<PinnedSlots> {
 public:
  struct Slot {
    void* data = nullptr;         ///< the host's address
    void* device_data = nullptr;  ///< the device's address of the same memory
    cudaEvent_t written = nullptr;
  };
  PinnedSlots(int device, std::size_t bytes) : device_(device), bytes_(bytes) {}
  ~PinnedSlots() {
    for (Slot& s : free_) cudaFreeHost(s.data), cudaEventDestroy(s.written);
  }
  PinnedSlots(const PinnedSlots&) = delete;
  PinnedSlots& operator=(const PinnedSlots&) = delete;

  std::shared_ptr<Slot> take() {
    Slot slot;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) slot = free_.back(), free_.pop_back();
    }
    if (!slot.data) {
      const DeviceScope scope(device_);
      RANDNLA_CUDA(cudaHostAlloc(&slot.data, bytes_, cudaHostAllocMapped));
      RANDNLA_CUDA(cudaHostGetDevicePointer(&slot.device_data, slot.data, 0));
      RANDNLA_CUDA(cudaEventCreateWithFlags(&slot.written, cudaEventDisableTiming));
    }
    auto self = shared_from_this();
    return std::shared_ptr<Slot>(new Slot(slot), [self](Slot* s) {
      const std::lock_guard<std::mutex> lock(self->mutex_);
      self->free_.push_back(*s);
      delete s;
    });
  }

 private:
  int device_;
  std::size_t bytes_;
  std::mutex mutex_;
  std::vector<Slot> free_;
};

/// Waits for the slot's write, without a wait where its event was reached already (a wait on a
/// reached event took about 1.7 us in CUPTI traces, and verdicts are mostly read late).
inline void wait_written(const PinnedSlots::Slot& slot) {
  const cudaError_t status = cudaEventQuery(slot.written);
  if (status == cudaSuccess) return;
  if (status != cudaErrorNotReady) RANDNLA_CUDA(status);
  cudaGetLastError();  // not an error: cleared, so that no later check reports it
  RANDNLA_CUDA(cudaEventSynchronize(slot.written));
}

}  // namespace cuda
}  // namespace randnla
