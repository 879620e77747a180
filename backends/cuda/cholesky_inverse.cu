// R^{-1} for the Cholesky factor R of a small SPD matrix, in one thread block.
//
// CholeskyQR needs X = Y R^{-1} with R^T R = G, G of order l <= a few hundred. cuSOLVER's potrf
// (0.21 ms at l = 272 on the H100) and the triangular inverse (0.13 ms) are a sequence of small
// kernels, latency rather than work (perf_tests/results/2026-11-21_h100_28efbf1). Here one block
// eliminates the stacked 2n x n matrix W = [G; I] by column operations (right-looking, blocked by
// panels of kPanel columns): col_j -= W(j, k) col_k after col_k /= sqrt(W(k, k)). That is W U with
// U upper triangular such that G U = L is lower triangular with sqrt(pivot) on its diagonal; G
// symmetric makes L the Cholesky factor (G = L L^T) and U = L^{-T} = R^{-1}: the bottom block.
// Only G's lower triangle is read (the elimination keeps the trailing block symmetric).
// Each column of U is a forward substitution with L, as trsm would do it (backward stable).
#include "cholesky_inverse.cuh"

#include "cuda_check.hpp"

namespace randnla {
namespace cuda {
namespace {

constexpr int kPanel = 16, kThreads = 512, kTile = 4;
constexpr index_t kMaxOrder = 512;  // the panel, (n + 16) x 16 FP64, in 67 KiB of shared memory

/// W(r, c): rows 0..n-1 are G (top), rows n..2n-1 are R^{-1} (bottom).
struct Stacked {
  MatrixView<double> top, bottom;
  __device__ double& operator()(index_t r, index_t c) const {
    const index_t n = top.rows();
    return r < n ? top.data()[r + c * top.ld()] : bottom.data()[(r - n) + c * bottom.ld()];
  }
};

/// The panel of columns jb..jb+nb-1 in shared memory, column-major with `rows` rows: first the top
/// rows jb..n-1 (the lower triangle and the diagonal: the upper one is never read), then the
/// bottom rows 0..jb+nb-1 (the rest of R^{-1}'s columns is still zero).
struct Panel {
  double* p;
  int n, jb, nb, rows;
  __device__ int top_rows() const { return n - jb; }
  __device__ index_t w_row(int r) const { return r < top_rows() ? jb + r : n + (r - top_rows()); }
  __device__ double& operator()(int r, int c) const { return p[r + c * rows]; }
  /// Whether panel row r of panel column c is below or on the diagonal (top) or any bottom row.
  __device__ bool live(int r, int c) const { return r >= top_rows() || r >= c; }
};

/// Factors the panel in place: column k scaled by 1 / sqrt(pivot), then subtracted from the
/// panel's later columns. Returns the 1-based column (of W) of a non-positive pivot, or 0.
__device__ int factor_panel(const Panel& P, double* pivot_root) {
  for (int k = 0; k < P.nb; ++k) {
    if (threadIdx.x == 0) {
      const double pivot = P(k, k);
      *pivot_root = pivot > 0.0 && pivot <= 1.7976931348623157e308 ? sqrt(pivot) : 0.0;
    }
    __syncthreads();
    const double s = *pivot_root;
    if (s == 0.0) return P.jb + k + 1;
    for (int r = threadIdx.x; r < P.rows; r += blockDim.x)
      if (P.live(r, k)) P(r, k) /= s;
    __syncthreads();
    const int later = P.nb - 1 - k;
    for (int e = threadIdx.x; e < later * P.rows; e += blockDim.x) {
      const int r = e % P.rows, j = k + 1 + e / P.rows;
      if (P.live(r, j)) P(r, j) -= P(j, k) * P(r, k);
    }
    __syncthreads();
  }
  return 0;
}

/// W(:, jb+nb:) -= panel * panel(jb+nb:, :)^T on the live entries: the top block's lower triangle
/// and the bottom block's rows 0..jb+nb-1, in kTile x kTile register tiles.
__device__ void update_trailing(const Stacked& W, const Panel& P) {
  const int n = P.n, c0 = P.jb + P.nb, cols = n - c0;
  if (cols <= 0) return;
  const int col_tiles = (cols + kTile - 1) / kTile;
  const int top_tiles = col_tiles, bottom_tiles = (c0 + kTile - 1) / kTile;  // row tiles
  const int row_tiles = top_tiles + bottom_tiles, tiles = row_tiles * col_tiles;
  for (int t = threadIdx.x; t < tiles; t += blockDim.x) {
    const int rt = t % row_tiles, ct = t / row_tiles;  // neighbouring threads: neighbouring rows
    const int j0 = c0 + ct * kTile;
    const bool top = rt < top_tiles;
    const int i0 = top ? c0 + rt * kTile : (rt - top_tiles) * kTile;  // row in the top or bottom block
    if (top && i0 + kTile - 1 < j0) continue;                        // above the diagonal
    const int i_end = top ? n : c0;
    // Panel rows of the tile's rows (top rows i -> i - jb, bottom rows i -> top_rows + i).
    const int pr0 = top ? i0 - P.jb : P.top_rows() + i0;
    double acc[kTile][kTile];
#pragma unroll
    for (int a = 0; a < kTile; ++a)
#pragma unroll
      for (int b = 0; b < kTile; ++b)
        acc[a][b] = (i0 + a < i_end && j0 + b < n) ? W(top ? i0 + a : n + i0 + a, j0 + b) : 0.0;
    for (int k = 0; k < P.nb; ++k) {
      double x[kTile], y[kTile];
#pragma unroll
      for (int a = 0; a < kTile; ++a) x[a] = i0 + a < i_end ? P(pr0 + a, k) : 0.0;
#pragma unroll
      for (int b = 0; b < kTile; ++b) y[b] = j0 + b < n ? P(j0 + b - P.jb, k) : 0.0;
#pragma unroll
      for (int a = 0; a < kTile; ++a)
#pragma unroll
        for (int b = 0; b < kTile; ++b) acc[a][b] = fma(-x[a], y[b], acc[a][b]);
    }
#pragma unroll
    for (int a = 0; a < kTile; ++a)
#pragma unroll
      for (int b = 0; b < kTile; ++b)
        if (i0 + a < i_end && j0 + b < n) W(top ? i0 + a : n + i0 + a, j0 + b) = acc[a][b];
  }
}

__global__ void __launch_bounds__(kThreads) inverse_cholesky_kernel(MatrixView<double> g, MatrixView<double> rinv,
                                                                      int* info) {
  extern __shared__ double panel_storage[];
  __shared__ double pivot_root;
  const Stacked W{g, rinv};
  const int n = static_cast<int>(g.rows());
  for (int e = threadIdx.x; e < n * n; e += blockDim.x) W(n + e % n, e / n) = e % n == e / n ? 1.0 : 0.0;
  __syncthreads();
  for (int jb = 0; jb < n; jb += kPanel) {
    const int nb = min(kPanel, n - jb);
    const Panel P{panel_storage, n, jb, nb, n + nb};
    for (int e = threadIdx.x; e < P.rows * nb; e += blockDim.x) P(e % P.rows, e / P.rows) = W(P.w_row(e % P.rows), jb + e / P.rows);
    __syncthreads();
    const int bad = factor_panel(P, &pivot_root);
    if (bad != 0) {
      if (threadIdx.x == 0) *info = bad;
      return;
    }
    for (int e = threadIdx.x; e < P.rows * nb; e += blockDim.x)
      if (P.live(e % P.rows, e / P.rows)) W(P.w_row(e % P.rows), jb + e / P.rows) = P(e % P.rows, e / P.rows);
    update_trailing(W, P);
    __syncthreads();
  }
  // R^{-1} is upper triangular: its strict lower part is exactly zero already (never written).
  if (threadIdx.x == 0) *info = 0;
}

}  // namespace

index_t inverse_cholesky_max_order() { return kMaxOrder; }

void launch_inverse_cholesky(MatrixView<double> g, MatrixView<double> rinv, int* info, cudaStream_t s) {
  const index_t n = g.rows();
  require(n <= kMaxOrder, "G.rows", n, "must be <= " + std::to_string(kMaxOrder) + " for the one-block kernel");
  static const int once = [] {
    const std::size_t most = static_cast<std::size_t>(kMaxOrder + kPanel) * kPanel * sizeof(double);
    RANDNLA_CUDA(cudaFuncSetAttribute(inverse_cholesky_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(most)));
    return 0;
  }();
  (void)once;
  const std::size_t smem = static_cast<std::size_t>(n + kPanel) * kPanel * sizeof(double);
  inverse_cholesky_kernel<<<1, kThreads, smem, s>>>(g, rinv, info);
  RANDNLA_CUDA_LAUNCH("inverse_cholesky");
}

}  // namespace cuda
}  // namespace randnla
