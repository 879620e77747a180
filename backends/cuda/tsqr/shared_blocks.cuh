// TSQR blocks of up to 128 columns, one thread block each, held in shared memory: Householder QR
// panel by panel (kPanel columns unblocked, then compact WY for the columns right of the panel)
// and the thin Q the same way, as LAPACK's sgeqrf / sorgqr, in FP32 with FP64 column norms (no
// FP32 input overflows or underflows them); and the products Q_i S_i down the tree. Included by
// tsqr_ops.cu only.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>

#include "cuda/elementwise/for_each.cuh"
#include "cuda/context/kernel_config.cuh"
#include "randnla/tsqr/tsqr_ops.hpp"

namespace randnla {
namespace cuda {
namespace shared_blocks {

constexpr int kTsqrThreads = 256;    // the products' blocks, and the factorisations' of few columns
constexpr int kWideThreads = 512;     // the factorisations' of more columns: a warp per 4 columns
constexpr index_t kMaxColumns = 128;
constexpr int kMaxSharedBytes = 200 * 1024;    // within the 227 KiB an sm_80/sm_90 block may have
constexpr int kColumnsPerThread = 8;           // outputs per thread in Q_i S_i

struct Block {
  index_t start, rows;
};

__device__ Block row_block(index_t m, index_t blocks) {
  const index_t start = tsqr_block_start(blockIdx.x, m, blocks);
  return {start, tsqr_block_start(blockIdx.x + 1, m, blocks) - start};
}

template <class T>
__device__ T warp_sum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/// sum over i in [first, rows) of col[i]^2 in FP64, by one warp (every lane gets it).
__device__ double warp_sum_of_squares(const float* col, int first, int rows) {
  double part = 0;
  for (int i = first + threadIdx.x % 32; i < rows; i += 32) part += static_cast<double>(col[i]) * col[i];
  return warp_sum(part);
}

constexpr int kPanel = 8;  // columns per panel of the blocked factorisation
constexpr int kGroup = 4;  // columns a warp updates at once
static_assert(kPanel * kGroup == 32, "one sum per lane in panel_products");

/// Unblocked steps within a panel. The block is rows x n in shared memory, leading dimension
/// rows. H_j = I - tau v v^T (v_j = 1, v below the diagonal held in column j) is applied to
/// columns j+1..end-1 from row j down, each group of kGroup columns by one warp (w = tau v^T x,
/// then x -= v w; the group's sums interleaved, so that their shuffles overlap). With `next_norm`,
/// the warp that updates column j+1 leaves its squared norm below row j+1 there.
__device__ void apply_reflector(float* s, int rows, int end, int j, float tau, double* next_norm) {
  const float* v = s + j * rows;
  const int lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int c0 = j + 1 + kGroup * static_cast<int>(threadIdx.x / 32); c0 < end; c0 += kGroup * warps) {
    const int width = min(kGroup, end - c0);
    float* x = s + c0 * rows;
    float acc[kGroup];
#pragma unroll
    for (int g = 0; g < kGroup; ++g) acc[g] = lane == 0 && g < width ? x[j + g * rows] : 0.0f;
    for (int i = j + 1 + lane; i < rows; i += 32) {
      const float vi = v[i];
#pragma unroll
      for (int g = 0; g < kGroup; ++g)
        if (g < width) acc[g] += vi * x[i + g * rows];
    }
    for (int o = 16; o > 0; o >>= 1)
#pragma unroll
      for (int g = 0; g < kGroup; ++g) acc[g] += __shfl_xor_sync(0xffffffffu, acc[g], o);
#pragma unroll
    for (int g = 0; g < kGroup; ++g) acc[g] *= tau;
    if (lane == 0)
#pragma unroll
      for (int g = 0; g < kGroup; ++g)
        if (g < width) x[j + g * rows] -= acc[g];
    for (int i = j + 1 + lane; i < rows; i += 32) {
      const float vi = v[i];
#pragma unroll
      for (int g = 0; g < kGroup; ++g)
        if (g < width) x[i + g * rows] -= vi * acc[g];
    }
    if (next_norm != nullptr && c0 == j + 1) {
      __syncwarp();
      const double sigma = warp_sum_of_squares(x, j + 2, rows);
      if (lane == 0) *next_norm = sigma;
    }
  }
  __syncthreads();
}

// Blocked steps (LAPACK's sgeqrf / sorgqr with slarft and slarfb): the reflectors of a panel of
// kPanel columns as I - V T V^T (V explicit in the panel's columns: ones on the diagonal, zeros
// above), applied to the columns right of it as two passes over them, W = V^T X and X -= V op(T) W.
// A warp takes kGroup columns: its kPanel x kGroup = 32 sums are reduced across the warp by a
// reduce-scatter, one sum ending in each lane.

/// Lane l of each warp gets the sum over the warp's lanes of acc[l] (31 shuffles for 32 sums).
__device__ float reduce_scatter(float (&acc)[32]) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int half = 16; half >= 1; half >>= 1) {
    const bool upper = (lane & half) != 0;
#pragma unroll
    for (int t = 0; t < half; ++t) {
      const float send = upper ? acc[t] : acc[t + half], keep = upper ? acc[t + half] : acc[t];
      acc[t] = keep + __shfl_xor_sync(0xffffffffu, send, half);
    }
  }
  return acc[0];
}

