// Asynchronous copies from global into shared memory (cp.async, compute 8.0 on): the chunk a
// kernel works on next arrives while it computes on the current one.
#pragma once

#include <cuda_runtime.h>

namespace randnla {
namespace cuda {

/// Queues the copy of `bytes` (4, 8 or 16; `smem` and `gmem` aligned to it) from `gmem` to `smem`;
/// with `valid` < bytes, only the first `valid` bytes are read and the rest of `smem` is zeroed
/// (rows past a matrix's end).
template <int bytes>
__device__ __forceinline__ void cp_async(void* smem, const void* gmem, int valid = bytes) {
  static_assert(bytes == 4 || bytes == 8 || bytes == 16, "cp.async copies 4, 8 or 16 bytes");
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  if constexpr (bytes == 16)  // .cg: past L1, which a streamed operand would only pollute
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(valid));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(gmem), "n"(bytes), "r"(valid));
}

/// Closes the group of the copies this thread queued since the last commit.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

/// Waits until at most `pending` of this thread's committed groups are still in flight.
template <int pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending));
}

}  // namespace cuda
}  // namespace randnla
