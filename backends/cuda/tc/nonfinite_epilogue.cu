// The non-finite epilogue's cooperative kernel (nonfinite_epilogue.cuh).
#include "nonfinite_epilogue.cuh"

#include <cooperative_groups.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <limits>
#include <map>
#include <mutex>

#include "cuda/context/cuda_check.hpp"
#include "cuda/products/tc_gemm.cuh"

namespace randnla {
namespace cuda {
namespace tc {
namespace {

namespace cg = cooperative_groups;

// kLoads: loads in flight per thread in the scan; at least kBlocksPerSm blocks per multiprocessor
// (registers capped to match), so that enough of them are in flight to stream an operand.
constexpr int kThreads = 256, kBlocksPerSm = 4, kLoads = 8, kColumnsPerItem = 32, kTermsAtOnce = 4;

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

/// Entry x = op(X)(line, q) or op(X)(q, line) of a line, Inf or NaN. A listed infinity of a row
/// of op(A) marks row q of op(B) as `needed` (null for the columns of op(B), or without signs).
__device__ void record(const NonfiniteLines& lines, index_t line, index_t q, float x, unsigned char* needed) {
  if (isnan(x)) {
    lines.nan[line] = 1;
    return;
  }
  const int t = atomicAdd(lines.count + line, 1);
  if (t >= lines.capacity) return;
  lines.list[t * lines.lines + line] = x > 0 ? static_cast<int>(q + 1) : -static_cast<int>(q + 1);
  if (needed && !needed[q]) needed[q] = 1;
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
__device__ void scan_columns(const Slice<T>& x, const NonfiniteLines& lines, unsigned char* needed) {
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
        record(lines, x.c0 + col, x.r0 + row, to_float(column[row]), needed);
      }
    }
  }
}

/// The same for the stored rows of x that are reached lines (stored columns are K): blocks of
/// blockDim.x rows by kColumnsPerItem columns, a thread per row (consecutive rows: coalesced); a
/// block with no reached row skips its item, so a few reached rows cost a few blocks' reads, not a
/// pass over x.
template <class T>
__device__ void scan_rows(const Slice<T>& x, const NonfiniteLines& lines, unsigned char* needed) {
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
        record(lines, x.r0 + row, x.c0 + c0 + u, to_float(at[u * x.ld]), needed);
      }
    }
  }
}

template <class T>
__device__ void scan_slices(const Operand& x, bool line_is_col, const NonfiniteLines& lines, unsigned char* needed) {
  for (index_t s = 0; s < slice_count(x); ++s) {
    const Slice<T> slice(x, s);
    if (line_is_col)
      scan_columns(slice, lines, needed);
    else
      scan_rows(slice, lines, needed);
  }
}

