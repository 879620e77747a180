// The non-finite epilogue's cooperative kernel (nonfinite_epilogue.cuh).
#include "nonfinite_epilogue.cuh"

#include <cooperative_groups.h>
#include <cuda_fp16.h>

#include <map>
#include <mutex>

#include "cuda/cuda_check.hpp"
#include "cuda/tc_gemm.cuh"

namespace randnla {
namespace cuda {
namespace tc {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256, kListed = 256;  // non-finite entries a block lists at a time

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

__device__ void add_bits(const NonfiniteState& s, index_t e, unsigned bits) {
  if (bits) atomicOr(s.classes + e / 4, bits << (8 * (e % 4)));
}

/// The non-finite terms of `line` (a row of op(A) when rows, else a column of op(B)), listed
/// kListed at a time in shared memory, joined with every element of that line of C.
__device__ void join_line(const EpilogueArgs& f, index_t line, bool rows) {
  __shared__ index_t listed[kListed];
  __shared__ int count;
  for (index_t q0 = 0; q0 < f.k; q0 += kListed) {
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    for (index_t q = q0 + threadIdx.x; q < f.k && q < q0 + kListed; q += blockDim.x) {
      const float x = rows ? f.a(line, q) : f.b(q, line);
      if (!isfinite(x)) listed[atomicAdd(&count, 1)] = q;
    }
    __syncthreads();
    const index_t others = rows ? f.n : f.m;
    for (index_t o = threadIdx.x; o < others && count > 0; o += blockDim.x) {
      unsigned bits = 0;
      for (int t = 0; t < count; ++t) {
        const index_t q = listed[t];
        bits |= kind(rows ? f.a(line, q) * f.b(q, o) : f.a(o, q) * f.b(q, line));
      }
      add_bits(f.state, rows ? line + o * f.m : o + line * f.m, bits);
    }
    __syncthreads();
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

__global__ void __launch_bounds__(kThreads) epilogue_kernel(EpilogueArgs f) {
  if (*f.state.raised == 0) return;  // the same for every block: none reaches a grid sync
  cg::grid_group grid = cg::this_grid();
  const index_t thread = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  const index_t threads = static_cast<index_t>(gridDim.x) * blockDim.x;
  // 1. The rows of op(A) and columns of op(B) that hold Inf or NaN, the stored matrices read
  // column by column (coalesced, no division per element), only where they reach a row or column
  // of C the kernel left (a non-finite entry makes its whole row or column of C non-finite).
  for (index_t col = blockIdx.x; col < f.a.cols; col += gridDim.x) {
    if (f.a.transposed && !f.state.left_rows[col]) continue;
    for (index_t row = threadIdx.x; row < f.a.rows; row += blockDim.x) {
      const index_t i = f.a.transposed ? col : row;
      if ((f.a.transposed || f.state.left_rows[i]) && !isfinite(f.a.stored(row, col))) f.state.bad_rows[i] = 1;
    }
  }
  for (index_t col = blockIdx.x; col < f.b.cols; col += gridDim.x) {
    if (!f.b.transposed && !f.state.left_cols[col]) continue;
    for (index_t row = threadIdx.x; row < f.b.rows; row += blockDim.x) {
      const index_t j = f.b.transposed ? row : col;
      if ((!f.b.transposed || f.state.left_cols[j]) && !isfinite(f.b.stored(row, col))) f.state.bad_cols[j] = 1;
    }
  }
  grid.sync();
  // 2. Their terms' kinds, joined into the classes of the elements they reach.
  for (index_t i = blockIdx.x; i < f.m; i += gridDim.x)
    if (f.state.bad_rows[i]) join_line(f, i, true);
  for (index_t j = blockIdx.x; j < f.n; j += gridDim.x)
    if (f.state.bad_cols[j]) join_line(f, j, false);
  grid.sync();
  // 3. Every classed element resolved; the state zeroed for the next product (whose plan kernel
  // lowers the flag).
  for (index_t w = thread; w < (f.m * f.n + 3) / 4; w += threads) {
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
  for (index_t i = thread; i < f.m; i += threads) f.state.bad_rows[i] = f.state.left_rows[i] = 0;
  for (index_t j = thread; j < f.n; j += threads) f.state.bad_cols[j] = f.state.left_cols[j] = 0;
}

/// The cooperative grid on the current device: as many blocks as can be resident at once.
int resident_blocks() {
  static std::mutex mutex;
  static std::map<int, int> blocks;
  int device = 0;
  RANDNLA_CUDA(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  auto it = blocks.find(device);
  if (it != blocks.end()) return it->second;
  int sms = 0, per_sm = 0;
  RANDNLA_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  RANDNLA_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, epilogue_kernel, kThreads, 0));
  return blocks[device] = sms * per_sm;
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
  s.left_rows = s.bad_cols + n;
  s.left_cols = s.left_rows + m;
  return s;
}

void launch_nonfinite_epilogue(const TcOperand& a, const TcOperand& b, float alpha, float beta, MatrixView<float> c,
                               const NonfiniteState& state, cudaStream_t s) {
  EpilogueArgs f{operand_of(a), operand_of(b), c.rows(), c.cols(), a.op == Op::N ? a.cols : a.rows,
                 alpha, beta, c.data(), c.ld(), state};
  // On a finite product this is one launch that returns at once: about 15 us of host time at
  // 2048^3, hidden behind products of 0.5 ms and more (perf_tests/results/bench_nonfinite.md).
  void* params[] = {&f};
  RANDNLA_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(epilogue_kernel), dim3(resident_blocks()),
                                           dim3(kThreads), params, 0, s));
}

}  // namespace tc
}  // namespace cuda
}  // namespace randnla
