// The non-finite epilogue's kernels (nonfinite_epilogue.cuh).
#include "nonfinite_epilogue.cuh"

#include <cuda_fp16.h>

#include "cuda/cuda_check.hpp"
#include "cuda/tc_gemm.cuh"

namespace randnla {
namespace cuda {
namespace tc {
namespace {

constexpr int kThreads = 256;

/// An operand as the epilogue reads it: op(X)(r, q), FP32 or FP16, and its stored elements.
struct Operand {
  const void* data;
  index_t rows, cols, ld;  // as stored
  bool transposed, fp16;
  __device__ float stored(index_t r, index_t c) const {
    const index_t e = r + c * ld;
    return fp16 ? __half2float(static_cast<const __half*>(data)[e]) : static_cast<const float*>(data)[e];
  }
  __device__ float operator()(index_t r, index_t q) const { return transposed ? stored(q, r) : stored(r, q); }
};

struct EpilogueArgs {
  Operand a, b;  // op(A) m x k, op(B) k x n
  index_t m, n, k;
  float alpha, beta;
  float* c;
  index_t ldc;
  NonfiniteState state;
};

__device__ unsigned kind(float t) { return isnan(t) ? kNotANumber : isinf(t) ? (t > 0 ? kPlusInf : kMinusInf) : 0u; }

/// ORs `bits` into element e's class; the atomic only where a bit is new (most repeats are not).
__device__ void add_bits(const NonfiniteState& s, index_t e, unsigned bits) {
  const unsigned shifted = bits << (8 * (e % 4));
  unsigned* word = s.classes + e / 4;
  if (bits && (__ldcg(word) & shifted) != shifted) atomicOr(word, shifted);
}

/// 1. Every non-finite entry of op(A) (of op(B)) joins the kinds of its terms into the classes of
/// the row (column) of C it reaches. The stored matrices are read column by column, coalesced.
__global__ void __launch_bounds__(kThreads) join_kernel(EpilogueArgs f) {
  if (*f.state.raised == 0) return;
  for (index_t col = blockIdx.x; col < f.a.cols; col += gridDim.x)
    for (index_t row = threadIdx.x; row < f.a.rows; row += blockDim.x) {
      const float x = f.a.stored(row, col);
      if (isfinite(x)) continue;
      const index_t i = f.a.transposed ? col : row, q = f.a.transposed ? row : col;
      for (index_t j = 0; j < f.n; ++j) add_bits(f.state, i + j * f.m, kind(x * f.b(q, j)));
    }
  for (index_t col = blockIdx.x; col < f.b.cols; col += gridDim.x)
    for (index_t row = threadIdx.x; row < f.b.rows; row += blockDim.x) {
      const float x = f.b.stored(row, col);
      if (isfinite(x)) continue;
      const index_t q = f.b.transposed ? col : row, j = f.b.transposed ? row : col;
      for (index_t i = 0; i < f.m; ++i) add_bits(f.state, i + j * f.m, kind(f.a(i, q) * x));
    }
}

/// op(A)(i, :) op(B)(:, j) in FP32, summed in order as SGEMM sums.
__device__ float fp32_dot(const EpilogueArgs& f, index_t i, index_t j) {
  float sum = 0.0f;
  for (index_t q = 0; q < f.k; ++q) sum = __fmaf_rn(f.a(i, q), f.b(q, j), sum);
  return sum;
}

__device__ float resolve(const EpilogueArgs& f, index_t i, index_t j, unsigned bits) {
  if (!(bits & (kPlusInf | kMinusInf | kNotANumber))) return fp32_dot(f, i, j);
  const bool nan = (bits & kNotANumber) || ((bits & kPlusInf) && (bits & kMinusInf));
  return nan ? __int_as_float(0x7fffffff) : (bits & kPlusInf ? __int_as_float(0x7f800000) : __int_as_float(0xff800000));
}

/// 2. Every classed element resolved, C := alpha * value + beta * C; the classes zeroed for the
/// next product (whose plan kernel lowers the flag).
__global__ void __launch_bounds__(kThreads) resolve_kernel(EpilogueArgs f) {
  if (*f.state.raised == 0) return;
  const index_t words = (f.m * f.n + 3) / 4;
  for (index_t w = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; w < words;
       w += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const unsigned word = f.state.classes[w];
    if (word == 0) continue;
    for (int b = 0; b < 4; ++b) {
      const unsigned bits = (word >> (8 * b)) & 0xffu;
      const index_t e = 4 * w + b;
      if (bits == 0 || e >= f.m * f.n) continue;
      const index_t i = e % f.m, j = e / f.m;
      float* cij = f.c + i + j * f.ldc;
      const float v = f.alpha * resolve(f, i, j, bits);
      *cij = f.beta == 0.0f ? v : v + f.beta * *cij;
    }
    f.state.classes[w] = 0;
  }
}

Operand operand_of(const TcOperand& x) { return Operand{x.data, x.rows, x.cols, x.ld, x.op == Op::T, x.fp16}; }

}  // namespace

NonfiniteState nonfinite_state(void* memory, index_t m, index_t n) {
  auto* base = static_cast<unsigned char*>(memory);
  NonfiniteState s;
  s.raised = reinterpret_cast<int*>(base);
  s.classes = reinterpret_cast<unsigned*>(base + 16);
  s.bad_rows = base + 16 + static_cast<std::size_t>((m * n + 3) / 4) * 4;
  s.bad_cols = s.bad_rows + m;
  return s;
}

void launch_nonfinite_epilogue(const TcOperand& a, const TcOperand& b, float alpha, float beta, MatrixView<float> c,
                               const NonfiniteState& state, cudaStream_t s) {
  EpilogueArgs f{operand_of(a), operand_of(b), c.rows(), c.cols(), a.op == Op::N ? a.cols : a.rows,
                 alpha, beta, c.data(), c.ld(), state};
  // Two plain launches, each returning at once when the flag is down (a cooperative launch with
  // grid syncs instead cost 13-17 us on a finite 2048^3 product, perf_tests/results/bench_nonfinite.md).
  constexpr unsigned kBlocks = 4 * 132;
  join_kernel<<<kBlocks, kThreads, 0, s>>>(f);
  RANDNLA_CUDA_LAUNCH("non-finite epilogue: join");
  resolve_kernel<<<kBlocks, kThreads, 0, s>>>(f);
  RANDNLA_CUDA_LAUNCH("non-finite epilogue: resolve");
}

}  // namespace tc
}  // namespace cuda
}  // namespace randnla
