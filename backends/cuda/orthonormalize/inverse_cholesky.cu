// R^{-1} of G = R^T R = L L^T in one cooperative kernel, FP64, by 32 x 32 tiles.
//
// cuSOLVER's potrf and cuBLAS's trsm on the identity take 0.39 + 0.24 ms at n = 512 on the H100
// (perf_tests/results/bench_dense_parts.md), launch after launch of small steps; one block alone
// took 0.95 ms at n = 272 (issue-bound on one SM). Here every block of a cooperative grid runs
// the same NT = n / 32 steps, one grid barrier each. Step k: each block factors the diagonal tile
// W_kk itself (L_kk and X_kk = L_kk^{-1}, one warp; redundant, so no barrier waits for it), then
// the blocks share out the step's tile updates, forming L_ik = W_ik X_kk^T where they need it:
//  - the right-looking Cholesky update W_ij -= L_ik L_jk^T (k < j <= i);
//  - forward substitution of L X = I by tile rows, B_ij -= L_ik (X_kk B_kj) (j <= k < i), B the
//    right-hand sides as updated so far (B_kk = I);
//  - the finished row k of X = L^{-1}: X_kj = X_kk B_kj, written transposed as R^{-1}'s column k.
// Tiles are read past the L1 cache (another block wrote them since the last barrier). At n = 512
// on the H100: 0.24 ms against 0.67 for potrf + trsm (bench_dense_parts splitqr 65536 512). Each
// step's diagonal tile is a chain of 32 pivots on one warp, and the grid barrier takes a few
// microseconds: the 16 steps are most of the time.

#include "inverse_cholesky.cuh"

#include <cooperative_groups.h>

#include <algorithm>
#include <cfloat>

#include "cuda/context/cuda_check.hpp"
#include "cuda/elementwise/for_each.cuh"

