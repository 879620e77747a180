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
// Columns of C a thread resolves in one row (join_row): its flags are read once, and the terms a
// thread joins over kGroup columns vary less from thread to thread than over one, so that a
// warp's threads finish together.
constexpr int kGroup = 8;
static_assert(4 * kGroup <= 32, "a nibble per column of a group in one word");

/// An operand as the epilogue reads it: op(X)(r, q), FP32 or FP16, and its stored elements.
struct Operand {
  const void* data;
  index_t rows, cols, ld;  // as stored (all slices: K = rows if transposed, else cols)
  bool transposed, fp16;
  index_t slice_k, slice_stride;  // K in slices of slice_k, slice_stride apart (TcOperand::slices)
  bool one_slice;
  index_t rs, qs;  // with one slice, op(X)(r, q) is element r * rs + q * qs
  __device__ float element(index_t e) const {
    return fp16 ? __half2float(static_cast<const __half*>(data)[e]) : static_cast<const float*>(data)[e];
  }
  // No reference to r or c (one chosen at run time would put both on the stack, and local
  // stores go through to L2: 6.6 GB of them in a 1 GiB scan); no division in the usual one slice.
  __device__ float stored(index_t r, index_t c) const {
    const index_t q = transposed ? r : c;
    const index_t s = q < slice_k ? 0 : q / slice_k, start = s * slice_k;
    return element(s * slice_stride + (transposed ? r - start : r) + (transposed ? c : c - start) * ld);
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
  if (t < lines.capacity) lines.list[t * lines.lines + line] = x > 0 ? static_cast<int>(q + 1) : -static_cast<int>(q + 1);
}

/// Bit u set where v[u] is Inf or NaN. The scans record those entries by reading them again:
/// indexing v in a rolled loop would put it in local memory (twice the scanned bytes of traffic).
__device__ unsigned nonfinite_mask(const float (&v)[kLoads]) {
  unsigned bad = 0;
#pragma unroll
  for (int u = 0; u < kLoads; ++u) bad |= isfinite(v[u]) ? 0u : 1u << u;
  return bad;
}

__device__ float to_float(float x) { return x; }
__device__ float to_float(__half x) { return __half2float(x); }

/// One K slice of an operand as a plain stored matrix: element (r, c) at p[r + c * ld], (r0, c0)
/// the operand's stored coordinates of its first element. The scans read through it, so that each
/// load costs an add to a pointer, not Operand::stored's index arithmetic (which made a 1 GiB scan
/// instruction-bound at a quarter of the memory bandwidth).
template <class T>
struct Slice {
  const T* p;
  index_t rows, cols, ld, r0, c0;
  __device__ Slice(const Operand& x, index_t s)
      : p(static_cast<const T*>(x.data) + s * x.slice_stride), rows(x.transposed ? x.slice_k : x.rows),
        cols(x.transposed ? x.cols : x.slice_k), ld(x.ld), r0(x.transposed ? s * x.slice_k : 0),
        c0(x.transposed ? 0 : s * x.slice_k) {}
};

__device__ index_t slice_count(const Operand& x) { return (x.transposed ? x.rows : x.cols) / x.slice_k; }

/// The Inf and NaN entries of the stored columns of x that are reached lines (a line is a stored
/// column, its stored rows are K), each column read by consecutive threads (coalesced).
template <class T>
__device__ void scan_columns(const Slice<T>& x, const NonfiniteLines& lines) {
  for (index_t col = blockIdx.x; col < x.cols; col += gridDim.x) {
    if (!lines.left[x.c0 + col]) continue;
    const T* column = x.p + col * x.ld;
    for (index_t row0 = threadIdx.x; row0 < x.rows; row0 += kLoads * blockDim.x) {
      float v[kLoads];
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        const index_t row = row0 + u * blockDim.x;
        v[u] = row < x.rows ? to_float(column[row]) : 0.0f;
      }
      for (unsigned bad = nonfinite_mask(v); bad; bad &= bad - 1) {
        const index_t row = row0 + (__ffs(bad) - 1) * blockDim.x;
        record(lines, x.c0 + col, x.r0 + row, to_float(column[row]));
      }
    }
  }
}

