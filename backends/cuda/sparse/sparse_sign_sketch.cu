// Y = A Omega for a CSR A and the sparse sign test matrix Omega (SparseOps::sparse_sign_sketch): a
// block takes R consecutive rows of A and sums their rows of Y in shared memory, thread (r, t)
// owning block t of Omega's columns in row r (so no two threads add to one entry, and each entry
// is summed in the order of its row's entries, as on the host); the block then writes its R x l
// tile to the column-major Y, R consecutive rows of a column at a time.
#include "sparse_sign_sketch.cuh"

#include <algorithm>
#include <string>

#include "cuda/context/cuda_check.hpp"

namespace randnla {
namespace cuda {
namespace {

constexpr int kTileRows = 32;

/// The tile's pitch: l rounded up to odd, so that the write-out's R rows of one column fall in R
/// different banks.
__host__ __device__ int tile_pitch(int l) { return l | 1; }

__global__ void sparse_sign_sketch_kernel(const std::int32_t* row_ptr, const std::int32_t* col_idx, const float* values,
                                          index_t m, SparseSignSketch omega, int tile_rows, float* y, index_t ld) {
  extern __shared__ float tile[];
  const int pitch = tile_pitch(omega.cols), l = omega.cols;
  const index_t row0 = static_cast<index_t>(blockIdx.x) * tile_rows;
  for (int e = threadIdx.x; e < tile_rows * pitch; e += blockDim.x) tile[e] = 0.0f;
  __syncthreads();
  const int r = threadIdx.x / omega.nonzeros, t = threadIdx.x % omega.nonzeros;
  if (r < tile_rows && row0 + r < m) {
    float* row = tile + r * pitch;
    for (std::int32_t p = row_ptr[row0 + r]; p < row_ptr[row0 + r + 1]; ++p) {
      const SparseSignSketch::Entry e = omega.entry(col_idx[p], t);
      row[e.column] += e.negative ? -values[p] : values[p];
    }
  }
  __syncthreads();
  const index_t rows = m - row0 < tile_rows ? m - row0 : tile_rows;
  for (int e = threadIdx.x; e < tile_rows * l; e += blockDim.x) {
    const int i = e % tile_rows, c = e / tile_rows;
    if (i < rows) y[row0 + i + c * ld] = tile[i * pitch + c] * omega.value;
  }
}

}  // namespace

void queue_sparse_sign_sketch(const CsrView& a, const SparseSignSketch& omega, MatrixView<float> y, cudaStream_t s) {
  if (a.rows == 0) return;
  int device = 0, shared_max = 0;
  RANDNLA_CUDA(cudaGetDevice(&device));
  RANDNLA_CUDA(cudaDeviceGetAttribute(&shared_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const std::int64_t row_bytes = static_cast<std::int64_t>(sizeof(float)) * tile_pitch(omega.cols);
  if (row_bytes > shared_max)
    throw UnsupportedConfiguration("sparse sign sketch: l = " + std::to_string(omega.cols) +
                                   " columns of Y do not fit the device's " + std::to_string(shared_max) +
                                   " bytes of shared memory per block (use the Gaussian sketch)");
  const int tile_rows = static_cast<int>(std::min<std::int64_t>(kTileRows, shared_max / row_bytes));
  const int bytes = tile_rows * static_cast<int>(row_bytes);
  RANDNLA_CUDA(cudaFuncSetAttribute(sparse_sign_sketch_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  const index_t blocks = (a.rows + tile_rows - 1) / tile_rows;
  sparse_sign_sketch_kernel<<<static_cast<unsigned>(blocks), tile_rows * omega.nonzeros, bytes, s>>>(
      a.row_ptr, a.col_idx, a.values, a.rows, omega, tile_rows, y.data(), y.ld());
  RANDNLA_CUDA_LAUNCH("sparse sign sketch");
}

}  // namespace cuda
}  // namespace randnla
