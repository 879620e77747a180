// ||W^T (W Omega) - Omega||_F^2 with every product summed in FP64: E ||E w||^2 = ||E||_F^2 for a
// Gaussian w, so a few probes estimate ||W^T W - I||_F (Hutchinson; Meyer, Musco, Musco &
// Woodruff, "Hutch++", SOSA 2021, Sec. 1) at one read of W, where the Gram matrix in FP64 would
// cost an m n^2 product. The Tensor Core CholeskyQR checks its passes with it.
#include "orthogonality_probe.cuh"

#include <algorithm>

#include "cuda/cuda_check.hpp"
#include "cuda/for_each.cuh"

namespace randnla {
namespace cuda {
namespace {

constexpr int kProbeThreads = 512;
constexpr int kChunkRows = 32;  // rows of W a block holds in shared memory at a time
constexpr int kParts = 8;       // the column ranges of the chunk's W Omega, a warp each
constexpr int kS = static_cast<int>(kMaxOrthogonalityProbes);
constexpr int kMaxColumnsPerThread = static_cast<int>(kMaxProbeColumns) / kProbeThreads;

/// Per block b: partials[b] (n x kS, column-major) = the sum over its chunks of rows of W^T (W
/// Omega), every product in FP64. Persistent blocks take chunks of kChunkRows rows in turn; a
/// chunk sits in shared memory (padded: conflict-free by rows and by columns) while Z = W Omega
/// is formed for its rows (a thread per row and eighth of the columns, all probes at once), then
/// W^T Z is added into registers (a thread per column). Each entry of W read from shared memory
/// feeds all eight probes' FMAs: one read per FMA held the kernel to the shared-memory bandwidth
/// (0.40 ms at 65536 x 512 on the H100). W is read once from memory, and copied into `copy_to` on
/// the way where that is not empty.
__global__ void __launch_bounds__(kProbeThreads) probe_kernel(MatrixView<const float> w, MatrixView<const double> omega,
                                                              MatrixView<float> copy_to, double* partials) {
  extern __shared__ double smem[];
  const index_t m = w.rows(), chunks = (m + kChunkRows - 1) / kChunkRows;
  const int n = static_cast<int>(w.cols()), s = static_cast<int>(omega.cols()), t = threadIdx.x;
  double* om = smem;                                           // om[j * kS + p]
  double* zp = om + n * kS;                                    // zp[(part * kS + p) * kChunkRows + r]
  double* zc = zp + kParts * kS * kChunkRows;                  // zc[r * kS + p]
  float* wc = reinterpret_cast<float*>(zc + kS * kChunkRows);  // wc[j * (kChunkRows + 1) + r]
  for (int e = t; e < n * kS; e += kProbeThreads) om[e] = e % kS < s ? at(omega, e / kS, e % kS) : 0.0;
  const int r = t % kChunkRows, part = t / kChunkRows;
  const int per_part = (n + kParts - 1) / kParts, j_begin = part * per_part, j_end = min(n, j_begin + per_part);
  double acc[kMaxColumnsPerThread][kS] = {};
  for (index_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    const index_t r0 = chunk * kChunkRows;
    const int rows = static_cast<int>(min(static_cast<index_t>(kChunkRows), m - r0));
    __syncthreads();  // Omega in place; the previous chunk's reads done
#pragma unroll 8
    for (int e = t; e < kChunkRows * n; e += kProbeThreads) {
      const int i = e % kChunkRows, j = e / kChunkRows;
      float x = 0.0f;
      if (i < rows) {
        x = at(w, r0 + i, j);
        if (!copy_to.empty()) at(copy_to, r0 + i, j) = x;
      }
      wc[j * (kChunkRows + 1) + i] = x;
    }
    __syncthreads();
    if (part < kParts) {
      double z[kS] = {};
      for (int j = j_begin; j < j_end; ++j) {
        const double x = wc[j * (kChunkRows + 1) + r];
#pragma unroll
        for (int q = 0; q < kS; ++q) z[q] = fma(x, om[j * kS + q], z[q]);
      }
#pragma unroll
      for (int q = 0; q < kS; ++q) zp[(part * kS + q) * kChunkRows + r] = z[q];
    }
    __syncthreads();
    if (t < kS * kChunkRows) {
      const int q = t / kChunkRows;
      double sum = 0.0;
      for (int k = 0; k < kParts; ++k) sum += zp[(k * kS + q) * kChunkRows + r];
      zc[r * kS + q] = sum;
    }
    __syncthreads();
#pragma unroll
    for (int c = 0; c < kMaxColumnsPerThread; ++c) {
      const int j = t + c * kProbeThreads;
      if (j >= n) break;
      for (int i = 0; i < kChunkRows; ++i) {
        const double x = wc[j * (kChunkRows + 1) + i];
#pragma unroll
        for (int q = 0; q < kS; ++q) acc[c][q] = fma(x, zc[i * kS + q], acc[c][q]);
      }
    }
  }
  double* mine = partials + static_cast<index_t>(blockIdx.x) * n * kS;
#pragma unroll
  for (int c = 0; c < kMaxColumnsPerThread; ++c) {
    const int j = t + c * kProbeThreads;
    if (j >= n) break;
    for (int q = 0; q < kS; ++q) mine[j + q * n] = acc[c][q];
  }
}

/// squares[e] = (sum_b partials[b][e] - Omega[e])^2 for the n x s entries: a thread per entry.
__global__ void sum_partials_kernel(const double* partials, int blocks, MatrixView<const double> omega,
                                    double* squares) {
  const index_t n = omega.rows(), e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (e >= n * omega.cols()) return;
  double v = 0.0;
  for (int b = 0; b < blocks; ++b) v += partials[b * n * kS + e];
  const double d = v - at(omega, e % n, e / n);
  squares[e] = d * d;
}

/// *out = the sum of squares[0 .. count) (one block).
__global__ void __launch_bounds__(kProbeThreads) residual_kernel(const double* squares, index_t count, double* out) {
  __shared__ double partial[kProbeThreads / 32];
  double sum = 0.0;
  for (index_t e = threadIdx.x; e < count; e += kProbeThreads) sum += squares[e];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x != 0) return;
  double total = 0.0;
  for (int w = 0; w < kProbeThreads / 32; ++w) total += partial[w];
  *out = total;
}

}  // namespace

index_t orthogonality_probe_workspace(index_t n, index_t /*s*/) { return n * kS * (multiprocessors() + 1); }

void queue_orthogonality_probe(MatrixView<const float> w, MatrixView<const double> omega, MatrixView<float> copy_to,
                               double* work, double* sum_of_squares, cudaStream_t stream) {
  const index_t n = w.cols();
  const int blocks = multiprocessors();
  const int bytes =
      static_cast<int>((n + (kParts + 1) * kChunkRows) * kS * sizeof(double) + n * (kChunkRows + 1) * sizeof(float));
  RANDNLA_CUDA(cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  probe_kernel<<<blocks, kProbeThreads, bytes, stream>>>(w, omega, copy_to, work);
  RANDNLA_CUDA_LAUNCH("orthogonality probe");
  double* squares = work + static_cast<index_t>(blocks) * n * kS;
  const index_t count = n * omega.cols();
  sum_partials_kernel<<<static_cast<unsigned>((count + 255) / 256), 256, 0, stream>>>(work, blocks, omega, squares);
  RANDNLA_CUDA_LAUNCH("orthogonality probe sums");
  residual_kernel<<<1, kProbeThreads, 0, stream>>>(squares, count, sum_of_squares);
  RANDNLA_CUDA_LAUNCH("orthogonality probe residual");
}

}  // namespace cuda
}  // namespace randnla
