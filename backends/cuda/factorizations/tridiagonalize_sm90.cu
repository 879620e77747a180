// Tridiagonalisation of a small symmetric FP64 matrix in one thread-block cluster: each block
// holds a slice of rows of G in shared memory and reads the reflector and the other
// blocks' parts of p through distributed shared memory; a step costs one cluster barrier and one
// release/acquire flag instead of the several kernel launches per column of a library
// tridiagonalisation (tridiagonalize.cuh).
#include <cooperative_groups.h>

#include <algorithm>
#include <cfloat>

#include "cuda/context/cuda_check.hpp"
#include "cuda/context/kernel_config.cuh"
#include "symmetric_eig.cuh"
#include "tridiagonalize.cuh"

namespace randnla {
namespace cuda {
namespace {

namespace cg = cooperative_groups;
using tri::Panel;

constexpr int kThreads = 512;
static_assert(kThreads / 32 <= Panel::kWarpSlots, "one partial-sum slot per warp");
constexpr int kClusterSizes[] = {8, 16};  // the portable size first; 16 needs the non-portable opt-in

/// The flag word of a panel (its steps published).
__device__ int* flag_of(const Panel& P) { return reinterpret_cast<int*>(P.scal + Panel::kFlag); }

/// Makes the reflector for step `step` visible to the cluster (after the warp barrier that ends
/// tri::reflector, so that lane 0's release covers the warp's writes).
__device__ void publish(const Panel& P, int step) {
  if (threadIdx.x == 0) asm volatile("st.release.cluster.b32 [%0], %1;" ::"l"(flag_of(P)), "r"(step + 1) : "memory");
}

/// Waits until the owner's panel O has published step `step` (the caller's barrier follows).
__device__ void wait_published(const Panel& O, int step) {
  if (threadIdx.x == 0) {
    int seen = 0;
    do asm volatile("ld.acquire.cluster.b32 %0, [%1];" : "=r"(seen) : "l"(flag_of(O)) : "memory");
    while (seen < step + 1);
  }
}

__global__ void __launch_bounds__(kThreads)
    tridiagonalize_kernel(const double* g, index_t ldg, int n, int rows, double* d, double* e, tri::Reflectors H,
                          int* exponent, int* status) {
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank()), blocks = static_cast<int>(cluster.num_blocks());
  extern __shared__ double sh[];
  const tri::Slice s = tri::slice(n, rows, rank);
  const Panel P = tri::panel(sh, s);
  const tri::Team t{static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x), 32};
  auto remote = [&](int r) { return tri::panel(cluster.map_shared_rank(sh, r), s); };

  const double m = tri::load(s, P, g, ldg, t);
  if (t.tid == 0) {
    P.scal[Panel::kMax] = m;
    *flag_of(P) = 0;
  }
  cluster.sync();
  double mx = 0;
  for (int r = 0; r < blocks; ++r) mx = tri::nan_max(mx, remote(r).scal[Panel::kMax]);
  const bool finite = mx <= DBL_MAX;
  int ex = 0;
  if (finite && mx > 0) frexp(mx, &ex);
  tri::scale_rows(s, P, ldexp(1.0, -ex), t);

  if (rank == 0 && t.warp() == 0) {
    tri::reflector(s, P, 0, H, t);
    publish(P, 0);
  }
  for (int j = 0; j < n - 2; ++j) {
    const int owner = j / rows;
    const Panel O = remote(owner);
    if (rank != owner) wait_published(O, j);
    __syncthreads();
    const double tau = tri::product(s, P, j, rank == owner ? P.vpub : O.vpub, t);
    cluster.sync();
    tri::gather_w(s, P, j, tau, blocks, remote, t);
    // The owner of row j + 1: its warp 0 updates that row and publishes the next reflector while
    // the other warps update the rest.
    const bool next = j + 1 < n - 2 && rank == (j + 1) / rows;
    if (next && t.warp() == 0) {
      tri::reflector(s, P, j + 1, H, t);
      publish(P, j + 1);
    } else {
      tri::update(s, P, j, next ? j + 1 : -1, next ? 1 : 0, t);
    }
  }
  __syncthreads();
  tri::finish(s, P, d, e, H, t);
  if (rank == 0 && t.tid == 0) {
    *exponent = ex;
    if (!finite) *status = 1;
  }
  cluster.sync();  // no block leaves while another may still read its shared memory
}

int rows_per_block(int n, int cluster) { return (n + cluster - 1) / cluster; }
std::size_t smem_bytes(int n, int cluster) {
  return tri::panel_doubles(tri::slice(n, rows_per_block(n, cluster), 0)) * sizeof(double);
}

cudaLaunchConfig_t launch_config(int cluster, std::size_t bytes, cudaStream_t s, cudaLaunchAttribute& attribute) {
  const int device = current_device();
  configure_once(reinterpret_cast<const void*>(tridiagonalize_kernel), [&] {  // the largest any order needs
    RANDNLA_CUDA(cudaFuncSetAttribute(tridiagonalize_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      shared_memory_per_block(device)));
    RANDNLA_CUDA(cudaFuncSetAttribute(tridiagonalize_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  });
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(cluster);
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = bytes;
  config.stream = s;
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = cluster;
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return config;
}

/// The smallest cluster of 8 or 16 whose blocks' shared memory holds order n's slices (0: none):
/// at l = 272 on the H100, 8 blocks took 1.28 ms, 4 took 1.49 and 16 took 1.65
/// (perf_tests/results/bench_dense_parts.md).
int cluster_size(int n, int device) {
  for (int c : kClusterSizes)
    if (smem_bytes(n, c) <= static_cast<std::size_t>(shared_memory_per_block(device))) return c;
  return 0;
}

/// Whether the device can run a cluster of `cluster` blocks with this much shared memory each.
bool launchable(int cluster, std::size_t bytes) {
  cudaLaunchAttribute attribute{};
  const cudaLaunchConfig_t config = launch_config(cluster, bytes, nullptr, attribute);
  int clusters = 0;
  const cudaError_t r = cudaOccupancyMaxActiveClusters(&clusters, tridiagonalize_kernel, &config);
  if (r != cudaSuccess) cudaGetLastError();
  return r == cudaSuccess && clusters > 0;
}

}  // namespace

int tridiagonalize_max_order(int device) {
  int major = 0, minor = 0;
  RANDNLA_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  RANDNLA_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major != 9 || minor != 0) return 0;
  const auto optin = static_cast<std::size_t>(shared_memory_per_block(device));
  int best = 0;
  for (int c : kClusterSizes) {
    int n = 2;
    while (smem_bytes(n + 1, c) <= optin) ++n;
    if (n >= 3 && launchable(c, smem_bytes(n, c))) best = std::max(best, n);
  }
  return best;
}

void launch_tridiagonalize(const double* g, index_t ldg, int n, double* d, double* e, double* v, index_t ldv,
                           double* tau, int* exponent, int* status, cudaStream_t s) {
  const int device = current_device();
  const int cluster = cluster_size(n, device);
  require(n >= 3 && cluster != 0, "n", n, "is outside the cluster tridiagonalisation's range");
  cudaLaunchAttribute attribute{};
  const cudaLaunchConfig_t config = launch_config(cluster, smem_bytes(n, cluster), s, attribute);
  RANDNLA_CUDA(cudaLaunchKernelEx(&config, tridiagonalize_kernel, g, ldg, n, rows_per_block(n, cluster), d, e,
                                  tri::Reflectors{v, ldv, tau}, exponent, status));
}

}  // namespace cuda
}  // namespace randnla