/// The same for the stored rows of x that are reached lines (stored columns are K): blocks of
/// blockDim.x rows by kColumnsPerItem columns, a thread per row (consecutive rows: coalesced); a
/// block with no reached row skips its item, so a few reached rows cost a few blocks' reads, not a
/// pass over x.
template <class T>
__device__ void scan_rows(const Slice<T>& x, const NonfiniteLines& lines) {
  const index_t row_blocks = (x.rows + blockDim.x - 1) / blockDim.x;
  const index_t items = row_blocks * ((x.cols + kColumnsPerItem - 1) / kColumnsPerItem);
  for (index_t item = blockIdx.x; item < items; item += gridDim.x) {
    const index_t row = (item % row_blocks) * blockDim.x + threadIdx.x, col0 = (item / row_blocks) * kColumnsPerItem;
    const bool reached = row < x.rows && lines.left[x.r0 + row];
    if (!__syncthreads_or(reached)) continue;
    const index_t col_end = col0 + kColumnsPerItem < x.cols ? col0 + kColumnsPerItem : x.cols;
    for (index_t c0 = col0; reached && c0 < col_end; c0 += kLoads) {
      const T* at = x.p + row + c0 * x.ld;
      float v[kLoads];
#pragma unroll
      for (int u = 0; u < kLoads; ++u) v[u] = c0 + u < col_end ? to_float(at[u * x.ld]) : 0.0f;
      for (unsigned bad = nonfinite_mask(v); bad; bad &= bad - 1) {
        const int u = __ffs(bad) - 1;
        record(lines, x.r0 + row, x.c0 + c0 + u, to_float(at[u * x.ld]));
      }
    }
  }
}

template <class T>
__device__ void scan_slices(const Operand& x, bool line_is_col, const NonfiniteLines& lines) {
  for (index_t s = 0; s < slice_count(x); ++s) {
    const Slice<T> slice(x, s);
    if (line_is_col)
      scan_columns(slice, lines);
    else
      scan_rows(slice, lines);
  }
}

/// The Inf and NaN entries of the lines of x the kernel reached (rows of op(A) or columns of
/// op(B)); a line is a stored column when `line_is_col`, else a stored row.
__device__ void scan(const Operand& x, bool line_is_col, const NonfiniteLines& lines) {
  if (x.fp16)
    scan_slices<__half>(x, line_is_col, lines);
  else
    scan_slices<float>(x, line_is_col, lines);
}

/// A listed infinity +-(q + 1): its index q in the line and its value.
__device__ index_t listed_index(int entry) { return (entry > 0 ? entry : -entry) - 1; }
__device__ float listed_infinity(int entry) { return entry > 0 ? INFINITY : -INFINITY; }

/// The kinds of the listed infinities of column j of op(B) times op(A)(i, q), added to `bits`;
/// stops once the sum is settled as NaN.
__device__ unsigned join_column(const EpilogueArgs& f, index_t i, index_t j, unsigned bits) {
  const NonfiniteLines& cols = f.state.cols;
  for (int t = 0; t < cols.count[j] && !settled(bits); ++t) {
    const int entry = cols.list[t * cols.lines + j];
    bits |= kind(listed_infinity(entry) * f.a(i, listed_index(entry)));
  }
  return bits;
}

/// The kinds of every term A(i, q) B(q, j), stopping once the sum is settled as NaN.
__device__ unsigned join_all(const EpilogueArgs& f, index_t i, index_t j) {
  unsigned bits = 0;
  for (index_t q = 0; q < f.k && !settled(bits); ++q) bits |= kind(f.a(i, q) * f.b(q, j));
  return bits;
}

/// op(X)(r, q), without Operand::stored's slice arithmetic where there is one slice.
__device__ float entry_of(const Operand& x, index_t r, index_t q) {
  return x.one_slice ? x.element(r * x.rs + q * x.qs) : x(r, q);
}

