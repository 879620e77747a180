// Divide and conquer on the device for the tridiagonal matrix of launch_tridiagonalize, and the
// whole small symmetric eigensolver (symmetric_eig_dc). The levels that merge within 32 rows run in
// one launch (a block per 32 rows); each level above is four launches over all its merges at once
// (deflation, one block per root, per weight, per column: tridiagonal_dc.cuh) and one DGEMM with
// the level's block-diagonal factor.
#include <algorithm>
#include <cfloat>
#include <utility>

#include "cuda/context/cuda_check.hpp"
#include "cuda/elementwise/elementwise.cuh"
#include "cuda/context/kernel_config.cuh"
#include "symmetric_eig.cuh"
#include "tridiagonal_dc.cuh"

namespace randnla {
namespace cuda {
namespace {

constexpr int kMergeThreads = 256;  // deflation: one block per merge
constexpr int kItemThreads = 32;    // roots, weights and columns: one block each
constexpr int kGroupRows = 32;      // the levels that merge within 32 rows: one block per 32 rows
constexpr int kGroupWarpDoubles = (dc::deflate_smem_bytes(kGroupRows) + 7) / 8;  // the largest step's

/// The 1 x 1 leaves: d_i less |e| on both sides, eigenvector e_i (z zeroed by the caller).
__global__ void leaves_kernel(const double* d, const double* e, int n, double* dval, double* z) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    dval[i] = d[i] - (i > 0 ? fabs(e[i - 1]) : 0.0) - (i < n - 1 ? fabs(e[i]) : 0.0);
    z[i + static_cast<long>(i) * n] = 1.0;
  }
}

__global__ void __launch_bounds__(kMergeThreads) deflate_kernel(dc::Level L) {
  extern __shared__ double sh[];
  dc::deflate(L, blockIdx.x, threadIdx.x, blockDim.x, sh);
}

__global__ void __launch_bounds__(kItemThreads) root_kernel(dc::Level L) {
  __shared__ double red[kItemThreads];
  extern __shared__ double sh[];
  dc::root(L, blockIdx.y, blockIdx.x, threadIdx.x, blockDim.x, red, sh);
}

__global__ void __launch_bounds__(kItemThreads) weight_kernel(dc::Level L) {
  __shared__ double red[kItemThreads];
  extern __shared__ double sh[];
  dc::weight_and_rank(L, blockIdx.y, blockIdx.x, threadIdx.x, blockDim.x, red, sh);
}

/// dc::column for item x of merge b; *status := 2 if the column it leaves in sh is not finite.
__device__ void checked_column(const dc::Level& L, int b, int x, int tid, int nth, double* red, double* sh,
                               int* status) {
  const int s = dc::merge_of(L, b).s;
  if (x >= s) return;
  dc::column(L, b, x, tid, nth, red, sh);
  for (int t = tid; t < s; t += nth)
    if (!(fabs(sh[t]) <= DBL_MAX)) *status = 2;
}

__global__ void __launch_bounds__(kItemThreads) column_kernel(dc::Level L, int* status) {
  __shared__ double red[kItemThreads];
  extern __shared__ double sh[];
  checked_column(L, blockIdx.y, blockIdx.x, threadIdx.x, blockDim.x, red, sh, status);
}

/// Every level that merges within kGroupRows rows, for one group of rows per block (a warp per
/// merge for the deflation, a warp per item for the roots, weights and columns, the group's
/// diagonal block of Z := Z U in place): one launch instead of five per level. Z and U are block
/// diagonal at these levels, with blocks inside the groups.
__global__ void __launch_bounds__(kGroupRows * 32) low_levels_kernel(dc::Level L, double* z, int* status) {
  extern __shared__ double sh[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g0 = blockIdx.x * kGroupRows;
  const int rows = min(kGroupRows, L.n - g0);
  double* mine = sh + warp * kGroupWarpDoubles;
  L.z = z;
  for (int half = 1; half < kGroupRows && half < L.n; half *= 2) {
    L.half = half;
    const int first = g0 / (2 * half), merges = (rows + 2 * half - 1) / (2 * half);
    const int b = (g0 + warp) / (2 * half), x = g0 + warp - 2 * half * b;
    if (warp < merges) dc::deflate(L, first + warp, lane, 32, mine);
    __syncthreads();
    if (warp < rows) dc::root(L, b, x, lane, 32, nullptr, mine);
    __syncthreads();
    if (warp < rows) dc::weight_and_rank(L, b, x, lane, 32, nullptr, mine);
    __syncthreads();
    if (warp < rows) checked_column(L, b, x, lane, 32, nullptr, mine, status);
    __syncthreads();
    double zu = 0;  // thread (r, c) of the group's block: (Z U)(g0 + r, g0 + c)
    const int r = lane, c = warp;
    if (r < rows && c < rows)
      for (int k = 0; k < rows; ++k) zu += z[(g0 + r) + static_cast<long>(g0 + k) * L.n] * L.u[(g0 + k) + static_cast<long>(g0 + c) * L.n];
    __syncthreads();
    if (r < rows && c < rows) z[(g0 + r) + static_cast<long>(g0 + c) * L.n] = zu;
    __syncthreads();
  }
}

__global__ void values_kernel(const double* dval, const int* exponent, int n, double* w) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    w[i] = ldexp(dval[i], *exponent);
}

/// Q := I, Y := V (n x r) and, in place of S = V^T V (r x r), T^{-1} = diag(1/tau) + striu(S) (the
/// strict lower part is left: the solve reads the upper), with a reflector of tau = 0 (a zero
/// column of V) as 1 on the diagonal: it then drops out of Q.
__global__ void ut_factors_kernel(const double* v, const double* tau, int n, int r, double* s, double* y, double* q) {
  const long stride = static_cast<long>(gridDim.x) * blockDim.x, first = blockIdx.x * blockDim.x + threadIdx.x;
  for (long i = first; i < static_cast<long>(n) * n; i += stride) q[i] = i % n == i / n ? 1.0 : 0.0;
  for (long i = first; i < static_cast<long>(n) * r; i += stride) y[i] = v[i];
  for (long i = first; i < static_cast<long>(r) * r; i += stride) {
    const long row = i % r, col = i / r;
    if (row == col) s[i] = tau[row] == 0 ? 1.0 : 1.0 / tau[row];
  }
}

/// The workspace, carved in order: FP64 matrices and vectors, then int vectors and scalars.
struct Workspace {
  double *q, *z, *zn, *u, *v, *y, *t, *tau, *d, *e, *dval;
  dc::Level level;
  int *exponent, *status;

