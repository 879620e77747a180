// The non-finite epilogue's cooperative kernel (nonfinite_epilogue.cuh).
#include "nonfinite_epilogue.cuh"

#include <cooperative_groups.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <limits>
#include <map>
#include <mutex>

#include "cuda/cuda_check.hpp"
#include "cuda/tc_gemm.cuh"

namespace randnla {
namespace cuda {
namespace tc {
namespace {

namespace cg = cooperative_groups;

// kLoads: loads in flight per thread in the scan; at least kBlocksPerSm blocks per multiprocessor
// (registers capped to match), so that enough of them are in flight to stream an operand.
constexpr int kThreads = 256, kBlocksPerSm = 4, kLoads = 8, kColumnsPerItem = 32;

/// An operand as the epilogue reads it: op(X)(r, q), FP32 or FP16, and its stored elements.
struct Operand {
  const void* data;
  index_t rows, cols, ld;  // as stored (all slices: K = rows if transposed, else cols)
  bool transposed, fp16;
  index_t slice_k, slice_stride;  // K in slices of slice_k, slice_stride apart (TcOperand::slices)
  __device__ float stored(index_t r, index_t c) const {
    index_t& q = transposed ? r : c;
    const index_t s = q / slice_k;
    q -= s * slice_k;
    const index_t e = s * slice_stride + r + c * ld;
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

/// The sum is NaN whatever the other terms: a NaN term, or infinities of both signs.
__device__ bool settled(unsigned bits) {
  return (bits & kNotANumber) || ((bits & kPlusInf) && (bits & kMinusInf));
}

__device__ void record(const NonfiniteLines& lines, index_t line, index_t q, float x) {
  if (isnan(x)) {
    lines.nan[line] = 1;
    return;
  }
  const int t = atomicAdd(lines.count + line, 1);
  if (t < lines.capacity) lines.list[line * lines.capacity + t] = x > 0 ? static_cast<int>(q + 1) : -static_cast<int>(q + 1);
}

/// Bit u set where v[u] is Inf or NaN. The scans record those entries by reading them again:
/// indexing v in a rolled loop would put it in local memory (twice the scanned bytes of traffic).
__device__ unsigned nonfinite_mask(const float (&v)[kLoads]) {
  unsigned bad = 0;
#pragma unroll
  for (int u = 0; u < kLoads; ++u) bad |= isfinite(v[u]) ? 0u : 1u << u;
  return bad;
}

/// The Inf and NaN entries of the stored columns of x that are reached lines, each read by
/// consecutive threads (coalesced).
__device__ void scan_columns(const Operand& x, const NonfiniteLines& lines) {
  for (index_t col = blockIdx.x; col < x.cols; col += gridDim.x) {
    if (!lines.left[col]) continue;
    for (index_t row0 = threadIdx.x; row0 < x.rows; row0 += kLoads * blockDim.x) {
      float v[kLoads];
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        const index_t row = row0 + u * blockDim.x;
        v[u] = row < x.rows ? x.stored(row, col) : 0.0f;
      }
      for (unsigned bad = nonfinite_mask(v); bad; bad &= bad - 1) {
        const index_t row = row0 + (__ffs(bad) - 1) * blockDim.x;
        record(lines, col, row, x.stored(row, col));
      }
    }
  }
}

/// The same for the stored rows of x that are reached lines: blocks of blockDim.x rows by
/// kColumnsPerItem columns, a thread per row (consecutive rows: coalesced); a block with no
/// reached row skips its item, so a few reached rows cost a few blocks' reads, not a pass over x.
__device__ void scan_rows(const Operand& x, const NonfiniteLines& lines) {
  const index_t row_blocks = (x.rows + blockDim.x - 1) / blockDim.x;
  const index_t items = row_blocks * ((x.cols + kColumnsPerItem - 1) / kColumnsPerItem);
  for (index_t item = blockIdx.x; item < items; item += gridDim.x) {
    const index_t row = (item % row_blocks) * blockDim.x + threadIdx.x, col0 = (item / row_blocks) * kColumnsPerItem;
    const bool reached = row < x.rows && lines.left[row];
    if (!__syncthreads_or(reached)) continue;
    const index_t col_end = col0 + kColumnsPerItem < x.cols ? col0 + kColumnsPerItem : x.cols;
    for (index_t c0 = col0; reached && c0 < col_end; c0 += kLoads) {
      float v[kLoads];
#pragma unroll
      for (int u = 0; u < kLoads; ++u) v[u] = c0 + u < col_end ? x.stored(row, c0 + u) : 0.0f;
      for (unsigned bad = nonfinite_mask(v); bad; bad &= bad - 1) {
        const index_t col = c0 + __ffs(bad) - 1;
        record(lines, row, col, x.stored(row, col));
      }
    }
  }
}

/// The Inf and NaN entries of the lines of x the kernel reached (rows of op(A) or columns of
/// op(B)); a line is a stored column when `line_is_col`, else a stored row.
__device__ void scan(const Operand& x, bool line_is_col, const NonfiniteLines& lines) {
  if (line_is_col)
    scan_columns(x, lines);
  else
    scan_rows(x, lines);
}

/// The kinds of the listed infinities of `line` times their partners: op(B)(q, other) for a row
/// of op(A), op(A)(other, q) for a column of op(B); stops once the sum is settled as NaN.
__device__ unsigned join_listed(const EpilogueArgs& f, const NonfiniteLines& lines, index_t line, index_t other,
                                bool rows, unsigned bits) {
  const int* list = lines.list + line * lines.capacity;
  for (int t = 0; t < lines.count[line] && !settled(bits); ++t) {
    const index_t q = (list[t] > 0 ? list[t] : -list[t]) - 1;
    const float infinity = list[t] > 0 ? INFINITY : -INFINITY;
    bits |= kind(infinity * (rows ? f.b(q, other) : f.a(other, q)));
  }
  return bits;
}

/// The kinds of every term A(i, q) B(q, j), stopping once the sum is settled as NaN.
__device__ unsigned join_all(const EpilogueArgs& f, index_t i, index_t j) {
  unsigned bits = 0;
  for (index_t q = 0; q < f.k && !settled(bits); ++q) bits |= kind(f.a(i, q) * f.b(q, j));
  return bits;
}

__device__ unsigned term_kinds(const EpilogueArgs& f, index_t i, index_t j) {
  const NonfiniteLines &rows = f.state.rows, &cols = f.state.cols;
  if (rows.nan[i] || cols.nan[j]) return kNotANumber;
  if (rows.count[i] > rows.capacity || cols.count[j] > cols.capacity) return join_all(f, i, j);
  return join_listed(f, cols, j, i, false, join_listed(f, rows, i, j, true, 0u));
}

/// op(A)(i, :) op(B)(:, j) in FP32, summed in order as SGEMM sums.
__device__ float fp32_dot(const EpilogueArgs& f, index_t i, index_t j) {
  float sum = 0.0f;
  for (index_t q = 0; q < f.k; ++q) sum = __fmaf_rn(f.a(i, q), f.b(q, j), sum);
  return sum;
}

__device__ float resolve(const EpilogueArgs& f, index_t i, index_t j) {
  const unsigned bits = term_kinds(f, i, j);
  if (!bits) return fp32_dot(f, i, j);  // finite terms whose split sums overflowed
  return settled(bits) ? __int_as_float(0x7fffffff) : (bits & kPlusInf ? __int_as_float(0x7f800000) : __int_as_float(0xff800000));
}

__device__ void clear(const NonfiniteLines& lines, index_t count, index_t thread, index_t threads) {
  for (index_t l = thread; l < count; l += threads) lines.nan[l] = lines.left[l] = 0, lines.count[l] = 0;
}

__global__ void __launch_bounds__(kThreads, kBlocksPerSm) epilogue_kernel(EpilogueArgs f) {
  if (*f.state.raised == 0) return;  // the same for every block: none reaches a grid sync
  cg::grid_group grid = cg::this_grid();
  const index_t thread = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  const index_t threads = static_cast<index_t>(gridDim.x) * blockDim.x;
  // 1. The Inf and NaN entries of the rows of op(A) and columns of op(B) that reach an element
  // the kernel left (a non-finite entry makes its whole row or column of C non-finite).
  scan(f.a, f.a.transposed, f.state.rows);
  scan(f.b, !f.b.transposed, f.state.cols);
  grid.sync();
  // 2. Every left element resolved.
  for (index_t w = thread; w < (f.m * f.n + 3) / 4; w += threads) {
    const unsigned word = f.state.classes[w];
    if (word == 0) continue;
    for (int b = 0; b < 4; ++b) {
      const index_t e = 4 * w + b;
      if (((word >> (8 * b)) & kLeftByKernel) == 0 || e >= f.m * f.n) continue;
      const index_t i = e % f.m, j = e / f.m;
      float* cij = f.c + i + j * f.ldc;
      const float v = f.alpha * resolve(f, i, j);
      *cij = f.beta == 0.0f ? v : v + f.beta * *cij;
    }
    f.state.classes[w] = 0;
  }
  grid.sync();
  // 3. The state zeroed for the next product (whose plan kernel lowers the flag).
  clear(f.state.rows, f.m, thread, threads);
  clear(f.state.cols, f.n, thread, threads);
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

Operand operand_of(const TcOperand& x) {
  const bool t = x.op == Op::T;
  const index_t k = t ? x.rows : x.cols;
  return Operand{x.data, t ? k * x.slices : x.rows, t ? x.cols : k * x.slices, x.ld, t, x.fp16, std::max<index_t>(k, 1),
                 x.slice_stride};
}

/// Infinities listed per line: as many as the other dimension (so that each operand's lists take
/// at most C's bytes), at least 16 and at most 1024.
int list_capacity(index_t others, index_t k) {
  if (k >= std::numeric_limits<int>::max()) return 0;  // +-(q + 1) must fit an int
  return static_cast<int>(std::min<index_t>(k, std::max<index_t>(16, std::min<index_t>(1024, others))));
}

/// The state's parts in order, each at a 16-byte boundary: the flag, the classes, then per
/// line set its counts, lists, NaN and left flags.
struct StateLayout {
  std::size_t classes, rows, cols, total;
  int row_capacity, col_capacity;
  StateLayout(index_t m, index_t n, index_t k)
      : row_capacity(list_capacity(n, k)), col_capacity(list_capacity(m, k)) {
    classes = 16;
    rows = classes + aligned(static_cast<std::size_t>((m * n + 3) / 4) * 4);
    cols = rows + lines_bytes(m, row_capacity);
    total = cols + lines_bytes(n, col_capacity);
  }
  static std::size_t aligned(std::size_t bytes) { return (bytes + 15) / 16 * 16; }
  static std::size_t lines_bytes(index_t lines, int capacity) {
    return aligned(4 * static_cast<std::size_t>(lines) * (1 + capacity)) + aligned(2 * static_cast<std::size_t>(lines));
  }
  static NonfiniteLines lines_at(unsigned char* at, index_t lines, int capacity) {
    NonfiniteLines l;
    l.count = reinterpret_cast<int*>(at);
    l.list = l.count + lines;
    l.nan = at + aligned(4 * static_cast<std::size_t>(lines) * (1 + capacity));
    l.left = l.nan + lines;
    l.capacity = capacity;
    return l;
  }
};

}  // namespace

std::size_t nonfinite_state_bytes(index_t m, index_t n, index_t k) { return StateLayout(m, n, k).total; }

NonfiniteState nonfinite_state(void* memory, index_t m, index_t n, index_t k) {
  auto* base = static_cast<unsigned char*>(memory);
  const StateLayout layout(m, n, k);
  NonfiniteState s;
  s.raised = reinterpret_cast<int*>(base);
  s.classes = reinterpret_cast<unsigned*>(base + layout.classes);
  s.rows = StateLayout::lines_at(base + layout.rows, m, layout.row_capacity);
  s.cols = StateLayout::lines_at(base + layout.cols, n, layout.col_capacity);
  return s;
}

void launch_nonfinite_epilogue(const TcOperand& a, const TcOperand& b, float alpha, float beta, MatrixView<float> c,
                               const NonfiniteState& state, cudaStream_t s) {
  EpilogueArgs f{operand_of(a), operand_of(b), c.rows(), c.cols(), (a.op == Op::N ? a.cols : a.rows) * a.slices,
                 alpha, beta, c.data(), c.ld(), state};
  // On a finite product this is one launch that returns at once (perf_tests/results/bench_gemm.md).
  void* params[] = {&f};
  RANDNLA_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(epilogue_kernel), dim3(resident_blocks()),
                                           dim3(kThreads), params, 0, s));
}

}  // namespace tc
}  // namespace cuda
}  // namespace randnla