/// The kinds of row i's listed infinities times op(B)(q, j0 + u) for the columns u in `open`,
/// each column until its sum is settled as NaN, as a nibble per column (u in bits 4u .. 4u + 3);
/// NaN for a row holding a NaN, nothing for a row with more infinities than its list
/// (term_kinds joins those over K). The first two terms of every column are loaded at once; the
/// columns still open are then walked one after another: a column settles after a few terms, and
/// a warp whose threads joined all their columns in lockstep would run as many rounds as its
/// slowest column needs (about 10 for 256 columns, against 3).
__device__ unsigned join_row(const EpilogueArgs& f, index_t i, index_t j0, unsigned open) {
  const NonfiniteLines& rows = f.state.rows;
  if (rows.nan[i]) return kNotANumber * 0x11111111u;
  const int count = rows.count[i] > rows.capacity ? 0 : rows.count[i];
  if (count == 0) return 0u;
  const int first = rows.list[i], second = count > 1 ? rows.list[rows.lines + i] : first;
  float x[kGroup], y[kGroup];
#pragma unroll
  for (int u = 0; u < kGroup; ++u) {
    const bool needed = open >> u & 1u;
    x[u] = needed ? entry_of(f.b, listed_index(first), j0 + u) : 0.0f;
    y[u] = needed ? entry_of(f.b, listed_index(second), j0 + u) : 0.0f;
  }
  unsigned nibbles = 0;
#pragma unroll
  for (int u = 0; u < kGroup; ++u)
    if (open >> u & 1u) {
      const unsigned bits = kind(listed_infinity(first) * x[u]) | kind(listed_infinity(second) * y[u]);
      nibbles |= bits << 4 * u;
      if (settled(bits) || count <= 2) open &= ~(1u << u);
    }
  for (int t = 2, u = __ffs(open) - 1; open;) {
    const int entry = rows.list[t * rows.lines + i];
    nibbles |= kind(listed_infinity(entry) * entry_of(f.b, listed_index(entry), j0 + u)) << 4 * u;
    if (settled(nibbles >> 4 * u & 0xfu) || ++t == count) {
      open &= open - 1;
      u = __ffs(open) - 1, t = 2;
    }
  }
  return nibbles;
}

/// The kinds of every term of element (i, j), given its row's (join_row).
__device__ unsigned term_kinds(const EpilogueArgs& f, index_t i, index_t j, unsigned row_bits) {
  const NonfiniteLines &rows = f.state.rows, &cols = f.state.cols;
  if (settled(row_bits) || cols.nan[j]) return kNotANumber;
  if (rows.count[i] > rows.capacity || cols.count[j] > cols.capacity) return join_all(f, i, j);
  return join_column(f, i, j, row_bits);
}

/// op(A)(i, :) op(B)(:, j) in FP32, summed in order as SGEMM sums.
__device__ float fp32_dot(const EpilogueArgs& f, index_t i, index_t j) {
  float sum = 0.0f;
  for (index_t q = 0; q < f.k; ++q) sum = __fmaf_rn(f.a(i, q), f.b(q, j), sum);
  return sum;
}

/// The element's value, given the kinds of all its terms.
__device__ float value_of(const EpilogueArgs& f, index_t i, index_t j, unsigned bits) {
  if (!bits) return fp32_dot(f, i, j);  // finite terms whose split sums overflowed
  return settled(bits) ? __int_as_float(0x7fffffff) : (bits & kPlusInf ? __int_as_float(0x7f800000) : __int_as_float(0xff800000));
}

/// The elements of row i in columns j0 .. j0 + kGroup - 1 that the kernel left, resolved and
/// their class bytes zeroed (consecutive threads take consecutive rows: the class bytes, the
/// rows' flags and lists are read coalesced).
__device__ void resolve_group(const EpilogueArgs& f, index_t i, index_t j0) {
  auto* classes = reinterpret_cast<unsigned char*>(f.state.classes);
  unsigned left = 0;
#pragma unroll
  for (int u = 0; u < kGroup; ++u)
    if (j0 + u < f.n && (classes[i + (j0 + u) * f.m] & kLeftByKernel)) left |= 1u << u;
  if (!left) return;
  // Where the row's infinities are all listed and a column of op(B) is finite (the usual case:
  // one operand holds the Inf and NaN), the row's kinds are the element's: no further load.
  const NonfiniteLines& cols = f.state.cols;
  unsigned row_decides = 0;
#pragma unroll
  for (int u = 0; u < kGroup; ++u)
    if ((left >> u & 1u) && !cols.nan[j0 + u] && cols.count[j0 + u] == 0) row_decides |= 1u << u;
  if (f.state.rows.count[i] > f.state.rows.capacity) row_decides = 0;
  const unsigned row_nibbles = join_row(f, i, j0, left);
  for (; left; left &= left - 1) {
    const int u = __ffs(left) - 1;
    const index_t j = j0 + u;
    const unsigned row_bits = row_nibbles >> 4 * u & 0xfu;
    float* cij = f.c + i + j * f.ldc;
    const float v = f.alpha * value_of(f, i, j, row_decides >> u & 1u ? row_bits : term_kinds(f, i, j, row_bits));
    *cij = f.beta == 0.0f ? v : v + f.beta * *cij;
    classes[i + j * f.m] = 0;
  }
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
  const index_t groups = (f.n + kGroup - 1) / kGroup;
  for (index_t item = thread; item < f.m * groups; item += threads) resolve_group(f, item % f.m, item / f.m * kGroup);
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
                 x.slice_stride, x.slices <= 1, t ? x.ld : 1, t ? 1 : x.ld};
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
    l.lines = lines;
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
