// The non-finite epilogue of the split products. A Tensor Core kernel leaves every element of C
// whose accumulator ended Inf or NaN as it was, marks it, and raises a flag; one cooperative kernel
// launched after it (it returns at once when the flag is down: every finite product) then gives
// those elements the value SGEMM gives:
//  - where op(A) or op(B) holds Inf or NaN, the IEEE sum of the non-finite terms A(i,q) B(q,j)
//    (NaN for a NaN term, for Inf * 0 or for infinities of both signs, else the infinity),
//    found from the non-finite entries alone: O(their count x the other dimension), no pass over K
//    per element (before, each such element was summed again over K by one thread: 30 to 480
//    times the finite product's time on the H100, perf_tests/results/bench_nonfinite.md);
//  - elsewhere (finite terms whose split sums overflowed) the FP32 sum over K, as SGEMM sums.
// C := alpha * that + beta * C, with C's old value intact since the kernel left the element.
#pragma once

#include <cuda_runtime.h>

#include "randnla/matrix_view.hpp"

namespace randnla {
namespace cuda {

struct TcOperand;

namespace tc {

/// Class bits of one element of C, a byte each in an array of words (element e in byte e % 4 of
/// word e / 4): the kinds of its non-finite terms, and whether the kernel left it.
enum NonfiniteBits : unsigned { kPlusInf = 1u, kMinusInf = 2u, kNotANumber = 4u, kLeftByKernel = 8u };

/// Device memory of the epilogue, all zero between products (the epilogue zeroes what it used).
struct NonfiniteState {
  unsigned* classes = nullptr;          ///< (m n + 3) / 4 words
  unsigned char* bad_rows = nullptr;    ///< m: op(A)'s row holds Inf or NaN
  unsigned char* bad_cols = nullptr;    ///< n: op(B)'s column does
  unsigned char* left_rows = nullptr;   ///< m: the kernel left an element of C's row (only such
  unsigned char* left_cols = nullptr;   ///< n: rows of op(A), and columns of op(B), are read)
  int* raised = nullptr;                ///< raised by a kernel that left an element, lowered by the
                                        ///< next product's plan kernel (lower_flag)
};

/// Bytes of NonfiniteState for an m x n product.
inline std::size_t nonfinite_state_bytes(index_t m, index_t n) {
  return static_cast<std::size_t>((m * n + 3) / 4) * 4 + 2 * static_cast<std::size_t>(m + n) + 16;
}

#if defined(__CUDACC__)
/// In a kernel's epilogue: element (i, j) of the m-row C was left for the epilogue.
__device__ __forceinline__ void leave_for_epilogue(const NonfiniteState& s, index_t i, index_t j, index_t m) {
  const index_t e = i + j * m;
  atomicOr(s.classes + e / 4, kLeftByKernel << (8 * (e % 4)));
  s.left_rows[i] = 1;
  s.left_cols[j] = 1;
  *s.raised = 1;
}
#endif

#if defined(__CUDACC__)
/// Before a product's kernels: the last product's flag lowered (its epilogue has run).
__device__ __forceinline__ void lower_flag(const NonfiniteState& s) {
  if (s.raised) *s.raised = 0;
}
#endif

/// NonfiniteState over `bytes` (nonfinite_state_bytes) of zeroed device memory.
NonfiniteState nonfinite_state(void* memory, index_t m, index_t n);

/// The epilogue of C := alpha op(A) op(B) + beta C (a, b as the product took them), after the
/// product's kernels on stream s.
void launch_nonfinite_epilogue(const TcOperand& a, const TcOperand& b, float alpha, float beta, MatrixView<float> c,
                               const NonfiniteState& state, cudaStream_t s);

}  // namespace tc
}  // namespace cuda
}  // namespace randnla