/// The Inf and NaN entries of the lines of x the kernel reached (rows of op(A) or columns of
/// op(B)); a line is a stored column when `line_is_col`, else a stored row.
__device__ void scan(const Operand& x, bool line_is_col, const NonfiniteLines& lines, unsigned char* needed) {
  if (x.fp16)
    scan_slices<__half>(x, line_is_col, lines, needed);
  else
    scan_slices<float>(x, line_is_col, lines, needed);
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

/// Bit u set where op(B)(q, 32 w + u) > 0 (x) and where it is < 0 (y): a listed infinity of
/// sign +1 times those gives +Inf and -Inf, and NaN for the rest (zeros and NaNs).
__device__ uint2 signs_of_row(const EpilogueArgs& f, index_t q, index_t w, unsigned columns) {
  const NonfiniteState& s = f.state;
  if (s.signs) return s.signs[q * s.words + w];
  uint2 signs = make_uint2(0u, 0u);
  for (; columns; columns &= columns - 1) {
    const int u = __ffs(columns) - 1;
    const float v = entry_of(f.b, q, 32 * w + u);
    signs.x |= (v > 0.0f ? 1u : 0u) << u, signs.y |= (v < 0.0f ? 1u : 0u) << u;
  }
  return signs;
}

/// The kinds of a row's terms in the 32 columns of a word, a mask per kind.
struct RowKinds {
  unsigned plus = 0, minus = 0, nan = 0;
  __device__ unsigned of_column(int u) const {
    return (plus >> u & 1u) * kPlusInf | (minus >> u & 1u) * kMinusInf | (nan >> u & 1u) * kNotANumber;
  }
};

/// The kinds of the terms of row i's listed infinities in the 32 columns of word w; a column
/// stops being joined once its sum is settled as NaN, the row once all of `open` are. NaN for a
/// row holding a NaN, nothing for a row with more infinities than its list (term_kinds joins
/// those over K).
__device__ RowKinds join_row(const EpilogueArgs& f, index_t i, index_t w, unsigned open) {
  const NonfiniteLines& rows = f.state.rows;
  RowKinds kinds;
  if (rows.nan[i]) {
    kinds.nan = ~0u;
    return kinds;
  }
  const int count = rows.count[i] > rows.capacity ? 0 : rows.count[i];
  // kTermsAtOnce terms per round, their loads independent: a round costs two trips to memory
  // (the list, then the signs), where one term at a time cost two per term.
  for (int t = 0; t < count && open; t += kTermsAtOnce) {
    int entry[kTermsAtOnce];
#pragma unroll
    for (int v = 0; v < kTermsAtOnce; ++v) entry[v] = t + v < count ? rows.list[(t + v) * rows.lines + i] : 0;
    uint2 signs[kTermsAtOnce];
#pragma unroll
    for (int v = 0; v < kTermsAtOnce; ++v)
      signs[v] = entry[v] ? signs_of_row(f, listed_index(entry[v]), w, open) : make_uint2(0u, 0u);
#pragma unroll
    for (int v = 0; v < kTermsAtOnce; ++v) {
      if (!entry[v]) continue;
      const unsigned plus = entry[v] > 0 ? signs[v].x : signs[v].y, minus = entry[v] > 0 ? signs[v].y : signs[v].x;
      kinds.plus |= plus, kinds.minus |= minus, kinds.nan |= ~(plus | minus);
    }
    open &= ~(kinds.nan | (kinds.plus & kinds.minus));
  }
  return kinds;
}

/// The signs of the rows of op(B) that a listed infinity of op(A) meets, 32 columns to a word:
/// a warp per 32 rows and one word, reading op(B) along its stored columns (coalesced).
__device__ void record_signs(const EpilogueArgs& f, index_t warp, index_t warps) {
  const NonfiniteState& s = f.state;
  const int lane = threadIdx.x % 32;
  const index_t blocks = (f.k + 31) / 32;
  for (index_t item = warp; item < blocks * s.words; item += warps) {
    const index_t q0 = item % blocks * 32, w = item / blocks, j0 = 32 * w;
    const bool need = q0 + lane < f.k && s.needed[q0 + lane];
    const unsigned needing = __ballot_sync(~0u, need);
    if (!f.b.transposed && needing) {  // op(B)'s K stored contiguously: a lane per row
      uint2 signs = make_uint2(0u, 0u);
      for (int u = 0; u < 32 && j0 + u < f.n; ++u) {
        const float v = need ? entry_of(f.b, q0 + lane, j0 + u) : 0.0f;
        signs.x |= (v > 0.0f ? 1u : 0u) << u, signs.y |= (v < 0.0f ? 1u : 0u) << u;
      }
      if (need) s.signs[(q0 + lane) * s.words + w] = signs;
    }
    for (unsigned rest = f.b.transposed ? needing : 0u; rest; rest &= rest - 1) {  // a lane per column
      const index_t q = q0 + __ffs(rest) - 1;
      const float v = j0 + lane < f.n ? entry_of(f.b, q, j0 + lane) : 0.0f;
      const uint2 signs = make_uint2(__ballot_sync(~0u, v > 0.0f), __ballot_sync(~0u, v < 0.0f));
      if (lane == 0) s.signs[q * s.words + w] = signs;
    }
  }
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

/// Bit u set where column 32 w + u of op(B) holds Inf or NaN.
__device__ unsigned nonfinite_columns(const NonfiniteLines& cols, index_t w) {
  unsigned bits = 0;
  for (index_t j = 32 * w; j < cols.lines && j < 32 * w + 32; ++j)
    if (cols.nan[j] || cols.count[j]) bits |= 1u << (j - 32 * w);
  return bits;
}

/// C(i, j) := v + beta C(i, j), C's old value read only where beta is nonzero (v: alpha times the sum).
__device__ void store_element(float* cij, float v, float beta) { *cij = beta == 0.0f ? v : v + beta * *cij; }

/// The elements of row i in the 32 columns of word w that the kernel left, resolved and their
/// bytes zeroed (consecutive threads take consecutive rows: those bytes and C are read and
/// written coalesced).
__device__ void resolve_word(const EpilogueArgs& f, index_t i, index_t w) {
  const NonfiniteLines& rows = f.state.rows;
  const index_t j0 = 32 * w;
  const int width = f.n - j0 < 32 ? static_cast<int>(f.n - j0) : 32;
  unsigned char* left_at = f.state.left_elements + i + j0 * f.m;
  unsigned left = 0;
#pragma unroll
  for (int u = 0; u < 32; ++u)
    if (u < width && left_at[u * f.m]) left |= 1u << u;
  if (!left) return;
  const RowKinds row = join_row(f, i, w, left);
  const unsigned nan = row.nan | (row.plus & row.minus);
  // Where the row's infinities are all listed and column j of op(B) is finite (the usual case:
  // one operand holds the Inf and NaN), the row's kinds are the element's: no further load, and
  // a loop unrolled over the word (addresses from constants), since every element may be left.
  const unsigned by_row =
      rows.count[i] <= rows.capacity ? left & ~f.state.nonfinite_columns[w] & (nan | row.plus | row.minus) : 0u;
  float* c_at = f.c + i + j0 * f.ldc;
#pragma unroll
  for (int u = 0; u < 32; ++u) {
    if (!(by_row >> u & 1u)) continue;
    const float sum = nan >> u & 1u ? __int_as_float(0x7fffffff) : (row.plus >> u & 1u ? INFINITY : -INFINITY);
    store_element(c_at + u * f.ldc, f.alpha * sum, f.beta);
    left_at[u * f.m] = 0;
  }
  for (unsigned rest = left & ~by_row; rest; rest &= rest - 1) {
    const int u = __ffs(rest) - 1;
    const index_t j = j0 + u;
    store_element(c_at + u * f.ldc, f.alpha * value_of(f, i, j, term_kinds(f, i, j, row.of_column(u))), f.beta);
    left_at[u * f.m] = 0;
  }
}

/// The lines' flags, counts and lists zeroed (the state's memory is zero between products,
/// whatever shape the next one has).
__device__ void clear(const NonfiniteLines& lines, index_t thread, index_t threads) {
  for (index_t l = thread; l < lines.lines; l += threads) {
    const int listed = lines.count[l] < lines.capacity ? lines.count[l] : lines.capacity;
    for (int t = 0; t < listed; ++t) lines.list[t * lines.lines + l] = 0;
    lines.nan[l] = lines.left[l] = 0, lines.count[l] = 0;
  }
}

/// The column words, the needed rows' flags and their signs zeroed.
__device__ void clear_words(const EpilogueArgs& f, index_t thread, index_t threads) {
  const NonfiniteState& s = f.state;
  for (index_t w = thread; w < (f.n + 31) / 32; w += threads) s.nonfinite_columns[w] = 0;
  for (index_t q = thread; s.needed && q < f.k; q += threads) {
    if (!s.needed[q]) continue;
    for (index_t w = 0; w < s.words; ++w) s.signs[q * s.words + w] = make_uint2(0u, 0u);
    s.needed[q] = 0;
  }
}

__global__ void __launch_bounds__(kThreads, kBlocksPerSm) epilogue_kernel(EpilogueArgs f) {
  if (*f.state.raised == 0) return;  // the same for every block: none reaches a grid sync
  cg::grid_group grid = cg::this_grid();
  const index_t thread = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  const index_t threads = static_cast<index_t>(gridDim.x) * blockDim.x;
  // 1. The Inf and NaN entries of the rows of op(A) and columns of op(B) that reach an element
  // the kernel left (a non-finite entry makes its whole row or column of C non-finite).
  scan(f.a, f.a.transposed, f.state.rows, f.state.needed);
  scan(f.b, !f.b.transposed, f.state.cols, nullptr);
  grid.sync();
  // 2. The columns of op(B) holding Inf or NaN, 32 to a word, and the signs of the rows of op(B)
  // that op(A)'s listed infinities meet, so that a row's join reads a word per 32 columns, not
  // an element of op(B) per column.
  const index_t words = (f.n + 31) / 32;
  for (index_t w = thread; w < words; w += threads) f.state.nonfinite_columns[w] = nonfinite_columns(f.state.cols, w);
  if (f.state.signs) record_signs(f, thread / 32, threads / 32);
  grid.sync();
  // 3. Every left element resolved.
  for (index_t item = thread; item < f.m * words; item += threads) resolve_word(f, item % f.m, item / f.m);
  grid.sync();
  // 4. The state zeroed for the next product (whose plan kernel lowers the flag).
  clear(f.state.rows, thread, threads);
  clear(f.state.cols, thread, threads);
  clear_words(f, thread, threads);
}

/// The cooperative grid on the current device: as many blocks as can be resident at once.
int resident_blocks() {
  static std::mutex mutex;
  static std::map<int, int> blocks;
  const int device = current_device();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = blocks.find(device);
  if (it != blocks.end()) return it->second;
  int per_sm = 0;
  RANDNLA_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, epilogue_kernel, kThreads, 0));
  return blocks[device] = multiprocessors(device) * per_sm;
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

/// The state's parts in order, each at a 16-byte boundary: the flag, the left elements' bytes,
/// per line set its counts, lists, NaN and left flags, the words of op(B)'s non-finite columns,
/// then op(B)'s needed rows and their signs. The signs (2 bits per element of op(B)) are kept only
/// where they take at most C's left-element bytes; elsewhere a row's join reads op(B) itself.
struct StateLayout {
  std::size_t left_elements, rows, cols, columns, needed, signs, total;
  int row_capacity, col_capacity;
  index_t words;
  StateLayout(index_t m, index_t n, index_t k)
      : row_capacity(list_capacity(n, k)), col_capacity(list_capacity(m, k)), words((n + 31) / 32) {
    left_elements = 16;
    rows = left_elements + aligned(static_cast<std::size_t>(m * n));
    cols = rows + lines_bytes(m, row_capacity);
    columns = cols + lines_bytes(n, col_capacity);
    needed = columns + aligned(sizeof(unsigned) * static_cast<std::size_t>(words));
    const std::size_t sign_bytes = sizeof(uint2) * static_cast<std::size_t>(k) * static_cast<std::size_t>(words);
    const bool keep_signs = sign_bytes <= static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
    signs = needed + (keep_signs ? aligned(static_cast<std::size_t>(k)) : 0);
    total = signs + (keep_signs ? sign_bytes : 0);
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
  s.left_elements = base + layout.left_elements;
  s.rows = StateLayout::lines_at(base + layout.rows, m, layout.row_capacity);
  s.cols = StateLayout::lines_at(base + layout.cols, n, layout.col_capacity);
  s.nonfinite_columns = reinterpret_cast<unsigned*>(base + layout.columns);
  if (layout.total > layout.signs) {
    s.needed = base + layout.needed;
    s.signs = reinterpret_cast<uint2*>(base + layout.signs);
    s.words = layout.words;
  }
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