struct Panel {
  int p0, width;  // first column, columns (<= kPanel)
};

/// V(r, k) for r in [p0, rows): column p0 + k of the panel, zero past its width.
__device__ void panel_row(const float* s, int rows, Panel p, int r, float (&v)[kPanel]) {
#pragma unroll
  for (int k = 0; k < kPanel; ++k) v[k] = k < p.width ? s[r + (p.p0 + k) * rows] : 0.0f;
}

/// w(k, c) = sum over r >= p0 of V(r, k) X(r, c), for the columns c in [begin, end); w is kPanel x n
/// by columns.
__device__ void panel_products(const float* s, int rows, Panel p, int begin, int end, float* w) {
  const int lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int c0 = begin + kGroup * static_cast<int>(threadIdx.x / 32); c0 < end; c0 += kGroup * warps) {
    float acc[32] = {};
    for (int r = p.p0 + lane; r < rows; r += 32) {
      float v[kPanel], x[kGroup];
      panel_row(s, rows, p, r, v);
#pragma unroll
      for (int g = 0; g < kGroup; ++g) x[g] = c0 + g < end ? s[r + (c0 + g) * rows] : 0.0f;
#pragma unroll
      for (int k = 0; k < kPanel; ++k)
#pragma unroll
        for (int g = 0; g < kGroup; ++g) acc[k * kGroup + g] += v[k] * x[g];
    }
    const float sum = reduce_scatter(acc);
    const int k = lane / kGroup, c = c0 + lane % kGroup;
    if (c < end) w[k + kPanel * c] = sum;
  }
  __syncthreads();
}

/// X(r, c) -= sum_k V(r, k) w(k, c) for r >= p0 and c in [begin, end).
__device__ void panel_update(float* s, int rows, Panel p, int begin, int end, const float* w) {
  const int lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int c0 = begin + kGroup * static_cast<int>(threadIdx.x / 32); c0 < end; c0 += kGroup * warps) {
    float wk[kPanel][kGroup];
#pragma unroll
    for (int k = 0; k < kPanel; ++k)
#pragma unroll
      for (int g = 0; g < kGroup; ++g) wk[k][g] = c0 + g < end ? w[k + kPanel * (c0 + g)] : 0.0f;
    for (int r = p.p0 + lane; r < rows; r += 32) {
      float v[kPanel];
      panel_row(s, rows, p, r, v);
#pragma unroll
      for (int g = 0; g < kGroup; ++g) {
        if (c0 + g >= end) break;
        float x = s[r + (c0 + g) * rows];
#pragma unroll
        for (int k = 0; k < kPanel; ++k) x -= v[k] * wk[k][g];
        s[r + (c0 + g) * rows] = x;
      }
    }
  }
  __syncthreads();
}

/// w := op(T) w for the columns [begin, end), T (kPanel x kPanel, upper triangular, by columns):
/// each thread one column, in place.
__device__ void triangular_times(const float* t, bool transposed, int begin, int end, float* w) {
  for (int c = begin + static_cast<int>(threadIdx.x); c < end; c += blockDim.x) {
    float x[kPanel], y[kPanel];
#pragma unroll
    for (int k = 0; k < kPanel; ++k) x[k] = w[k + kPanel * c];
#pragma unroll
    for (int k = 0; k < kPanel; ++k) {
      y[k] = 0.0f;
#pragma unroll
      for (int l = 0; l < kPanel; ++l)
        if (transposed ? l <= k : l >= k) y[k] += (transposed ? t[l + kPanel * k] : t[k + kPanel * l]) * x[l];
    }
#pragma unroll
    for (int k = 0; k < kPanel; ++k) w[k + kPanel * c] = y[k];
  }
  __syncthreads();
}

