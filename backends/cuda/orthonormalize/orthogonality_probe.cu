// ||W^T (W Omega) - Omega||_F^2 with every product summed in FP64: E ||E w||^2 = ||E||_F^2 for a
// Gaussian w, so a few probes estimate ||W^T W - I||_F (Hutchinson; Meyer, Musco, Musco &
// Woodruff, "Hutch++", SOSA 2021, Sec. 1) at one read of W, where the Gram matrix in FP64 would
// cost an m n^2 product. The Tensor Core CholeskyQR checks its passes with it.
#include "orthogonality_probe.cuh"

#include <algorithm>
#include <cstdint>

#include "cuda/tc/cp_async.cuh"
#include "cuda/context/cuda_check.hpp"
#include "cuda/elementwise/for_each.cuh"
#include "cuda/context/kernel_config.cuh"
#include "cuda/tc/mma_f64.cuh"

namespace randnla {
namespace cuda {
namespace {

constexpr int kProbeThreads = 512, kWarps = kProbeThreads / 32;
constexpr int kChunkRows = 16;  // W's rows per chunk: one m16 tile of Z = W Omega
// A staged column's pitch, 80 bytes: 16-byte copies, and 20 g mod 32 puts the eight lane groups
// of a W^T fragment on distinct banks (W's fragments meet two-way conflicts on four lanes).
constexpr int kPitch = 20;
constexpr int kS = static_cast<int>(kMaxOrthogonalityProbes);  // Z's n8 columns
constexpr int kZ = kChunkRows * kS;                              // Z's entries
constexpr int kMaxTilesPerWarp = static_cast<int>(kMaxProbeColumns) / 16 / kWarps;

using tc::mma_f64;

/// W's columns rounded up to whole 16-column tiles (the padding zero in shared memory).
__host__ __device__ int padded_columns(index_t n) { return static_cast<int>((n + 15) / 16 * 16); }

/// Shared memory of probe_kernel<stages> for an n-column W.
int probe_shared_bytes(index_t n, int stages) {
  const int np = padded_columns(n);
  return static_cast<int>((kWarps + 1) * kZ * sizeof(double) + (np * kS + stages * np * kPitch) * sizeof(float));
}

/// Chunk `index` of W (rows from index * kChunkRows, zeros past W's end) queued into `chunk`,
/// column j at j * kPitch, V rows (4 or 16 bytes) a copy: thread t copies rows V (t % (kChunkRows /
/// V)) ... of every (kProbeThreads V / kChunkRows)-th column. Past the last chunk, an empty group
/// (every thread's waits count alike).
template <int V>
__device__ void stage_chunk(MatrixView<const float> w, index_t index, float* chunk) {
  constexpr int kParts = kChunkRows / V, kStep = kProbeThreads / kParts;
  const int part = threadIdx.x % kParts;
  const index_t row = index * kChunkRows + V * part;
  if (index * kChunkRows < w.rows()) {
    const int valid = static_cast<int>(row >= w.rows() ? 0 : min(static_cast<index_t>(V), w.rows() - row));
    for (int j = threadIdx.x / kParts; j < w.cols(); j += kStep)
      cp_async<4 * V>(chunk + j * kPitch + V * part, valid > 0 ? &at(w, row, j) : w.data(), 4 * valid);
  }
  cp_async_commit();
}

/// The chunk's rows of W (those before row m) from shared memory into `to`, from row r0, V rows a
/// store, threads as in stage_chunk.
template <int V>
__device__ void copy_chunk(const float* chunk, MatrixView<float> to, index_t r0) {
  constexpr int kParts = kChunkRows / V, kStep = kProbeThreads / kParts;
  const int part = threadIdx.x % kParts;
  const index_t row = r0 + V * part;
  if (row >= to.rows()) return;
  const bool whole = row + V <= to.rows();
  for (int j = threadIdx.x / kParts; j < to.cols(); j += kStep) {
    const float* from = chunk + j * kPitch + V * part;
    if (V == 4 && whole)
      *reinterpret_cast<float4*>(&at(to, row, j)) = *reinterpret_cast<const float4*>(from);
    else
      for (int v = 0; v < V && row + v < to.rows(); ++v) at(to, row + v, j) = from[v];
  }
}

/// Whether V = 4 rows make 16-byte-aligned copies in x.
bool four_rows_aligned(const float* x, index_t ld) {
  return reinterpret_cast<std::uintptr_t>(x) % 16 == 0 && ld % 4 == 0;
}

/// Per block b: partials[b] (n x kS, column-major) = the sum over its chunks of rows of W^T (W
/// Omega), on the FP64 Tensor Cores (exact products of the FP32 entries, FP64 sums). Persistent
/// blocks take chunks of kChunkRows rows in turn from a ring of `stages` in shared memory, the next
/// stages - 1 on their way (cp.async) while the block works on the current one: Z = W Omega for
/// the chunk (the warps share out its K = n, their sums then added), then W^T Z added into each
/// warp's accumulators (16 columns of W a tile). W is read once from memory, and copied into
/// `copy_to` on the way where that is not empty. With each entry's FP64 FMAs on the CUDA cores,
/// fed from shared memory, the kernel was load-bound (0.19 ms at 65536 x 512 on the H100, against
/// 0.04 ms for reading W once); with one chunk in flight, latency-bound (0.13 ms).
template <int stages>
__global__ void __launch_bounds__(kProbeThreads) probe_kernel(MatrixView<const float> w, MatrixView<const float> omega,
                                                              MatrixView<float> copy_to, bool w_aligned,
                                                              bool copy_aligned, double* partials) {
  extern __shared__ double smem[];
  const index_t m = w.rows(), chunks = (m + kChunkRows - 1) / kChunkRows;
  const int n = static_cast<int>(w.cols()), np = padded_columns(n), s = static_cast<int>(omega.cols());
  const int t = threadIdx.x, warp = t / 32, g = t % 32 / 4, c = t % 4;
  double* zp = smem;                              // zp[warp * kZ + r * kS + q]: a warp's share of Z
  double* zc = zp + kWarps * kZ;                  // zc[r * kS + q]: Z
  float* om = reinterpret_cast<float*>(zc + kZ);  // om[j * kS + q]: Omega, zero-padded
  float* ring = om + np * kS;                     // `stages` chunks of np columns
  for (int e = t; e < np * kS; e += kProbeThreads)
    om[e] = e / kS < n && e % kS < s ? at(omega, e / kS, e % kS) : 0.0f;
  const int pad = (np - n) * kPitch;
  for (int e = t; e < stages * pad; e += kProbeThreads) ring[(e / pad) * np * kPitch + n * kPitch + e % pad] = 0.0f;
  double acc[kMaxTilesPerWarp][4] = {};
  auto stage = [&](index_t index, int to_slot) {
    float* chunk = ring + to_slot * np * kPitch;
    w_aligned ? stage_chunk<4>(w, index, chunk) : stage_chunk<1>(w, index, chunk);
  };
  for (int k = 0; k < stages - 1; ++k) stage(blockIdx.x + k * index_t{gridDim.x}, k);
  int slot = 0;
  for (index_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x, slot = (slot + 1) % stages) {
    const index_t r0 = chunk * kChunkRows;
    const float* wc = ring + slot * np * kPitch;
    // The slot the previous chunk used, free since the barrier that ended its work.
    stage(chunk + (stages - 1) * index_t{gridDim.x}, (slot + stages - 1) % stages);
    cp_async_wait<stages - 1>();
    __syncthreads();  // the chunk (and Omega, the padding) in place for every thread
    if (!copy_to.empty()) copy_aligned ? copy_chunk<4>(wc, copy_to, r0) : copy_chunk<1>(wc, copy_to, r0);
    double z[4] = {};
    for (int k0 = 8 * warp; k0 < np; k0 += 8 * kWarps) {
      const float* col = wc + (k0 + c) * kPitch + g;
      const double a[4] = {col[0], col[8], col[4 * kPitch], col[4 * kPitch + 8]};
      const double b[2] = {om[(k0 + c) * kS + g], om[(k0 + c + 4) * kS + g]};
      mma_f64(z, a, b);
    }
    double* mine = zp + warp * kZ;
    mine[g * kS + 2 * c] = z[0], mine[g * kS + 2 * c + 1] = z[1];
    mine[(g + 8) * kS + 2 * c] = z[2], mine[(g + 8) * kS + 2 * c + 1] = z[3];
    __syncthreads();
    if (t < kZ) {
      double sum = 0.0;
#pragma unroll
      for (int v = 0; v < kWarps; ++v) sum += zp[v * kZ + t];
      zc[t] = sum;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kMaxTilesPerWarp; ++k) {
      const int j0 = 16 * (warp + k * kWarps);
      if (j0 >= np) break;
      const float* col = wc + (j0 + g) * kPitch + c;
#pragma unroll
      for (int i0 = 0; i0 < kChunkRows; i0 += 8) {
        const double a[4] = {col[i0], col[8 * kPitch + i0], col[i0 + 4], col[8 * kPitch + i0 + 4]};
        const double b[2] = {zc[(i0 + c) * kS + g], zc[(i0 + c + 4) * kS + g]};
        mma_f64(acc[k], a, b);
      }
    }
    __syncthreads();  // the chunk and Z read before they are overwritten
  }
  cp_async_wait<0>();  // no copy left in flight into a block that has ended
  double* mine = partials + static_cast<index_t>(blockIdx.x) * n * kS;
#pragma unroll
  for (int k = 0; k < kMaxTilesPerWarp; ++k) {
    const int j = 16 * (warp + k * kWarps) + g;
    if (j >= np) break;
    if (j < n) mine[j + 2 * c * n] = acc[k][0], mine[j + (2 * c + 1) * n] = acc[k][1];
    if (j + 8 < n) mine[j + 8 + 2 * c * n] = acc[k][2], mine[j + 8 + (2 * c + 1) * n] = acc[k][3];
  }
}

/// The probe kernel on `blocks` blocks with the most stages (up to four) whose shared memory fits
/// `most` bytes.
template <int stages>
void launch_probe_kernel(MatrixView<const float> w, MatrixView<const float> omega, MatrixView<float> copy_to,
                         double* work, int blocks, int most, cudaStream_t stream) {
  if constexpr (stages > 2) {
    if (probe_shared_bytes(w.cols(), stages) > most)
      return launch_probe_kernel<stages - 1>(w, omega, copy_to, work, blocks, most, stream);
  }
  allow_dynamic_shared_memory(probe_kernel<stages>, most);
  probe_kernel<stages><<<blocks, kProbeThreads, probe_shared_bytes(w.cols(), stages), stream>>>(
      w, omega, copy_to, four_rows_aligned(w.data(), w.ld()), four_rows_aligned(copy_to.data(), copy_to.ld()), work);
  RANDNLA_CUDA_LAUNCH("orthogonality probe");
}

/// squares[e] = (sum_b partials[b][e] - Omega[e])^2 for the n x s entries: a thread per entry.
__global__ void sum_partials_kernel(const double* partials, int blocks, MatrixView<const float> omega,
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

index_t orthogonality_probe_max_columns() {
  const index_t fixed = probe_shared_bytes(0, 2), per_column = (probe_shared_bytes(16, 2) - fixed) / 16;
  return std::min(kMaxProbeColumns, (shared_memory_per_block() - fixed) / per_column / 16 * 16);
}

index_t orthogonality_probe_workspace(index_t n, index_t /*s*/) { return n * kS * (multiprocessors() + 1); }

void queue_orthogonality_probe(MatrixView<const float> w, MatrixView<const float> omega, MatrixView<float> copy_to,
                               double* work, double* sum_of_squares, cudaStream_t stream) {
  const index_t n = w.cols();
  const int blocks = multiprocessors();
  launch_probe_kernel<4>(w, omega, copy_to, work, blocks, shared_memory_per_block(), stream);
  double* squares = work + static_cast<index_t>(blocks) * n * kS;
  const index_t count = n * omega.cols();
  sum_partials_kernel<<<static_cast<unsigned>((count + 255) / 256), 256, 0, stream>>>(work, blocks, omega, squares);
  RANDNLA_CUDA_LAUNCH("orthogonality probe sums");
  residual_kernel<<<1, kProbeThreads, 0, stream>>>(squares, count, sum_of_squares);
  RANDNLA_CUDA_LAUNCH("orthogonality probe residual");
}

}  // namespace cuda
}  // namespace randnla
