// CholeskyQR of a tall-skinny FP32 Y in place, fused (cholesky_qr_ops.hpp, fused_cholesky_qr):
// per pass, G = Y^T Y summed in FP64 by row blocks (each block's partial sums added in a fixed
// order: the same bits on every run), then one block equilibrates and factors G, then
// Y := Y R^{-1} row by row by forward substitution in FP64 arithmetic. No FP64 copy of Y; a status
// word on the device tells each later kernel whether to run, and the host reads it once, at the end.
#include "fused_cholesky_qr.cuh"

#include <algorithm>

#include "cuda/cuda_check.hpp"
#include "cuda/kernel_config.cuh"
#include "orthonormalize/cholesky_qr_ops.hpp"

namespace randnla {
namespace cuda {
namespace {

// kTileElements: the FP32 entries of Y a block stages per round, 16 loads in flight per thread
// (a round of fewer made the Gram sums latency-bound).
constexpr int kThreads = 256, kTileElements = 4096, kMaxColumns = kFusedCholeskyQrMaxColumns;
constexpr int kMaxPairs = (kMaxColumns / 4) * (kMaxColumns / 4 + 1) / 2;  // 4 x 4 blocks of G's upper triangle
constexpr int kEntries = 16 * kMaxPairs;                                   // their entries

/// The device's verdict: a breakdown, the Cholesky passes run, and the last pass that runs (one
/// that found Y's columns orthogonal, which only scales them, ends the sequence).
struct Status {
  int breakdown, passes, last_pass;
};

/// The p-th 4 x 4 block (bi, bj), bi <= bj, of the upper triangle of an nb x nb grid of blocks.
__device__ int2 block_pair(int p, int nb) {
  int bi = 0;
  while (p >= nb - bi) p -= nb - bi, ++bi;
  return make_int2(bi, bi + p);
}

__device__ bool pass_runs(const Status* st, int pass) { return !st->breakdown && pass <= st->last_pass; }

/// Rows of Y a block stages per round: kTileElements over the columns rounded up to 4.
__host__ __device__ int tile_rows(int n) { return kTileElements / (4 * ((n + 3) / 4)); }

/// Each block's sums over its rows of G's 4 x 4 blocks (bi <= bj), packed (16 per pair, pair-major).
/// A pair's threads split the rows of each tile; their sums are added group by group (fixed order).
__global__ void __launch_bounds__(kThreads) gram_partials(const float* y, index_t ld, index_t m, int n,
                                                          index_t rows_per_block, double* partials,
                                                          const Status* st, int pass) {
  if (!pass_runs(st, pass)) return;
  __shared__ float tile[kTileElements + kMaxColumns];  // column pitch rows + 1: no bank conflicts
  __shared__ double sums[kEntries];
  const int nb = (n + 3) / 4, pairs = nb * (nb + 1) / 2, groups = max(1, kThreads / pairs), rows = tile_rows(n);
  const int pair = threadIdx.x % pairs, group = threadIdx.x / pairs;
  const bool active = group < groups;
  const int2 bij = block_pair(pair, nb);
  double acc[4][4] = {};
  const index_t first = blockIdx.x * rows_per_block, end = min(m, first + rows_per_block);
  for (index_t r0 = first; r0 < end; r0 += rows) {
    float v[kTileElements / kThreads];  // all of a thread's loads issued before any is stored
#pragma unroll
    for (int u = 0; u < kTileElements / kThreads; ++u) {
      const int e = threadIdx.x + u * kThreads, r = e % rows, c = e / rows;
      v[u] = e < rows * 4 * nb && c < n && r0 + r < end ? y[r0 + r + c * ld] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int u = 0; u < kTileElements / kThreads; ++u) {
      const int e = threadIdx.x + u * kThreads;
      tile[e + e / rows] = v[u];
    }
    __syncthreads();
    for (int r = group; active && r < rows; r += groups) {
      double a[4], b[4];
#pragma unroll
      for (int u = 0; u < 4; ++u)
        a[u] = tile[(4 * bij.x + u) * (rows + 1) + r], b[u] = tile[(4 * bij.y + u) * (rows + 1) + r];
#pragma unroll
      for (int u = 0; u < 4; ++u)
#pragma unroll
        for (int v = 0; v < 4; ++v) acc[u][v] = fma(a[u], b[v], acc[u][v]);
    }
  }
  for (int g = 0; g < groups; ++g) {
    __syncthreads();
    if (active && group == g)
#pragma unroll
      for (int e = 0; e < 16; ++e) sums[16 * pair + e] = g == 0 ? acc[e / 4][e % 4] : sums[16 * pair + e] + acc[e / 4][e % 4];
  }
  __syncthreads();
  for (int e = threadIdx.x; e < 16 * pairs; e += kThreads) partials[blockIdx.x * 16 * pairs + e] = sums[e];
}

/// sums := the blocks' partial sums, added in a fixed order: kChunks threads per entry each add
/// every kChunks-th block's (their loads independent), then one adds the chunks' sums in chunk
/// order. One thread per entry adding all blocks in turn was latency-bound (a chain of loads).
constexpr int kChunks = 8, kEntriesPerSumBlock = kThreads / kChunks;
__global__ void __launch_bounds__(kThreads) sum_partials(const double* partials, index_t blocks, int entries,
                                                         double* sums, const Status* st, int pass) {
  if (!pass_runs(st, pass)) return;
  __shared__ double chunk_sums[kChunks][kEntriesPerSumBlock];
  const int local = threadIdx.x % kEntriesPerSumBlock, chunk = threadIdx.x / kEntriesPerSumBlock;
  const int e = blockIdx.x * kEntriesPerSumBlock + local;
  double s = 0.0;
  for (index_t b = chunk; e < entries && b < blocks; b += kChunks) s += partials[b * entries + e];
  chunk_sums[chunk][local] = s;
  __syncthreads();
  if (chunk != 0 || e >= entries) return;
  double total = 0.0;
  for (int c = 0; c < kChunks; ++c) total += chunk_sums[c][local];
  sums[e] = total;
}

/// The pass's factor from G's packed sums: G equilibrated (D G D, D = diag(G)^{-1/2}), then, if
/// `stop_when_orthogonal` and ||D G D - I||_F <= 2^-24, R' = I and this is the last pass; else R'
/// the Cholesky factor of D G D. Written: `factor` (n x n, column-major) = R' above its diagonal
/// and 1 / R'_jj on it, and `d` = D's diagonal; R = R' D^{-1}. A pivot not positive and finite,
/// or (`second`) a D G D farther than 1/2 from I (Y not yet well conditioned: the pass would not
/// be accurate), is a breakdown. Dynamic shared memory: n (n + 1) doubles.
__global__ void __launch_bounds__(kThreads) factor(const double* sums, int n, bool stop_when_orthogonal, bool second,
                                                   double* factor, double* scale, Status* st, int pass) {
  if (!pass_runs(st, pass)) return;
  extern __shared__ double smem[];
  const int p = n + 1;  // pitch
  double* g = smem;
  __shared__ double d[kMaxColumns], warp_sums[kThreads / 32];
  __shared__ int broken;
  const int nb = (n + 3) / 4, pairs = nb * (nb + 1) / 2;
  for (int e = threadIdx.x; e < 16 * pairs; e += blockDim.x) {
    const int2 bij = block_pair(e / 16, nb);
    const int i = 4 * bij.x + (e % 16) / 4, j = 4 * bij.y + e % 4;
    if (i < n && j < n) g[i + j * p] = g[j + i * p] = sums[e];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) d[i] = equilibration_factor(g[i + i * p]);
  if (threadIdx.x == 0) broken = 0;
  __syncthreads();
  double local = 0.0;
  for (int e = threadIdx.x; e < n * n; e += blockDim.x) {
    const int i = e % n, j = e / n;
    g[i + j * p] *= d[i] * d[j];
    const double off = g[i + j * p] - (i == j ? 1.0 : 0.0);
    local += off * off;
  }
  for (int offset = 16; offset > 0; offset /= 2) local += __shfl_down_sync(~0u, local, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = local;
  __syncthreads();
  double squares = 0.0;
  for (int w = 0; w < kThreads / 32; ++w) squares += warp_sums[w];
  const double dist = sqrt(squares);
  for (int i = threadIdx.x; i < n; i += blockDim.x) scale[i] = d[i];
  if (stop_when_orthogonal && dist <= 0x1p-24) {
    for (int e = threadIdx.x; e < n * n; e += blockDim.x) factor[e] = e % n == e / n ? 1.0 : 0.0;
    if (threadIdx.x == 0) st->last_pass = pass;
    return;
  }
  if (second && !(dist <= 0.5)) {
    if (threadIdx.x == 0) st->breakdown = 1;
    return;
  }
  for (int k = 0; k < n; ++k) {  // right-looking Cholesky, upper triangle: R'^T R' = D G D
    if (threadIdx.x == 0) {
      const double pivot = g[k + k * p];
      if (pivot > 0.0 && pivot <= 1.7976931348623157e308) g[k + k * p] = sqrt(pivot); else broken = 1;
    }
    __syncthreads();
    if (broken) break;
    for (int j = k + 1 + threadIdx.x; j < n; j += blockDim.x) g[k + j * p] /= g[k + k * p];
    __syncthreads();
    const int rest = n - k - 1;
    for (int e = threadIdx.x; e < rest * rest; e += blockDim.x) {
      const int i = k + 1 + e % rest, j = k + 1 + e / rest;
      if (i <= j) g[i + j * p] -= g[k + i * p] * g[k + j * p];
    }
    __syncthreads();
  }
  if (broken) {
    if (threadIdx.x == 0) st->breakdown = 1;
    return;
  }
  for (int e = threadIdx.x; e < n * n; e += blockDim.x) {
    const int i = e % n, j = e / n;
    factor[e] = i == j ? 1.0 / g[i + i * p] : i < j ? g[i + j * p] : 0.0;
  }
  if (threadIdx.x == 0) st->passes += 1;
}

/// Y := Y D R'^{-1} (factor and scale as `factor` wrote them), a thread per row, its n entries in
/// registers: forward substitution q R' = y D in FP64 arithmetic, rounded to FP32.
template <int N>
__global__ void __launch_bounds__(kThreads) apply_inverse(float* y, index_t ld, index_t m, int n, const double* factor,
                                                          const double* scale, const Status* st, int pass) {
  if (!pass_runs(st, pass)) return;
  __shared__ double r[N * N], d[N];
  for (int e = threadIdx.x; e < n * n; e += blockDim.x) r[(e % n) + (e / n) * N] = factor[e];
  for (int i = threadIdx.x; i < n; i += blockDim.x) d[i] = scale[i];
  __syncthreads();
  const index_t row = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (row >= m) return;
  double q[N];
#pragma unroll
  for (int c = 0; c < N; ++c) q[c] = c < n ? static_cast<double>(y[row + c * ld]) * d[c] : 0.0;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    if (j >= n) break;
    double s = q[j];
#pragma unroll
    for (int i = 0; i < j; ++i) s = fma(-q[i], r[i + j * N], s);
    q[j] = s * r[j + j * N];
    y[row + j * ld] = static_cast<float>(q[j]);
  }
}

__global__ void reset(Status* st) { *st = Status{0, 0, 1 << 30}; }

template <int N>
void launch_apply(MatrixView<float> y, const double* factor, const double* scale, const Status* st, int pass,
                  cudaStream_t s) {
  const unsigned blocks = static_cast<unsigned>((y.rows() + kThreads - 1) / kThreads);
  apply_inverse<N><<<blocks, kThreads, 0, s>>>(y.data(), y.ld(), y.rows(), static_cast<int>(y.cols()), factor, scale,
                                                st, pass);
  RANDNLA_CUDA_LAUNCH("fused CholeskyQR: Y R^-1");
}

/// The workspace's parts, in doubles: the status, the factor, its scaling, the sums, the blocks'
/// partial sums.
struct Layout {
  index_t rows_per_block, blocks, status = 0, factor = 2, scale, sums, partials, total;
  Layout(index_t m, index_t n, int sms) {
    // About two blocks per multiprocessor, in whole tiles.
    const index_t target = std::max<index_t>(1, 2 * sms);
    const index_t rows = tile_rows(static_cast<int>(n));
    rows_per_block = std::max<index_t>(rows, ((m + target - 1) / target + rows - 1) / rows * rows);
    blocks = std::max<index_t>(1, (m + rows_per_block - 1) / rows_per_block);
    scale = factor + n * n;
    sums = scale + n;
    partials = sums + kEntries;
    total = partials + blocks * kEntries;
  }
};

int multiprocessors() {
  int device = 0, sms = 0;
  RANDNLA_CUDA(cudaGetDevice(&device));
  RANDNLA_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

}  // namespace

index_t fused_cholesky_qr_workspace(index_t m, index_t n) { return Layout(m, n, multiprocessors()).total; }

int fused_cholesky_qr(MatrixView<float> y, int passes, MatrixView<double> work, cudaStream_t s) {
  const index_t m = y.rows();
  const int n = static_cast<int>(y.cols());
  const Layout layout(m, n, multiprocessors());
  auto* st = reinterpret_cast<Status*>(work.data() + layout.status);
  double *r = work.data() + layout.factor, *d = work.data() + layout.scale, *sums = work.data() + layout.sums,
         *partials = work.data() + layout.partials;
  const int nb = (n + 3) / 4, entries = 16 * nb * (nb + 1) / 2;
  const int factor_smem = static_cast<int>(n * (n + 1) * sizeof(double));
  allow_dynamic_shared_memory(factor, static_cast<int>(kMaxColumns * (kMaxColumns + 1) * sizeof(double)));
  reset<<<1, 1, 0, s>>>(st);
  const bool adaptive = passes == 0;
  for (int pass = 0; pass < (adaptive ? 2 : passes); ++pass) {
    gram_partials<<<static_cast<unsigned>(layout.blocks), kThreads, 0, s>>>(y.data(), y.ld(), m, n,
                                                                             layout.rows_per_block, partials, st, pass);
    RANDNLA_CUDA_LAUNCH("fused CholeskyQR: Gram partial sums");
    sum_partials<<<(entries + kEntriesPerSumBlock - 1) / kEntriesPerSumBlock, kThreads, 0, s>>>(
        partials, layout.blocks, entries, sums, st, pass);
    RANDNLA_CUDA_LAUNCH("fused CholeskyQR: Gram sums");
    factor<<<1, kThreads, factor_smem, s>>>(sums, n, adaptive, pass > 0, r, d, st, pass);
    RANDNLA_CUDA_LAUNCH("fused CholeskyQR: factor");
    if (n <= 16)
      launch_apply<16>(y, r, d, st, pass, s);
    else if (n <= 32)
      launch_apply<32>(y, r, d, st, pass, s);
    else
      launch_apply<64>(y, r, d, st, pass, s);
  }
  Status host{};
  RANDNLA_CUDA(cudaMemcpyAsync(&host, st, sizeof host, cudaMemcpyDeviceToHost, s));
  RANDNLA_CUDA(cudaStreamSynchronize(s));
  return host.breakdown ? -1 : host.passes;
}

}  // namespace cuda
}  // namespace randnla
