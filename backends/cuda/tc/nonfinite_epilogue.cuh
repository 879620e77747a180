// The non-finite epilogue of the split products. A Tensor Core kernel leaves every element of C
// whose accumulator ended Inf or NaN as it was, marks it, and raises a flag; one cooperative kernel
// launched after it (it returns at once when the flag is down: every finite product) then gives
// those elements the value SGEMM gives:
//  - where op(A) or op(B) holds Inf or NaN, the IEEE sum of the non-finite terms A(i,q) B(q,j)
//    (NaN for a NaN term, for Inf * 0 or for infinities of both signs, else the infinity).
//    One coalesced pass over the rows of op(A) and columns of op(B) that reach a left element
//    lists their infinities and flags their NaNs; each left element then joins only its row's
//    and column's listed terms, stopping once the sum is NaN, a row's terms 32 columns at a time
//    through the sign bits of the rows of op(B) they meet. A row or column with more infinities
//    than its list holds is joined over all of K instead (work K per element: only operands with
//    more than `capacity` infinities in one line and no NaN there take it);
//  - elsewhere (finite terms whose split sums overflowed) the FP32 sum over K, as SGEMM sums.
// C := alpha * that + beta * C, with C's old value intact since the kernel left the element.
#pragma once

#include <cuda_runtime.h>

#include "randnla/matrix_view.hpp"

namespace randnla {
namespace cuda {

struct TcOperand;

namespace tc {

/// The kinds of the non-finite terms of one element of C, as bits.
enum NonfiniteBits : unsigned { kPlusInf = 1u, kMinusInf = 2u, kNotANumber = 4u };

/// The infinities and NaN flags of the lines (rows of op(A) or columns of op(B)) of one operand.
struct NonfiniteLines {
  unsigned char* nan = nullptr;    ///< a line holds a NaN
  unsigned char* left = nullptr;   ///< the kernel left an element of C in this line (only such lines are read)
  int* count = nullptr;            ///< infinities in a line (may exceed capacity)
  int* list = nullptr;             ///< t * lines + line: +-(q + 1), the sign the infinity's (t-major:
                                   ///< consecutive lines' t-th entries are read together)
  int capacity = 0;
  index_t lines = 0;
};

/// Device memory of the epilogue, zero between products (the epilogue zeroes what it used).
struct NonfiniteState {
  unsigned char* left_elements = nullptr;  ///< a byte per element e = i + j m of C: 1 where the kernel left it
  NonfiniteLines rows, cols;    ///< op(A)'s m rows, op(B)'s n columns
  unsigned* nonfinite_columns = nullptr;  ///< bit u of word w: column 32 w + u of op(B) holds Inf or NaN
  /// Where kept (else null): op(B)'s rows q that a listed infinity of op(A) meets (k flags) and
  /// their signs, words per row, {bit u: op(B)(q, 32 w + u) > 0, bit u: < 0} in word w.
  unsigned char* needed = nullptr;
  uint2* signs = nullptr;
  index_t words = 0;
  int* raised = nullptr;        ///< raised by a kernel that left an element, lowered by the
                                ///< next product's plan kernel (lower_flag)
};

/// Bytes of NonfiniteState for an m x n x k product: a byte per element of C, plus each operand's
/// infinity lists and op(B)'s signs, at most C's own bytes each (the workspace keeps it between
/// products).
std::size_t nonfinite_state_bytes(index_t m, index_t n, index_t k);

#if defined(__CUDACC__)
/// In a kernel's epilogue: element (i, j) of the m-row C was left for the epilogue (which runs
/// once raise_flag says so). Its byte has one writer (no atomic); the line flags are read before
/// they are written: where every element is left, millions of stores to one word would queue at
/// its L2 slice (milliseconds), while the reads mostly see the flag set.
__device__ __forceinline__ void leave_for_epilogue(const NonfiniteState& s, index_t i, index_t j, index_t m) {
  s.left_elements[i + j * m] = 1;
  if (!s.rows.left[i]) s.rows.left[i] = 1;
  if (!s.cols.left[j]) s.cols.left[j] = 1;
}

/// The flag that makes the epilogue run, raised by a thread that left an element.
__device__ __forceinline__ void raise_flag(const NonfiniteState& s) {
  if (!*s.raised) *s.raised = 1;
}
#endif

#if defined(__CUDACC__)
/// Before a product's kernels: the last product's flag lowered (its epilogue has run).
__device__ __forceinline__ void lower_flag(const NonfiniteState& s) {
  if (s.raised) *s.raised = 0;
}
#endif

/// NonfiniteState over nonfinite_state_bytes(m, n, k) of zeroed device memory.
NonfiniteState nonfinite_state(void* memory, index_t m, index_t n, index_t k);

/// The epilogue of C := alpha op(A) op(B) + beta C (a, b as the product took them), after the
/// product's kernels on stream s.
void launch_nonfinite_epilogue(const TcOperand& a, const TcOperand& b, float alpha, float beta, MatrixView<float> c,
                               const NonfiniteState& state, cudaStream_t s);

}  // namespace tc
}  // namespace cuda
}  // namespace randnla