namespace randnla {
namespace cuda {
namespace {

constexpr int T = 32;               // tile order
constexpr int kLds = T + 1;         // a tile row in shared memory, padded
constexpr int kBlockThreads = 256;  // a 2 x 2 block of each tile product per thread
constexpr int kTileDoubles = T * kLds;

struct Shared {
  double l[kTileDoubles];  // W_kk, factored in place into L_kk (lower)
  double x[kTileDoubles];  // X_kk = L_kk^{-1} (lower, zeros above)
  double a[kTileDoubles], b[kTileDoubles], c[kTileDoubles], p[kTileDoubles], q[kTileDoubles];
  int failed;  // 1 + the failing pivot of the tile, or 0
};

struct Args {
  MatrixView<const double> g;
  MatrixView<double> rinv;
  double* w;    // np x np: G padded with I, the Cholesky updates applied in place (lower tiles)
  double* rhs;  // np x np: the right-hand sides B (strictly lower tiles)
  int* status;
  int n, tiles, np;
};

__device__ __forceinline__ double* tile_at(double* m, int np, int i, int j) {
  return m + i * T + static_cast<index_t>(j) * T * np;
}

__device__ void load_tile(const double* src, int np, double* s) {
  for (int e = threadIdx.x; e < T * T; e += kBlockThreads)
    s[(e % T) * kLds + e / T] = __ldcg(src + e % T + (e / T) * np);
}

/// acc = A B (B_TRANSPOSED: A B^T) for the thread's rows 2 (t / 16) + {0, 1} and columns
/// 2 (t % 16) + {0, 1}; tiles in shared memory.
template <bool B_TRANSPOSED>
__device__ void multiply(const double* a, const double* b, double (&acc)[2][2]) {
  const int r0 = 2 * (threadIdx.x / 16), c0 = 2 * (threadIdx.x % 16);
  acc[0][0] = acc[0][1] = acc[1][0] = acc[1][1] = 0.0;
#pragma unroll 8
  for (int p = 0; p < T; ++p) {
    const double a0 = a[r0 * kLds + p], a1 = a[(r0 + 1) * kLds + p];
    const double b0 = B_TRANSPOSED ? b[c0 * kLds + p] : b[p * kLds + c0];
    const double b1 = B_TRANSPOSED ? b[(c0 + 1) * kLds + p] : b[p * kLds + c0 + 1];
    acc[0][0] = fma(a0, b0, acc[0][0]), acc[0][1] = fma(a0, b1, acc[0][1]);
    acc[1][0] = fma(a1, b0, acc[1][0]), acc[1][1] = fma(a1, b1, acc[1][1]);
  }
}

__device__ void put(const double (&acc)[2][2], double* s) {
  const int r0 = 2 * (threadIdx.x / 16), c0 = 2 * (threadIdx.x % 16);
  for (int u = 0; u < 2; ++u)
    for (int v = 0; v < 2; ++v) s[(r0 + u) * kLds + c0 + v] = acc[u][v];
}

/// dst (global tile) := c - acc.
__device__ void subtract_into(const double (&acc)[2][2], const double* c, double* dst, int np) {
  const int r0 = 2 * (threadIdx.x / 16), c0 = 2 * (threadIdx.x % 16);
  for (int u = 0; u < 2; ++u)
    for (int v = 0; v < 2; ++v) __stcg(dst + r0 + u + (c0 + v) * np, c[(r0 + u) * kLds + c0 + v] - acc[u][v]);
}

/// 1 / sqrt(x) for x > 0: FP32's estimate refined by two Newton steps (relative error 2^-22, then
/// about 2^-43, then below FP64's rounding), where x lies well inside FP32's range; FP64's rsqrt,
/// which costs several times as much on the pivot chain, elsewhere.
__device__ __forceinline__ double reciprocal_square_root(double x) {
  if (!(x > 1e-30 && x < 1e30)) return rsqrt(x);
  double r = rsqrtf(static_cast<float>(x));
  for (int step = 0; step < 2; ++step) r *= fma(-0.5 * x * r, r, 1.5);
  return r;
}

/// Warp 0: L_kk = chol(W_kk) and X_kk = L_kk^{-1} together, right-looking: lane i holds row i of
/// W_kk and column i of the right-hand sides of L X = I (the identity at first) in registers;
/// each column's entries l_jc pass through shared memory to the other lanes' updates of both.
/// The next pivot, lane c + 1's W - l^2, is formed from the lane's own l, so the chain from one
/// pivot to the next is a shuffle, a reciprocal square root and two FMAs (the shared-memory round
/// trip runs beside it). sh.failed := 1 + the first pivot that is not positive and finite, or 0.
__device__ void factor_diagonal(Shared& sh) {
  const int lane = threadIdx.x;
  double row[T], rhs[T];
#pragma unroll
  for (int j = 0; j < T; ++j) row[j] = sh.l[lane * kLds + j], rhs[j] = j == lane ? 1.0 : 0.0;
  int failed = 0;
  double next = row[0];
#pragma unroll
  for (int c = 0; c < T; ++c) {
    const double pivot = __shfl_sync(0xffffffffu, next, c);
    if (failed == 0 && !(pivot > 0.0 && pivot <= DBL_MAX)) failed = c + 1;
    const double r = reciprocal_square_root(pivot), l = row[c] * r;  // lane c: the square root of the pivot
    if (c + 1 < T) next = fma(-l, l, row[c + 1]);
    const double x = r * rhs[c];  // X(c, lane)
    sh.l[lane * kLds + c] = l;
    sh.x[c * kLds + lane] = x;
    __syncwarp();
#pragma unroll
    for (int j = c + 1; j < T; ++j) {
      const double lj = sh.l[j * kLds + c];
      row[j] = fma(-l, lj, row[j]);
      rhs[j] = fma(-lj, x, rhs[j]);
    }
  }
  if (lane == 0) sh.failed = failed;
}

/// One tile update of step k: kind 0, W_ij -= L_ik L_jk^T (k < j <= i); kind 1, B_ij -= L_ik
/// (X_kk B_kj) (j <= k < i; B_kk = I); kind 2, X_kj = X_kk B_kj (j <= k) written as R^{-1}'s tile
/// (j, k) = X_kj^T, within n. L_ik = W_ik X_kk^T where needed.
struct Task {
  int kind, i, j;
};

__device__ Task task_of(int t, int k, int tiles) {
  const int below = tiles - k - 1, updates = below * (below + 1) / 2, substitutions = below * (k + 1);
  if (t < updates) {
    int i = 0;
    while ((i + 1) * (i + 2) / 2 <= t) ++i;
    return {0, k + 1 + i, k + 1 + t - i * (i + 1) / 2};
  }
  if (t < updates + substitutions) return {1, k + 1 + (t - updates) / (k + 1), (t - updates) % (k + 1)};
  return {2, k, t - updates - substitutions};
}

__host__ __device__ int tasks_of(int k, int tiles) {
  const int below = tiles - k - 1;
  return below * (below + 1) / 2 + below * (k + 1) + k + 1;
}

/// The task's tiles into sh.a (W_ik), sh.b (W_jk or B_kj) and sh.c (W_ij or B_ij), as it needs.
__device__ void load_operands(const Args& a, Shared& sh, int k, Task t) {
  if (t.kind == 0) {
    load_tile(tile_at(a.w, a.np, t.i, k), a.np, sh.a);
    if (t.i != t.j) load_tile(tile_at(a.w, a.np, t.j, k), a.np, sh.b);
    load_tile(tile_at(a.w, a.np, t.i, t.j), a.np, sh.c);
  } else {
    if (t.kind == 1) load_tile(tile_at(a.w, a.np, t.i, k), a.np, sh.a);
    if (t.j < k) load_tile(tile_at(a.rhs, a.np, k, t.j), a.np, sh.b);
    if (t.kind == 1) load_tile(tile_at(a.rhs, a.np, t.i, t.j), a.np, sh.c);
  }
}

/// The task, its operands loaded and X_kk formed (after a barrier).
__device__ void compute(const Args& a, Shared& sh, int k, Task t) {
  double acc[2][2];
  if (t.kind == 0) {
    multiply<true>(sh.a, sh.x, acc), put(acc, sh.p);
    if (t.i != t.j) multiply<true>(sh.b, sh.x, acc), put(acc, sh.q);
    __syncthreads();
    multiply<true>(sh.p, t.i != t.j ? sh.q : sh.p, acc);
    subtract_into(acc, sh.c, tile_at(a.w, a.np, t.i, t.j), a.np);
  } else if (t.kind == 1) {
    multiply<true>(sh.a, sh.x, acc), put(acc, sh.p);
    if (t.j < k) multiply<false>(sh.x, sh.b, acc), put(acc, sh.q);
    __syncthreads();
    multiply<false>(sh.p, t.j < k ? sh.q : sh.x, acc);
    subtract_into(acc, sh.c, tile_at(a.rhs, a.np, t.i, t.j), a.np);
  } else {
    const int r0 = 2 * (threadIdx.x / 16), c0 = 2 * (threadIdx.x % 16);
    if (t.j < k) {
      multiply<false>(sh.x, sh.b, acc);
    } else {
      for (int u = 0; u < 2; ++u)
        for (int v = 0; v < 2; ++v) acc[u][v] = sh.x[(r0 + u) * kLds + c0 + v];
    }
    for (int u = 0; u < 2; ++u)
      for (int v = 0; v < 2; ++v) {
        const int row = t.j * T + c0 + v, col = k * T + r0 + u;
        if (row < a.n && col < a.n) at(a.rinv, row, col) = acc[u][v];
      }
  }
}

/// W := G (lower triangle, mirrored) padded with I; B's strictly lower tiles and R^{-1}'s strict
/// lower triangle := 0.
__device__ void initialise(const Args& a) {
  const index_t stride = static_cast<index_t>(gridDim.x) * kBlockThreads, np2 = static_cast<index_t>(a.np) * a.np;
  for (index_t e = blockIdx.x * kBlockThreads + threadIdx.x; e < np2; e += stride) {
    const int r = static_cast<int>(e % a.np), c = static_cast<int>(e / a.np);
    a.w[e] = r < a.n && c < a.n ? at(a.g, max(r, c), min(r, c)) : r == c ? 1.0 : 0.0;
    if (r / T > c / T) a.rhs[e] = 0.0;
    if (r > c && r < a.n) at(a.rinv, r, c) = 0.0;
  }
}

__global__ void __launch_bounds__(kBlockThreads) inverse_cholesky_kernel(Args a) {
  extern __shared__ __align__(16) unsigned char smem[];
  Shared& sh = *reinterpret_cast<Shared*>(smem);
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  initialise(a);
  grid.sync();
  int failed = 0;
  for (int k = 0; k < a.tiles; ++k) {
    const int tasks = tasks_of(k, a.tiles);
    // The first task's tiles travel while warp 0 factors the diagonal tile.
    load_tile(tile_at(a.w, a.np, k, k), a.np, sh.l);
    if (static_cast<int>(blockIdx.x) < tasks) load_operands(a, sh, k, task_of(blockIdx.x, k, a.tiles));
    __syncthreads();
    if (threadIdx.x < 32) factor_diagonal(sh);
    __syncthreads();
    if (sh.failed != 0) {
      failed = k * T + sh.failed;
      break;  // every block: they factored the same tile
    }
    for (int t = blockIdx.x; t < tasks; t += gridDim.x) {
      if (t != static_cast<int>(blockIdx.x)) {
        __syncthreads();  // the previous task's reads of the tiles are done
        load_operands(a, sh, k, task_of(t, k, a.tiles));
        __syncthreads();
      }
      compute(a, sh, k, task_of(t, k, a.tiles));
    }
    grid.sync();
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *a.status = failed;
}

int most_tasks(int tiles) {
  int most = 1;
  for (int k = 0; k < tiles; ++k) most = std::max(most, tasks_of(k, tiles));
  return most;
}

}  // namespace

index_t inverse_cholesky_workspace(index_t n) {
  const index_t np = (n + T - 1) / T * T;
  return 2 * np * np;
}

void queue_inverse_cholesky_factor(MatrixView<const double> g, MatrixView<double> rinv, double* work, int* status,
                                   cudaStream_t stream) {
  const int n = static_cast<int>(g.rows()), tiles = (n + T - 1) / T, np = tiles * T;
  Args args{g, rinv, work, work + static_cast<index_t>(np) * np, status, n, tiles, np};
  const int bytes = static_cast<int>(sizeof(Shared));
  RANDNLA_CUDA(cudaFuncSetAttribute(inverse_cholesky_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  int per_sm = 0;
  RANDNLA_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, inverse_cholesky_kernel, kBlockThreads, bytes));
  const int blocks = std::max(1, std::min(multiprocessors() * std::max(per_sm, 1), most_tasks(tiles)));
  void* params[] = {&args};
  RANDNLA_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(inverse_cholesky_kernel), dim3(blocks),
                                           dim3(kBlockThreads), params, bytes, stream));
}

}  // namespace cuda
}  // namespace randnla
