#include "stream_memory.cuh"

#include <algorithm>
#include <cstdint>

#include "cuda_check.hpp"

namespace randnla {
namespace cuda {
namespace {
// Request sizes are kept in these units, so requests that differ by a few bytes share blocks.
constexpr std::size_t kGranule = 256;
}  // namespace

StreamMemory::StreamMemory(int device, cudaStream_t stream) : stream_(stream), owns_stream_(stream == nullptr) {
  if (owns_stream_) RANDNLA_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  RANDNLA_CUDA(cudaMemPoolCreate(&pool_, &props));
  std::uint64_t keep = UINT64_MAX;
  RANDNLA_CUDA(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
}

StreamMemory::~StreamMemory() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    release_oldest_beyond(0);
  }
  cudaStreamSynchronize(stream_);
  cudaMemPoolDestroy(pool_);
  if (owns_stream_) cudaStreamDestroy(stream_);
}

std::shared_ptr<void> StreamMemory::allocate(const std::shared_ptr<StreamMemory>& self, std::size_t bytes) {
  const std::size_t size = (std::max<std::size_t>(bytes, 1) + kGranule - 1) / kGranule * kGranule;
  void* p = self->take_kept(size);
  if (!p) p = self->from_pool(size);
  return std::shared_ptr<void>(p, [self, size](void* q) { self->keep(q, size); });
}

void* StreamMemory::take_kept(std::size_t bytes) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto newest = std::find_if(kept_.rbegin(), kept_.rend(), [bytes](const Block& b) { return b.bytes == bytes; });
  if (newest == kept_.rend()) return nullptr;
  void* p = newest->data;
  kept_.erase(std::next(newest).base());
  kept_bytes_ -= bytes;
  in_use_ += bytes;
  most_in_use_ = std::max(most_in_use_, in_use_);
  return p;
}

void* StreamMemory::from_pool(std::size_t bytes) {
  void* p = nullptr;
  cudaError_t status = cudaMallocFromPoolAsync(&p, bytes, pool_, stream_);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky; cleared so the retry's status is its own
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      release_oldest_beyond(0);
    }
    // The pool keeps what is freed: the device gets it all back (once the frees have run), so
    // that the retry maps the request anew in one piece.
    RANDNLA_CUDA(cudaStreamSynchronize(stream_));
    RANDNLA_CUDA(cudaMemPoolTrimTo(pool_, 0));
    status = cudaMallocFromPoolAsync(&p, bytes, pool_, stream_);
  }
  RANDNLA_CUDA(status);
  const std::lock_guard<std::mutex> lock(mutex_);
  in_use_ += bytes;
  most_in_use_ = std::max(most_in_use_, in_use_);
  return p;
}

void StreamMemory::keep(void* data, std::size_t bytes) {
  const std::lock_guard<std::mutex> lock(mutex_);
  in_use_ -= bytes;
  kept_.push_back(Block{bytes, data});
  kept_bytes_ += bytes;
  release_oldest_beyond(most_in_use_);
}

void StreamMemory::release_oldest_beyond(std::size_t limit) {
  std::size_t i = 0;
  for (; i < kept_.size() && kept_bytes_ > limit; ++i) {
    cudaFreeAsync(kept_[i].data, stream_);
    kept_bytes_ -= kept_[i].bytes;
  }
  kept_.erase(kept_.begin(), kept_.begin() + static_cast<std::ptrdiff_t>(i));
}

}  // namespace cuda
}  // namespace randnla
