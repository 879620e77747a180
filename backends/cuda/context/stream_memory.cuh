// The CUDA backend's stream and its device memory.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace randnla {
namespace cuda {

/// The backend's stream and its device memory: a stream-ordered pool that keeps what is freed,
/// since cudaFree synchronises the whole device and cudaMalloc costs tens of microseconds, which
/// a pipeline of many small steps (CholeskyQR, the small SVD) paid at every step.
///
/// Freed blocks are also kept by size and handed out again to a request of the same size: the
/// pool alone, with as much freed as a 256 MiB request needed, still mapped new memory for it in
/// every RP-HOSVD call (0.2-0.4 ms with the device idle; CUPTI, H100), while repeated calls ask for
/// the same sizes. A block freed on this stream may serve later work on it at once, as
/// cudaFreeAsync allows. The kept blocks go back to the pool, oldest first, beyond the most
/// memory in use at once so far (calls of other shapes do not hoard more than that); when an
/// allocation fails, all of them, and the pool gives its unused memory back, before the retry.
///
/// Allocations hold a reference to this, so a Matrix may outlive its backend.
class StreamMemory {
 public:
  /// On `stream`, or on a stream of its own when it is null.
  StreamMemory(int device, cudaStream_t stream);
  ~StreamMemory();
  StreamMemory(const StreamMemory&) = delete;
  StreamMemory& operator=(const StreamMemory&) = delete;
  cudaStream_t get() const { return stream_; }

  static std::shared_ptr<void> allocate(const std::shared_ptr<StreamMemory>& self, std::size_t bytes);

 private:
  struct Block {
    std::size_t bytes;
    void* data;
  };
  void* take_kept(std::size_t bytes);
  void* from_pool(std::size_t bytes);
  void keep(void* data, std::size_t bytes);
  void release_oldest_beyond(std::size_t limit);  // callers hold mutex_

  cudaStream_t stream_ = nullptr;
  bool owns_stream_;
  cudaMemPool_t pool_ = nullptr;
  std::mutex mutex_;
  std::vector<Block> kept_;  // oldest first
  std::size_t kept_bytes_ = 0, in_use_ = 0, most_in_use_ = 0;
};

}  // namespace cuda
}  // namespace randnla