/// The panel's V made explicit in place: ones on the diagonal, zeros above it (rows p0.. p0+width).
/// With `saved`, the entries it replaces (R's) are kept there (kPanel x kPanel by columns).
__device__ void make_v_explicit(float* s, int rows, Panel p, float* saved) {
  for (int e = threadIdx.x; e < kPanel * kPanel; e += blockDim.x) {
    const int i = e % kPanel, k = e / kPanel;
    if (k >= p.width || i > k) continue;
    float& x = s[p.p0 + i + (p.p0 + k) * rows];
    if (saved != nullptr) saved[e] = x;
    x = i == k ? 1.0f : 0.0f;
  }
  __syncthreads();
}

__device__ void restore_r(float* s, int rows, Panel p, const float* saved) {
  for (int e = threadIdx.x; e < kPanel * kPanel; e += blockDim.x) {
    const int i = e % kPanel, k = e / kPanel;
    if (k < p.width && i <= k) s[p.p0 + i + (p.p0 + k) * rows] = saved[e];
  }
  __syncthreads();
}

/// T of the panel (LAPACK's slarft, forward, by columns) from G = V^T V (kPanel x kPanel in g):
/// T(k, k) = tau_k, T(0:k, k) = -tau_k T(0:k, 0:k) G(0:k, k). One thread: T is 8 x 8.
__device__ void form_t(const float* g, const float* tau, Panel p, float* t) {
  if (threadIdx.x == 0)
    for (int k = 0; k < kPanel; ++k) {
      for (int i = 0; i < kPanel; ++i) t[i + kPanel * k] = 0.0f;
      if (k >= p.width) continue;
      const float tk = tau[p.p0 + k];
      for (int i = 0; i < k; ++i) {
        float sum = 0.0f;
        for (int l = i; l < k; ++l) sum += t[i + kPanel * l] * g[l + kPanel * k];
        t[i + kPanel * k] = -tk * sum;
      }
      t[k + kPanel * k] = tk;
    }
  __syncthreads();
}

/// The panel's first column's squared norm below its diagonal, into *norm.
__device__ void column_norm(const float* s, int rows, int j, double* norm) {
  if (threadIdx.x < 32) {
    const double sigma = warp_sum_of_squares(s + j * rows, j + 1, rows);
    if (threadIdx.x == 0) *norm = sigma;
  }
  __syncthreads();
}

struct Workspace {
  double* norm;
  float* tau;    // n
  float* t;      // kPanel x kPanel per panel
  float* w;      // kPanel x n
  float* saved;  // kPanel x kPanel
};

/// Householder QR (LAPACK's slarfg without its rescaling loop: the norm is an FP64 sum) of the
/// panel's columns, the reflectors applied within the panel only.
__device__ void factor_panel(float* s, int rows, Panel p, Workspace ws) {
  column_norm(s, rows, p.p0, ws.norm);
  for (int j = p.p0; j < p.p0 + p.width; ++j) {
    float* col = s + j * rows;
    const double sigma = *ws.norm, alpha = col[j];
    double beta = alpha, t = 0, scale = 1;
    if (sigma != 0) {  // a NaN sigma takes this branch too and carries into R
      beta = -copysign(sqrt(alpha * alpha + sigma), alpha);
      t = (beta - alpha) / beta, scale = 1 / (alpha - beta);
    }
    for (int i = j + 1 + threadIdx.x; i < rows; i += blockDim.x) col[i] = static_cast<float>(col[i] * scale);
    __syncthreads();  // v complete, and every thread has read *norm
    apply_reflector(s, rows, p.p0 + p.width, j, static_cast<float>(t), ws.norm);
    if (threadIdx.x == 0) col[j] = static_cast<float>(beta), ws.tau[j] = static_cast<float>(t);
    __syncthreads();
  }
}

