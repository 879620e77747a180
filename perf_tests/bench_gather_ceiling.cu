// The device's ceiling for the sparse projection's access pattern, apart from the projection: warps
// gather random rows of a row-major buffer, 32 rows a round, each row read whole by 8 lanes of 16
// bytes (128-byte rows, b = 32 floats, as warp_gathers_kernel reads A) or by 4 (64-byte rows), from
// a buffer that fits in L2 or from one that does not. The rate of rows is what bounds a projection
// whose rows are all different: k p D rows of A at D = 10^7, p = 1/sqrt(D), k = 16384 are 51.8
// million (bench_sparse_projection.md).
// Usage: bench_gather_ceiling
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <initializer_list>

namespace {

constexpr int kThreads = 256, kRounds = 2000;

__device__ __forceinline__ std::uint32_t mix(std::uint32_t x) {
  x ^= x >> 16, x *= 0x7feb352du, x ^= x >> 15, x *= 0x846ca68bu, x ^= x >> 16;
  return x;
}

/// Each lane draws a random row a round; the warp then reads the 32 lanes' rows, kLanesPerRow lanes
/// of a float4 each per row, as many rows a load as 32 / kLanesPerRow.
template <int kLanesPerRow>
__global__ void __launch_bounds__(kThreads) gather_rows(const float* rows, std::uint32_t row_mask, int rounds, float* sink) {
  constexpr int kSlots = 32 / kLanesPerRow, kLoads = 32 / kSlots;
  const int lane = threadIdx.x % 32, slot = lane / kLanesPerRow;
  std::uint32_t state = mix(blockIdx.x * blockDim.x + threadIdx.x + 12345u);
  float acc = 0.0f;
  for (int r = 0; r < rounds; ++r) {
    state = mix(state + r);
    const std::uint32_t row = state & row_mask;
    float4 v[kLoads];
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const std::uint32_t mine = __shfl_sync(0xffffffffu, row, kSlots * i + slot);
      v[i] = __ldg(reinterpret_cast<const float4*>(rows + std::uint64_t{mine} * 32 + 4 * (lane % kLanesPerRow)));
    }
#pragma unroll
    for (int i = 0; i < kLoads; ++i) acc += v[i].x + v[i].y + v[i].z + v[i].w;
  }
  if (acc == 12345.678f) *sink = acc;  // keeps the loads
}

bool check(cudaError_t e) {
  if (e != cudaSuccess) std::printf("bench_gather_ceiling: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("bench_gather_ceiling: no GPU, nothing to measure\n");
    return 0;
  }
  constexpr std::uint64_t kRows = std::uint64_t{1} << 24;  // 2 GiB of 128-byte rows
  float *rows = nullptr, *sink = nullptr;
  if (!check(cudaMalloc(&rows, kRows * 128)) || !check(cudaMemset(rows, 0, kRows * 128)) || !check(cudaMalloc(&sink, 4)))
    return 1;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("device: %s (%d SMs); rows drawn uniformly from the first N of the buffer, best of 3 after a warm-up\n",
              prop.name, sms);
  cudaEvent_t start, stop;
  cudaEventCreate(&start), cudaEventCreate(&stop);
  for (int lanes_per_row : {8, 4})
    for (int warps_per_sm : {16, 32, 64})
      for (std::uint64_t n : {std::uint64_t{1} << 15, std::uint64_t{1} << 17, std::uint64_t{1} << 18,
                              std::uint64_t{1} << 19, kRows}) {
        const auto kernel = lanes_per_row == 8 ? gather_rows<8> : gather_rows<4>;
        const int blocks = sms * warps_per_sm / (kThreads / 32);
        const auto mask = static_cast<std::uint32_t>(n - 1);
        kernel<<<blocks, kThreads>>>(rows, mask, 10, sink);
        float best = 1e30f;
        for (int rep = 0; rep < 3; ++rep) {
          cudaEventRecord(start);
          kernel<<<blocks, kThreads>>>(rows, mask, kRounds, sink);
          cudaEventRecord(stop);
          cudaEventSynchronize(stop);
          float ms = 0.0f;
          cudaEventElapsedTime(&ms, start, stop);
          if (ms < best) best = ms;
        }
        const double gathered = double(blocks) * (kThreads / 32) * kRounds * 32, bytes = gathered * lanes_per_row * 16;
        std::printf("bytes/row %3d  warps/SM %2d  buffer %7.1f MB  %.3f ms  %6.1f G rows/s  %5.0f GB/s\n",
                    lanes_per_row * 16, warps_per_sm, n * 128 / 1048576.0, best, gathered / best / 1e6,
                    bytes / best / 1e6);
      }
  return check(cudaGetLastError()) ? 0 : 1;
}