  Workspace(void* base, int n) {
    auto* p = static_cast<double*>(base);
    const long nn = static_cast<long>(n) * n;
    auto take = [&](long count) {
      double* r = p;
      p += count;
      return r;
    };
    q = take(nn), z = take(nn), zn = take(nn), u = take(nn), v = take(nn), y = take(nn), t = take(nn);
    tau = take(n), d = take(n), e = take(n), dval = take(n);
    dc::Level& L = level;
    L.n = n;
    L.e = e;
    L.dval = dval;
    L.u = u;
    L.ds = take(n), L.zs = take(n), L.mu = take(n), L.zhat = take(n), L.rho = take(n), L.rc = take(n),
    L.rs = take(n);
    auto* ip = reinterpret_cast<int*>(p);
    auto take_int = [&](long count) {
      int* r = ip;
      ip += count;
      return r;
    };
    L.perm = take_int(n), L.nd = take_int(n), L.df = take_int(n), L.org = take_int(n), L.rp = take_int(n),
    L.rq = take_int(n), L.kcount = take_int(n), L.rcount = take_int(n), L.pos = take_int(n);
    exponent = take_int(1), status = take_int(1);
  }
  static std::size_t bytes(int n) {
    const long nn = static_cast<long>(n) * n;
    return sizeof(double) * (7 * nn + 11L * n) + sizeof(int) * (9L * n + 2);
  }
};

/// Q := H_0 ... H_{r-1} = I - V T V^T, r = n - 2 (symmetric_eig.cuh), on the side stream:
/// S = V^T V, T^{-1} from it, Y := V T by a triangular solve, Q := I - Y V^T.
void form_q(Workspace& ws, int n, const SideStream& side) {
  const int r = n - 2;
  const double one = 1, zero = 0, minus_one = -1;
  RANDNLA_CUDA(cublasDgemm(side.blas, CUBLAS_OP_T, CUBLAS_OP_N, r, r, n, &one, ws.v, n, ws.v, n, &zero, ws.t, r));
  ut_factors_kernel<<<std::min((n * n + 255) / 256, 1024), 256, 0, side.stream>>>(ws.v, ws.tau, n, r, ws.t, ws.y,
                                                                                   ws.q);
  RANDNLA_CUDA_LAUNCH("UT transform factors");
  RANDNLA_CUDA(cublasDtrsm(side.blas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, r,
                           &one, ws.t, r, ws.y, n));
  RANDNLA_CUDA(cublasDgemm(side.blas, CUBLAS_OP_N, CUBLAS_OP_T, n, n, r, &minus_one, ws.y, n, ws.v, n, &one, ws.q, n));
}

void dgemm(cublasHandle_t blas, int n, const double* a, const double* b, double* c, int ldc) {
  const double one = 1, zero = 0;
  RANDNLA_CUDA(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, ldc));
}