/// Householder QR of the block in shared memory, panel by panel: R on and above the diagonal, v
/// below, tau, and each panel's T (kept for forming Q).
__device__ void factor_block(float* s, int rows, int n, Workspace ws) {
  for (int p0 = 0; p0 < n; p0 += kPanel) {
    const Panel p{p0, min(kPanel, n - p0)};
    factor_panel(s, rows, p, ws);
    float* t = ws.t + kPanel * kPanel * (p0 / kPanel);
    make_v_explicit(s, rows, p, ws.saved);
    panel_products(s, rows, p, p0, p0 + p.width, ws.w);  // G = V^T V
    form_t(ws.w + kPanel * p0, ws.tau, p, t);
    if (p0 + p.width < n) {
      panel_products(s, rows, p, p0 + p.width, n, ws.w);
      triangular_times(t, true, p0 + p.width, n, ws.w);
      panel_update(s, rows, p, p0 + p.width, n, ws.w);
    }
    restore_r(s, rows, p, ws.saved);
  }
}

/// The thin Q of the factored block in place (LAPACK's sorgqr): panels last to first, each
/// panel's I - V T V^T applied to the columns right of it, then its own columns formed by sorg2r.
__device__ void form_block_q(float* s, int rows, int n, Workspace ws) {
  for (int p0 = (n - 1) / kPanel * kPanel; p0 >= 0; p0 -= kPanel) {
    const Panel p{p0, min(kPanel, n - p0)};
    if (p0 + p.width < n) {
      make_v_explicit(s, rows, p, nullptr);
      panel_products(s, rows, p, p0 + p.width, n, ws.w);
      triangular_times(ws.t + kPanel * kPanel * (p0 / kPanel), false, p0 + p.width, n, ws.w);
      panel_update(s, rows, p, p0 + p.width, n, ws.w);
    }
    for (int j = p0 + p.width - 1; j >= p0; --j) {
      if (j < p0 + p.width - 1) apply_reflector(s, rows, p0 + p.width, j, ws.tau[j], nullptr);
      float* col = s + j * rows;
      for (int i = threadIdx.x; i < rows; i += blockDim.x)
        col[i] = i < j ? 0.0f : i == j ? 1.0f - ws.tau[j] : -ws.tau[j] * col[i];
      __syncthreads();
    }
  }
}

__host__ __device__ inline int panels(index_t n) { return static_cast<int>((n + kPanel - 1) / kPanel); }

/// Shared memory of factor_blocks_kernel: the norm, tau, the panels' T, w, the saved R entries and
/// the block.
inline int factor_shared_bytes(index_t rows, index_t n) {
  return static_cast<int>(sizeof(double) +
                          (n + kPanel * kPanel * panels(n) + kPanel * n + kPanel * kPanel + rows * n) * sizeof(float));
}

__global__ void __launch_bounds__(kWideThreads, 1)
    factor_blocks_kernel(MatrixView<const float> a, index_t blocks, MatrixView<float> q, MatrixView<float> r) {
  extern __shared__ double shared[];
  const int n = static_cast<int>(a.cols());
  Workspace ws;
  ws.norm = shared;
  ws.tau = reinterpret_cast<float*>(shared + 1);
  ws.t = ws.tau + n;
  ws.w = ws.t + kPanel * kPanel * panels(n);
  ws.saved = ws.w + kPanel * n;
  float* s = ws.saved + kPanel * kPanel;
  const Block blk = row_block(a.rows(), blocks);
  const int rows = static_cast<int>(blk.rows);
  for (int c = 0; c < n; ++c)
    for (int i = threadIdx.x; i < rows; i += blockDim.x) s[i + c * rows] = a(blk.start + i, c);
  __syncthreads();
  factor_block(s, rows, n, ws);
  for (int c = 0; c < n; ++c)
    for (int i = threadIdx.x; i < n; i += blockDim.x) r(blockIdx.x * n + i, c) = i <= c ? s[i + c * rows] : 0.0f;
  if (q.empty()) return;
  __syncthreads();
  form_block_q(s, rows, n, ws);
  for (int c = 0; c < n; ++c)
    for (int i = threadIdx.x; i < rows; i += blockDim.x) q(blk.start + i, c) = s[i + c * rows];
}

