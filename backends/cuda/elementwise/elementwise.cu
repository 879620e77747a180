// Elementwise, reduction and layout kernels of the CUDA backend, with their launchers.
#include <algorithm>
#include <cstdint>

#include "cuda/context/cuda_check.hpp"
#include "elementwise.cuh"
#include "for_each.cuh"
#include "randnla/precision.hpp"

namespace randnla {
namespace cuda {
namespace {

/// v counted in a block's exponent histogram in shared memory, unless zero (or no histogram is wanted).
__device__ __forceinline__ void count(unsigned int* local, float v) {
  if (local && v != 0.0f) atomicAdd(&local[biased_exponent(v)], 1u);
}

/// The histogram pass of X (none where `hist` is null), h := X rounded to FP16 too where `h` is
/// given: one kernel over a contiguous X (and h) read four entries at a time, another over any X,
/// entry by entry. At 35840^2 on the H100 the first runs at 2.85-3.0 TB/s (bench_dense_parts
/// passes); the second, the only one before, ran at 1.4-1.8 TB/s (bench_lra's CUPTI timeline).
struct HistogramPass {
  HistogramTarget target;  ///< bins null where no histogram is wanted
  /// The block's bins, zeroed; null where no histogram is wanted.
  __device__ unsigned int* begin(unsigned int* local) const {
    if (!target.bins) return nullptr;
    for (int b = threadIdx.x; b < kExponentBins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    return local;
  }
  __device__ void end(const unsigned int* local) const {
    if (!target.bins) return;
    __syncthreads();
    for (int b = threadIdx.x; b < kExponentBins; b += blockDim.x)
      if (local[b]) atomicAdd(&target.bins[b], static_cast<unsigned long long>(local[b]));
    if (target.published) publish_if_last();
  }

 private:
  __device__ void publish_if_last() const {
    __shared__ bool last;
    __threadfence();  // this block's counts before its ticket
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(target.finished, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    for (int b = threadIdx.x; b < kExponentBins; b += blockDim.x)
      target.published[b] = atomicExch(&target.bins[b], 0ull);
    if (threadIdx.x == 0) *target.finished = 0;
  }
};

__device__ __forceinline__ std::uint16_t half_bits(float v) { return __half_as_ushort(__float2half_rn(v)); }

// h gets each x times `scale`, a power of two (exact in FP32), rounded to FP16 once.
__global__ void histogram_contiguous_kernel(const float* x, std::uint16_t* h, float scale, index_t n, HistogramPass pass) {
  __shared__ unsigned int bins[kExponentBins];
  unsigned int* local = pass.begin(bins);
  const index_t first = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  const index_t stride = static_cast<index_t>(gridDim.x) * blockDim.x, quads = n / 4;
  for (index_t q = first; q < quads; q += stride) {
    const float4 v = reinterpret_cast<const float4*>(x)[q];
    if (h)
      reinterpret_cast<uint2*>(h)[q] =
          make_uint2(half_bits(v.x * scale) | (static_cast<unsigned>(half_bits(v.y * scale)) << 16),
                     half_bits(v.z * scale) | (static_cast<unsigned>(half_bits(v.w * scale)) << 16));
    count(local, v.x), count(local, v.y), count(local, v.z), count(local, v.w);
  }
  for (index_t e = 4 * quads + first; e < n; e += stride) {
    if (h) h[e] = half_bits(x[e] * scale);
    count(local, x[e]);
  }
  pass.end(local);
}

__global__ void histogram_strided_kernel(MatrixView<const float> x, MatrixView<fp16> h, float scale, HistogramPass pass) {
  __shared__ unsigned int bins[kExponentBins];
  unsigned int* local = pass.begin(bins);
  const index_t rows = x.rows(), n = rows * x.cols();
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const float v = at(x, e % rows, e / rows);
    if (!h.empty()) at(h, e % rows, e / rows) = fp16{half_bits(v * scale)};
    count(local, v);
  }
  pass.end(local);
}

/// The pass over X (and h := scale X in FP16, empty for none) in the kernel that fits their layout.
void histogram_pass(MatrixView<const float> x, MatrixView<fp16> h, float scale, HistogramTarget target, cudaStream_t s) {
  const auto aligned = [](const void* p, std::uintptr_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; };
  const bool contiguous = x.ld() == x.rows() && aligned(x.data(), 16) &&
                          (h.empty() || (h.ld() == h.rows() && aligned(h.data(), 8)));
  if (contiguous) {
    const unsigned grid = std::min<unsigned>(grid_for(x.size() / 4 + 1), 2048);
    auto* bits = h.empty() ? nullptr : reinterpret_cast<std::uint16_t*>(h.data());
    histogram_contiguous_kernel<<<grid, kThreads, 0, s>>>(x.data(), bits, scale, x.size(), HistogramPass{target});
  } else {
    const unsigned grid = std::min<unsigned>(grid_for(x.size()), 1024);
    histogram_strided_kernel<<<grid, kThreads, 0, s>>>(x, h, scale, HistogramPass{target});
  }
  RANDNLA_CUDA_LAUNCH(h.empty() ? "histogram" : target.bins ? "convert f32->f16, measured" : "convert f32->f16");
}

template <class T>
__global__ void sum_squares_kernel(MatrixView<const T> x, double* out) {
  const index_t rows = x.rows(), n = rows * x.cols();
  double acc = 0.0;
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const double v = x.data()[e % rows + (e / rows) * x.ld()];
    acc += v * v;
  }
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
  __shared__ double warp_sums[kThreads / 32];
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    double s = 0.0;
    for (int w = 0; w < kThreads / 32; ++w) s += warp_sums[w];
    atomicAdd(out, s);
  }
}

/// Block j reduces column j to its entry of largest magnitude, ties to the smallest row index.
__global__ void signs_of_largest_kernel(MatrixView<const float> x, float* signs) {
  const index_t m = x.rows(), j = blockIdx.x;
  const float* column = x.data() + j * x.ld();
  float best = 0.0f;
  index_t at = m;  // no entry yet
  for (index_t i = threadIdx.x; i < m; i += blockDim.x)
    if (at == m || fabsf(column[i]) > fabsf(best)) best = column[i], at = i;
  __shared__ float values[kThreads];
  __shared__ index_t rows[kThreads];
  values[threadIdx.x] = best, rows[threadIdx.x] = at;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half >>= 1) {
    if (threadIdx.x < half) {
      const float a = fabsf(values[threadIdx.x]), b = fabsf(values[threadIdx.x + half]);
      const index_t ra = rows[threadIdx.x], rb = rows[threadIdx.x + half];
      if (rb != m && (ra == m || b > a || (b == a && rb < ra)))
        values[threadIdx.x] = values[threadIdx.x + half], rows[threadIdx.x] = rb;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) signs[j] = values[0] < 0.0f ? -1.0f : 1.0f;
}

__global__ void transpose_kernel(MatrixView<const float> src, MatrixView<float> dst) {
  __shared__ float tile[32][33];
  const index_t i0 = static_cast<index_t>(blockIdx.x) * 32, j0 = static_cast<index_t>(blockIdx.y) * 32;
  for (int r = threadIdx.y; r < 32; r += blockDim.y) {
    const index_t i = i0 + threadIdx.x, j = j0 + r;
    if (i < src.rows() && j < src.cols()) tile[r][threadIdx.x] = src.data()[i + j * src.ld()];
  }
  __syncthreads();
  for (int r = threadIdx.y; r < 32; r += blockDim.y) {
    const index_t i = i0 + r, j = j0 + threadIdx.x;  // dst(j, i) = src(i, j)
    if (i < src.rows() && j < src.cols()) dst.data()[j + i * dst.ld()] = tile[threadIdx.x][r];
  }
}

template <class T>
void scale_lines(const T* scale, MatrixView<T> x, bool by_row, cudaStream_t s) {
  for_each(x.rows(), x.cols(), s, "scale", [=] __device__(index_t i, index_t j) { at(x, i, j) *= scale[by_row ? i : j]; });
}

}  // namespace

// A dense fill's thread draws this many Philox blocks of a column, with the key schedule worked
// out once for them.
constexpr int kFillBlocks = 2;

/// Dense fills: the column from the grid's y (no index divided by the rows), kFillBlocks blocks a
/// thread, each block's four elements in one store where all four lie in the column and the
/// address is aligned for it.
template <class T, class Store>
__global__ void dense_fill_kernel(RandomDraw draw, MatrixView<T> x, Store store) {
  const index_t rows = x.rows();
  const index_t q0 = (blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x) * kFillBlocks;
  const PhiloxSchedule keys = philox_schedule(detail::philox_key(draw.spec.seed));
  for (index_t j = blockIdx.y; j < x.cols(); j += gridDim.y)
#pragma unroll
    for (int h = 0; h < kFillBlocks; ++h) {
      if (draw.block_row(q0 + h, j) >= rows) break;
      float v[4];
      const index_t i0 = draw.block_values(q0 + h, j, keys, v);
      if (i0 >= 0 && i0 + 4 <= rows && Store::aligned(&at(x, i0, j))) {
        store.four(&at(x, i0, j), v);
        continue;
      }
      for (int w = 0; w < 4; ++w)
        if (i0 + w >= 0 && i0 + w < rows) store(at(x, i0 + w, j), v[w]);
    }
}

/// Dense: dense_fill_kernel. SparseSign: zeros, then one thread per column walking its non-zeros
/// (O(nnz) Philox calls).
template <class T, class Store>
void fill_random(const RandomDraw& draw, MatrixView<T> x, cudaStream_t s, Store store) {
  if (!draw.ternary()) {
    if (x.empty()) return;
    const index_t threads = (RandomDraw::blocks_per_column(x.rows()) + kFillBlocks - 1) / kFillBlocks;
    const dim3 grid(static_cast<unsigned>((threads + kThreads - 1) / kThreads),
                    static_cast<unsigned>(std::min<index_t>(x.cols(), 65535)));
    dense_fill_kernel<<<grid, kThreads, 0, s>>>(draw, x, store);
    RANDNLA_CUDA_LAUNCH("fill_random");
    return;
  }
  for_each(x.rows(), x.cols(), s, "fill_random zeros", [=] __device__(index_t i, index_t j) { store(at(x, i, j), 0.0f); });
  const std::int64_t row0 = draw.block.row0, col0 = draw.block.col0, row_end = row0 + x.rows();
  for_each(x.cols(), 1, s, "fill_random sparse columns", [=] __device__(index_t j, index_t) {
    draw.walk_column_nonzeros(col0 + j, row_end, [&](std::int64_t row, float v) {
      if (row >= row0) store(at(x, row - row0, j), v);
    });
  });
}

struct StoreFloat {
  __device__ void operator()(float& d, float v) const { d = v; }
  __device__ static bool aligned(const float* d) { return reinterpret_cast<std::uintptr_t>(d) % 16 == 0; }
  __device__ void four(float* d, const float (&v)[4]) const {
    *reinterpret_cast<float4*>(d) = make_float4(v[0], v[1], v[2], v[3]);
  }
};
struct StoreHalf {
  __device__ void operator()(fp16& d, float v) const { d = fp16{__half_as_ushort(__float2half_rn(v))}; }
  __device__ static bool aligned(const fp16* d) { return reinterpret_cast<std::uintptr_t>(d) % 8 == 0; }
  __device__ void four(fp16* d, const float (&v)[4]) const {  // each rounded to nearest, as one at a time
    const __half2 low = __floats2half2_rn(v[0], v[1]), high = __floats2half2_rn(v[2], v[3]);
    *reinterpret_cast<uint2*>(d) =
        make_uint2(*reinterpret_cast<const unsigned*>(&low), *reinterpret_cast<const unsigned*>(&high));
  }
};

void launch_fill_random(const RandomDraw& draw, MatrixView<float> x, cudaStream_t s) {
  fill_random(draw, x, s, StoreFloat{});
}
void launch_fill_random(const RandomDraw& draw, MatrixView<fp16> x, cudaStream_t s) {
  fill_random(draw, x, s, StoreHalf{});
}
void launch_convert(MatrixView<const float> src, MatrixView<double> dst, cudaStream_t s) {
  for_each(src.rows(), src.cols(), s, "convert f32->f64",
           [=] __device__(index_t i, index_t j) { at(dst, i, j) = static_cast<double>(at(src, i, j)); });
}
void launch_convert(MatrixView<const double> src, MatrixView<float> dst, cudaStream_t s) {
  for_each(src.rows(), src.cols(), s, "convert f64->f32",
           [=] __device__(index_t i, index_t j) { at(dst, i, j) = static_cast<float>(at(src, i, j)); });
}
void launch_convert(MatrixView<const float> src, MatrixView<fp16> dst, cudaStream_t s) {
  if (!src.empty()) histogram_pass(src, dst, 1.0f, HistogramTarget{nullptr}, s);
}
void launch_convert(MatrixView<const fp16> src, MatrixView<float> dst, cudaStream_t s) {
  for_each(src.rows(), src.cols(), s, "convert f16->f32",
           [=] __device__(index_t i, index_t j) { at(dst, i, j) = __half2float(__ushort_as_half(at(src, i, j).bits)); });
}
void launch_transpose(MatrixView<const float> src, MatrixView<float> dst, cudaStream_t s) {
  if (src.empty()) return;
  const dim3 grid(static_cast<unsigned>((src.rows() + 31) / 32), static_cast<unsigned>((src.cols() + 31) / 32));
  transpose_kernel<<<grid, dim3(32, 8), 0, s>>>(src, dst);
  RANDNLA_CUDA_LAUNCH("transpose");
}
template <class T>
void scale_all(T alpha, MatrixView<T> x, cudaStream_t s) {
  for_each(x.rows(), x.cols(), s, "scale", [=] __device__(index_t i, index_t j) {
    at(x, i, j) = alpha == T(0) ? T(0) : alpha * at(x, i, j);
  });
}
void launch_add(float alpha, MatrixView<const float> x, float beta, MatrixView<float> y, cudaStream_t s) {
  const auto sum = [=] __device__(float xv, float yv) { return alpha * xv + (beta == 0.0f ? 0.0f : beta * yv); };
  if (!in_quads(x) || !in_quads(y))
    return for_each(y.rows(), y.cols(), s, "add", [=] __device__(index_t i, index_t j) {
      at(y, i, j) = sum(at(x, i, j), at(y, i, j));
    });
  const float* xd = x.data();
  float* yd = y.data();
  for_each_quad(
      y.size(), s, "add",
      [=] __device__(index_t q) {
        const float4 a = reinterpret_cast<const float4*>(xd)[q], b = reinterpret_cast<const float4*>(yd)[q];
        reinterpret_cast<float4*>(yd)[q] = make_float4(sum(a.x, b.x), sum(a.y, b.y), sum(a.z, b.z), sum(a.w, b.w));
      },
      [=] __device__(index_t e) { yd[e] = sum(xd[e], yd[e]); });
}
void launch_scale(float alpha, MatrixView<float> x, cudaStream_t s) {
  if (!in_quads(x)) return scale_all(alpha, x, s);
  const auto scaled = [=] __device__(float v) { return alpha == 0.0f ? 0.0f : alpha * v; };
  float* d = x.data();
  for_each_quad(
      x.size(), s, "scale",
      [=] __device__(index_t q) {
        const float4 v = reinterpret_cast<const float4*>(d)[q];
        reinterpret_cast<float4*>(d)[q] = make_float4(scaled(v.x), scaled(v.y), scaled(v.z), scaled(v.w));
      },
      [=] __device__(index_t e) { d[e] = scaled(d[e]); });
}
void launch_scale(double alpha, MatrixView<double> x, cudaStream_t s) { scale_all(alpha, x, s); }
void launch_scale(const float* scale, MatrixView<float> x, bool by_row, cudaStream_t s) {
  scale_lines(scale, x, by_row, s);
}
void launch_scale(const double* scale, MatrixView<double> x, bool by_row, cudaStream_t s) {
  scale_lines(scale, x, by_row, s);
}
void launch_add_to_diagonal(MatrixView<double> g, double shift, cudaStream_t s) {
  for_each(g.rows(), 1, s, "add_to_diagonal", [=] __device__(index_t i, index_t) { at(g, i, i) += shift; });
}
void launch_zero_lower(MatrixView<double> g, cudaStream_t s) {
  for_each(g.rows(), g.cols(), s, "zero_lower", [=] __device__(index_t i, index_t j) {
    if (i > j) at(g, i, j) = 0.0;
  });
}
void launch_histogram(MatrixView<const float> x, HistogramTarget target, cudaStream_t s) {
  if (!x.empty()) histogram_pass(x, MatrixView<fp16>(), 1.0f, target, s);
}
void launch_convert_measured(MatrixView<const float> x, MatrixView<fp16> h, float scale, HistogramTarget target,
                             cudaStream_t s) {
  if (!x.empty()) histogram_pass(x, h, scale, target, s);
}
template <class T>
void sum_squares(MatrixView<const T> x, double* out, cudaStream_t s) {
  if (x.empty()) return;
  sum_squares_kernel<T><<<std::min<unsigned>(grid_for(x.size()), 1024), kThreads, 0, s>>>(x, out);
  RANDNLA_CUDA_LAUNCH("sum_squares");
}
void launch_sum_squares(MatrixView<const float> x, double* out, cudaStream_t s) { sum_squares(x, out, s); }
void launch_sum_squares(MatrixView<const double> x, double* out, cudaStream_t s) { sum_squares(x, out, s); }
void launch_signs_of_largest(MatrixView<const float> x, float* signs, cudaStream_t s) {
  if (x.cols() == 0) return;
  signs_of_largest_kernel<<<static_cast<unsigned>(x.cols()), kThreads, 0, s>>>(x, signs);
  RANDNLA_CUDA_LAUNCH("signs_of_largest");
}
void launch_reverse_eigenpairs(MatrixView<double> g, MatrixView<double> w, cudaStream_t s) {
  const index_t n = g.cols();
  for_each(g.rows(), n / 2, s, "reverse_eigenpairs", [=] __device__(index_t i, index_t j) {
    const double t = at(g, i, j);
    at(g, i, j) = at(g, i, n - 1 - j);
    at(g, i, n - 1 - j) = t;
    if (i == 0) {
      const double v = at(w, j, 0);
      at(w, j, 0) = at(w, n - 1 - j, 0);
      at(w, n - 1 - j, 0) = v;
    }
  });
}

}  // namespace cuda
}  // namespace randnla