/// Z := the eigenvectors of the tridiagonal matrix (d, e) (ws.z), ws.dval := its eigenvalues, ascending.
void divide_and_conquer(Workspace& ws, int n, cublasHandle_t blas, cudaStream_t s) {
  RANDNLA_CUDA(cudaMemsetAsync(ws.z, 0, sizeof(double) * n * n, s));
  RANDNLA_CUDA(cudaMemsetAsync(ws.u, 0, sizeof(double) * n * n, s));
  leaves_kernel<<<(n + 127) / 128, 128, 0, s>>>(ws.d, ws.e, n, ws.dval, ws.z);
  RANDNLA_CUDA_LAUNCH("tridiagonal leaves");
  const int group_bytes = kGroupRows * kGroupWarpDoubles * static_cast<int>(sizeof(double));
  allow_dynamic_shared_memory(low_levels_kernel, group_bytes);
  low_levels_kernel<<<(n + kGroupRows - 1) / kGroupRows, kGroupRows * 32, group_bytes, s>>>(ws.level, ws.z, ws.status);
  RANDNLA_CUDA_LAUNCH("divide and conquer: the levels within 32 rows");
  for (int half = kGroupRows; half < n; half *= 2) {
    dc::Level L = ws.level;
    L.half = half;
    L.z = ws.z;
    const int merges = (n + 2 * half - 1) / (2 * half), items = std::min(2 * half, n);
    const dim3 grid(items, merges);
    const std::size_t item = items * sizeof(double);
    deflate_kernel<<<merges, kMergeThreads, dc::deflate_smem_bytes(items), s>>>(L);
    RANDNLA_CUDA_LAUNCH("divide and conquer: deflation");
    root_kernel<<<grid, kItemThreads, 2 * item, s>>>(L);
    RANDNLA_CUDA_LAUNCH("divide and conquer: roots");
    weight_kernel<<<grid, kItemThreads, 4 * item, s>>>(L);
    RANDNLA_CUDA_LAUNCH("divide and conquer: weights");
    column_kernel<<<grid, kItemThreads, 3 * item, s>>>(L, ws.status);
    RANDNLA_CUDA_LAUNCH("divide and conquer: columns");
    dgemm(blas, n, ws.z, ws.u, ws.zn, n);
    std::swap(ws.z, ws.zn);
  }
}

}  // namespace

std::size_t symmetric_eig_dc_workspace_bytes(int n) { return Workspace::bytes(n); }

bool symmetric_eig_dc(MatrixView<double> g, MatrixView<double> w, void* workspace, cublasHandle_t blas,
                      cudaStream_t s, const SideStream& side) {
  const int n = static_cast<int>(g.rows());
  Workspace ws(workspace, n);
  RANDNLA_CUDA(cudaMemsetAsync(ws.status, 0, sizeof(int), s));
  launch_tridiagonalize(g.data(), g.ld(), n, ws.d, ws.e, ws.v, n, ws.tau, ws.exponent, ws.status, s);
  RANDNLA_CUDA(cudaEventRecord(side.reduced, s));
  RANDNLA_CUDA(cudaStreamWaitEvent(side.stream, side.reduced, 0));
  form_q(ws, n, side);
  RANDNLA_CUDA(cudaEventRecord(side.formed, side.stream));
  divide_and_conquer(ws, n, blas, s);
  RANDNLA_CUDA(cudaStreamWaitEvent(s, side.formed, 0));  // also before the workspace is freed on s
  int status = 0;
  RANDNLA_CUDA(cudaMemcpyAsync(&status, ws.status, sizeof status, cudaMemcpyDeviceToHost, s));
  RANDNLA_CUDA(cudaStreamSynchronize(s));
  if (status != 0) return false;
  dgemm(blas, n, ws.q, ws.z, g.data(), static_cast<int>(g.ld()));
  values_kernel<<<(n + 127) / 128, 128, 0, s>>>(ws.dval, ws.exponent, n, w.data());
  RANDNLA_CUDA_LAUNCH("eigenvalues");
  launch_reverse_eigenpairs(g, w, s);
  return true;
}

}  // namespace cuda
}  // namespace randnla