/// Q_i := Q_i S_i: S_i in shared memory by rows, then tiles of Q_i's rows, each thread one row and
/// kColumnsPerThread columns of the tile's product (the tile read whole before it is written over).
__global__ void __launch_bounds__(kTsqrThreads)
    multiply_blocks_kernel(MatrixView<float> q, index_t blocks, MatrixView<const float> s_stack, int tile_rows) {
  extern __shared__ float4 shared4[];  // float4: the rows of S_i are read 16 bytes at a time
  float* smem = reinterpret_cast<float*>(shared4);
  const int n = static_cast<int>(q.cols()), groups = (n + kColumnsPerThread - 1) / kColumnsPerThread;
  const int padded = groups * kColumnsPerThread;
  float* st = smem;               // S_i by rows, n x padded, zeros past column n
  float* tile = st + n * padded;  // tile_rows x n, by columns
  for (int e = threadIdx.x; e < n * padded; e += kTsqrThreads) {
    const int k = e / padded, c = e % padded;
    st[e] = c < n ? s_stack(blockIdx.x * n + k, c) : 0.0f;
  }
  const Block blk = row_block(q.rows(), blocks);
  for (index_t t0 = 0; t0 < blk.rows; t0 += tile_rows) {
    const int tr = static_cast<int>(min(static_cast<index_t>(tile_rows), blk.rows - t0));
    __syncthreads();
    for (int e = threadIdx.x; e < tr * n; e += kTsqrThreads) tile[e] = q(blk.start + t0 + e % tr, e / tr);
    __syncthreads();
    for (int e = threadIdx.x; e < tile_rows * groups; e += kTsqrThreads) {
      const int i = e % tile_rows, c0 = (e / tile_rows) * kColumnsPerThread;
      if (i >= tr) continue;
      float acc[kColumnsPerThread] = {};
      for (int k = 0; k < n; ++k) {
        const float x = tile[i + k * tr];
        const float4 s0 = *reinterpret_cast<const float4*>(st + k * padded + c0);
        const float4 s1 = *reinterpret_cast<const float4*>(st + k * padded + c0 + 4);
        acc[0] += x * s0.x, acc[1] += x * s0.y, acc[2] += x * s0.z, acc[3] += x * s0.w;
        acc[4] += x * s1.x, acc[5] += x * s1.y, acc[6] += x * s1.z, acc[7] += x * s1.w;
      }
      for (int g = 0; g < kColumnsPerThread && c0 + g < n; ++g) q(blk.start + t0 + i, c0 + g) = acc[g];
    }
  }
}


/// Tile rows of multiply_blocks_kernel: a multiple of 32 (whole warps on one column group), the
/// tile about 32 KiB.
inline int multiply_tile_rows(index_t n) { return static_cast<int>(std::max<index_t>(32, 8192 / n / 32 * 32)); }

inline index_t max_rows(index_t n) {
  if (n < 1 || n > kMaxColumns) return 0;
  return (kMaxSharedBytes - factor_shared_bytes(0, n)) / (n * static_cast<index_t>(sizeof(float)));
}

inline void factor(MatrixView<const float> a, index_t blocks, MatrixView<float> q, MatrixView<float> r, cudaStream_t s) {
  const int bytes = factor_shared_bytes((a.rows() + blocks - 1) / blocks, a.cols());
  allow_dynamic_shared_memory(factor_blocks_kernel, kMaxSharedBytes);
  const int threads = a.cols() <= 32 ? kTsqrThreads : kWideThreads;
  factor_blocks_kernel<<<static_cast<unsigned>(blocks), threads, bytes, s>>>(a, blocks, q, r);
  RANDNLA_CUDA_LAUNCH("tsqr factor blocks");
}

inline void multiply(MatrixView<float> q, index_t blocks, MatrixView<const float> st, cudaStream_t s) {
  const index_t n = q.cols(), padded = (n + kColumnsPerThread - 1) / kColumnsPerThread * kColumnsPerThread;
  const int tile = multiply_tile_rows(n);
  const int bytes = static_cast<int>((n * padded + tile * n) * sizeof(float));
  allow_dynamic_shared_memory(multiply_blocks_kernel, kMaxSharedBytes);
  multiply_blocks_kernel<<<static_cast<unsigned>(blocks), kTsqrThreads, bytes, s>>>(q, blocks, st, tile);
  RANDNLA_CUDA_LAUNCH("tsqr multiply blocks");
}

}  // namespace shared_blocks
}  // namespace cuda
}  // namespace randnla
