// Tensor Core products with error correction: SHGEMM (Ootomo & Yokota, "Mixed-Precision Random
// Projection for RandNLA on Tensor Cores") and TCEC-SGEMM (Ootomo & Yokota, "Recovering single
// precision accuracy from Tensor Cores while surpassing the FP32 theoretical peak performance").
//
// Operands are first packed, K-contiguous and zero-padded to the tile sizes, as hi and lo parts
// (halfhalf FP16 or tf32tf32). The kernel then computes per output tile
//   main += [sum over one BK block of hi_a * hi_b]   (fresh Tensor Core accumulator, summed in FP32
//                                                     with round-to-nearest on the CUDA cores)
//   corr += lo_a * hi_b + hi_a * lo_b                (on the Tensor Core; small terms)
//   C = alpha * 2^-(sa+sb) * (main + corr * 2^-11) + beta * C.
// The Tensor Core's own accumulation truncates; adding each block's hi*hi sum outside it keeps
// that truncation from accumulating over K.
// This file's mma.sync kernel serves every GPU from sm_80 on (tc_gemm_packed); on compute 9.0
// the wgmma kernel of tc_gemm_sm90.cu takes its place (tc_gemm_streamed, choose_wgmma): it packs
// only the smaller operand and splits the larger one inside the kernel.
// Block tile 128 x 64 x 32, eight warps of 32 x 32, a three-stage cp.async pipeline into padded
// shared memory, FP16 fragments through ldmatrix.x4, TF32 fragments through 32-bit loads.
#include <cuda_fp16.h>

#include <algorithm>
#include <limits>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda/tc/cp_async.cuh"
#include "cuda/context/cuda_check.hpp"
#include "randnla/precision.hpp"
#include "cuda/elementwise/elementwise.cuh"
#include "cuda/context/kernel_config.cuh"
#include "tc_gemm.cuh"
#include "tc_gemm_kernels.cuh"
#include "cuda/tc/kernel_choice.hpp"
#include "cuda/tc/mma_sm80.cuh"

namespace randnla {
namespace cuda {
namespace {

constexpr int BM = 128, BN = 64, BK = 32, kWarps = 8, kThreadsGemm = kWarps * 32, kStages = 3;

template <class T>
struct TcTraits;
template <>
struct TcTraits<__half> {
  static constexpr int kStep = 16;  // m16n8k16
  static constexpr int kPad = 8;    // row = 40 halves = 80 B: fragment loads are conflict-free
};
template <>
struct TcTraits<float> {
  static constexpr int kStep = 8;   // m16n8k8 tf32
  static constexpr int kPad = 4;    // row = 36 words
};

using tc::ldmatrix_x4;
using tc::mma;

/// A fragment register: two consecutive FP16 (one word) or one TF32 word from shared memory.
template <class T>
__device__ __forceinline__ std::uint32_t frag_word(const T* row, int col) {
  return *reinterpret_cast<const std::uint32_t*>(row + col);
}

template <class T, bool A_LO, bool B_LO>
struct Tile {
  static constexpr int kRow = BK + TcTraits<T>::kPad;
  static constexpr int kARows = BM * (A_LO ? 2 : 1), kBRows = BN * (B_LO ? 2 : 1);
  static constexpr std::size_t kStageElems = static_cast<std::size_t>(kARows + kBRows) * kRow;
  static constexpr std::size_t kSmemBytes = kStages * kStageElems * sizeof(T);
};

/// Loads rows [row0, row0 + rows) x [k0, k0 + BK) of a packed operand into shared memory.
template <class T>
__device__ __forceinline__ void load_rows(T* smem, const T* g, index_t row0, index_t kp, index_t k0, int rows,
                                          int row_stride) {
  constexpr int kPerChunk = 16 / sizeof(T), kChunks = BK / kPerChunk;
  for (int c = threadIdx.x; c < rows * kChunks; c += kThreadsGemm) {
    const int r = c / kChunks, ch = c % kChunks;
    cp_async<16>(smem + r * row_stride + ch * kPerChunk, g + (row0 + r) * kp + k0 + ch * kPerChunk);
  }
}

/// The warp's A (two m16 tiles) and B (four n8 tiles) fragments of k-step ks, hi and lo parts.
/// FP16: ldmatrix.x4 (A: rows 0-15 x k 0-15 of a tile; B: two n8 tiles x k 0-15).
/// TF32: 32-bit loads, a0..a3 = (g, t) (g+8, t) (g, t+4) (g+8, t+4), b0/b1 = (k t | t+4, n g).
template <class T, bool A_LO, bool B_LO>
__device__ __forceinline__ void load_fragments(const T* sa, const T* sa_lo, const T* sb, const T* sb_lo, int wm, int wn,
                                               int ks, int lane, std::uint32_t (&ah)[2][4], std::uint32_t (&al)[2][4],
                                               std::uint32_t (&bh)[4][2], std::uint32_t (&bl)[4][2]) {
  constexpr int kRow = BK + TcTraits<T>::kPad;
  if constexpr (sizeof(T) == 2) {
    const int a_row = lane % 16, a_col = ks + (lane / 16) * 8;
#pragma unroll
    for (int mt = 0; mt < 2; ++mt) {
      ldmatrix_x4(ah[mt], sa + (wm + mt * 16 + a_row) * kRow + a_col);
      if (A_LO) ldmatrix_x4(al[mt], sa_lo + (wm + mt * 16 + a_row) * kRow + a_col);
    }
    const int b_row = (lane / 16) * 8 + lane % 8, b_col = ks + ((lane / 8) % 2) * 8;
#pragma unroll
    for (int pair = 0; pair < 2; ++pair) {
      std::uint32_t r[4];
      ldmatrix_x4(r, sb + (wn + pair * 16 + b_row) * kRow + b_col);
      bh[2 * pair][0] = r[0], bh[2 * pair][1] = r[1], bh[2 * pair + 1][0] = r[2], bh[2 * pair + 1][1] = r[3];
      if (B_LO) {
        ldmatrix_x4(r, sb_lo + (wn + pair * 16 + b_row) * kRow + b_col);
        bl[2 * pair][0] = r[0], bl[2 * pair][1] = r[1], bl[2 * pair + 1][0] = r[2], bl[2 * pair + 1][1] = r[3];
      }
    }
  } else {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int rr = wm + mt * 16 + g + (q & 1) * 8, cc = ks + t + (q >> 1) * 4;
        ah[mt][q] = frag_word(sa + rr * kRow, cc);
        if (A_LO) al[mt][q] = frag_word(sa_lo + rr * kRow, cc);
      }
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int q = 0; q < 2; ++q) {
        bh[nt][q] = frag_word(sb + (wn + nt * 8 + g) * kRow, ks + t + q * 4);
        if (B_LO) bl[nt][q] = frag_word(sb_lo + (wn + nt * 8 + g) * kRow, ks + t + q * 4);
      }
  }
}

// Two blocks per SM where 128 registers hold the FP16 kernel without spills (the compiler's report:
// SHGEMM and TCEC do, the A-FP16 mirror does not).
template <class T, bool A_LO, bool B_LO>
__global__ void __launch_bounds__(kThreadsGemm, sizeof(T) == 2 && A_LO ? 2 : 1)
    tc_gemm_kernel(GemmArgs args, tc::NonfiniteState nonfinite) {
  if (!plan_chooses<T>(args.plan)) return;
  using Tl = Tile<T, A_LO, B_LO>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* smem = reinterpret_cast<T*>(smem_raw);
  const T* a_hi = static_cast<const T*>(args.a_hi);
  const T* a_lo = static_cast<const T*>(args.a_lo);
  const T* b_hi = static_cast<const T*>(args.b_hi);
  const T* b_lo = static_cast<const T*>(args.b_lo);
  const index_t row0 = static_cast<index_t>(blockIdx.y) * BM, col0 = static_cast<index_t>(blockIdx.x) * BN;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int wm = (warp & 3) * 32, wn = (warp >> 2) * 32;

  float acc[2][4][4] = {}, corr[2][4][4] = {};
  auto stage_ptr = [&](int s) { return smem + s * Tl::kStageElems; };
  auto load_stage = [&](int s, index_t k0) {
    T* base = stage_ptr(s);
    load_rows(base, a_hi, row0, args.kp, k0, BM, Tl::kRow);
    if (A_LO) load_rows(base + BM * Tl::kRow, a_lo, row0, args.kp, k0, BM, Tl::kRow);
    T* bbase = base + Tl::kARows * Tl::kRow;
    load_rows(bbase, b_hi, col0, args.kp, k0, BN, Tl::kRow);
    if (B_LO) load_rows(bbase + BN * Tl::kRow, b_lo, col0, args.kp, k0, BN, Tl::kRow);
    cp_async_commit();
  };

  const index_t nk = args.kp / BK;
  // kStages-deep cp.async pipeline: stage kb % kStages is computed while the next ones load.
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < nk) load_stage(s, s * BK);
    else cp_async_commit();
  }
  for (index_t kb = 0; kb < nk; ++kb) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // stage kb has landed, and every warp is done with stage kb - 1
    if (kb + kStages - 1 < nk)
      load_stage(static_cast<int>((kb + kStages - 1) % kStages), (kb + kStages - 1) * BK);
    else
      cp_async_commit();
    const T* sa = stage_ptr(static_cast<int>(kb % kStages));
    const T* sa_lo = sa + BM * Tl::kRow;
    const T* sb = sa + Tl::kARows * Tl::kRow;
    const T* sb_lo = sb + BN * Tl::kRow;
    float block[2][4][4] = {};
#pragma unroll
    for (int ks = 0; ks < BK; ks += TcTraits<T>::kStep) {
      std::uint32_t ah[2][4], al[2][4], bh[4][2], bl[4][2];
      load_fragments<T, A_LO, B_LO>(sa, sa_lo, sb, sb_lo, wm, wn, ks, lane, ah, al, bh, bl);
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int nt = 0; nt < 4; ++nt) {
          mma(block[mt][nt], ah[mt], bh[nt], T());
          if (A_LO) mma(corr[mt][nt], al[mt], bh[nt], T());
          if (B_LO) mma(corr[mt][nt], ah[mt], bl[nt], T());
        }
    }
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[mt][nt][q] = __fadd_rn(acc[mt][nt][q], block[mt][nt][q]);
  }

  const float unscale = plan_unscale<T>(args.plan);
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const index_t i = row0 + wm + mt * 16 + g + (q >> 1) * 8;
        const index_t j = col0 + wn + nt * 8 + 2 * t + (q & 1);
        store_or_leave(args, nonfinite, unscale, i, j, acc[mt][nt][q], corr[mt][nt][q]);
      }
}

/// Four packed elements stored at once (8 or 16 bytes).
template <class Dst>
using Vector = typename std::conditional<sizeof(Dst) == 2, uint2, uint4>::type;

/// Four FP32 values split into hi[0..3] and lo[0..3]: halfhalf with scale 2^scale, or tf32tf32; lo times lo_scale.
template <class Dst>
__device__ __forceinline__ void split_four(const float (&v)[4], int scale, float lo_scale, Dst* hi, Dst* lo) {
  Dst h[4], l[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    if constexpr (std::is_same<Dst, __half>::value) {
      fp16 a, b;
      split_halfhalf(v[q], scale, a, b, lo_scale);
      h[q] = __ushort_as_half(a.bits), l[q] = __ushort_as_half(b.bits);
    } else {
      split_tf32(v[q], h[q], l[q], lo_scale);
    }
  }
  *reinterpret_cast<Vector<Dst>*>(hi) = *reinterpret_cast<const Vector<Dst>*>(h);
  *reinterpret_cast<Vector<Dst>*>(lo) = *reinterpret_cast<const Vector<Dst>*>(l);
}

/// Packs op(X) (rows x k) K-contiguous into rows_p x kp, zero padded: FP32 sources are split
/// (halfhalf with the plan's scale of slot `scale_slot`, or tf32tf32; lo times lo_scale), FP16
/// sources copied (or widened for TF32). `trans`: k is the contiguous index of the source. The
/// blocks take 32 x 32 tiles in turn (row_tiles x k_tiles of them): a grid sized for the copy,
/// not for the tiles, so that the launch of the format the plan did not choose costs microseconds
/// (one block per tile took 21 us to return at 65536 x 512 on the H100); each thread writes four
/// consecutive K positions at once (kp is a multiple of 4: kPadK).
template <class Src, class Dst>
__global__ void pack_kernel(const Src* x, index_t ld, bool trans, index_t rows, index_t k, index_t kp,
                            index_t row_tiles, Dst* hi, Dst* lo, const DevicePlan* plan, int scale_slot,
                            float lo_scale) {
  if (!plan_chooses<Dst>(plan)) return;
  const int scale = scale_slot == 0 ? plan->scale_a : plan->scale_b;
  __shared__ float tile[32][33];  // tile[p][r]
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  const index_t k_tiles = kp / 32;
  for (index_t t = blockIdx.x; t < row_tiles * k_tiles; t += gridDim.x) {
    const index_t r0 = t / k_tiles * 32, p0 = t % k_tiles * 32;
    __syncthreads();  // the previous tile's reads of `tile` are done
    for (int yy = ty; yy < 32; yy += 8) {
      // Read along whichever index is contiguous in memory.
      const index_t r = trans ? r0 + yy : r0 + tx, p = trans ? p0 + tx : p0 + yy;
      float v = 0.0f;
      if (r < rows && p < k) v = static_cast<float>(trans ? x[p + r * ld] : x[r + p * ld]);
      if (trans)
        tile[tx][yy] = v;
      else
        tile[yy][tx] = v;
    }
    __syncthreads();
    const int yy = threadIdx.x / 8, q0 = threadIdx.x % 8 * 4;
    const index_t o = (r0 + yy) * kp + p0 + q0;
    float v[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) v[q] = tile[q0 + q][yy];
    if constexpr (std::is_same<Src, __half>::value) {
      Dst h[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) h[q] = static_cast<Dst>(v[q]);  // FP16 is exact in TF32 too
      *reinterpret_cast<Vector<Dst>*>(hi + o) = *reinterpret_cast<const Vector<Dst>*>(h);
    } else {
      split_four(v, scale, lo_scale, hi + o, lo + o);
    }
  }
}

/// pack_kernel for an FP32 source whose K is contiguous already (16-byte-aligned columns of x,
/// ld a multiple of 4): no transposition, so a thread streams four K positions at a time,
/// kQuadsInFlight quads of them in flight, without shared memory. The tiled kernel, one 32 x 32
/// tile in flight per block, moved 2.0 TB/s (136 us for a 65536 x 512 Y, the Gram matrix's packed
/// operand, H100). Thread positions advance by (row, quad) steps: no 64-bit division in the loop.
constexpr int kQuadsInFlight = 4;
template <class Dst>
__global__ void pack_contiguous_kernel(const float* x, index_t ld, index_t rows, index_t k, index_t rows_p,
                                       index_t kp, Dst* hi, Dst* lo, const DevicePlan* plan, int scale_slot,
                                       float lo_scale) {
  if (!plan_chooses<Dst>(plan)) return;
  const int scale = scale_slot == 0 ? plan->scale_a : plan->scale_b;
  const index_t row_quads = kp / 4, stride = static_cast<index_t>(gridDim.x) * blockDim.x;
  const index_t first = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  const index_t row_step = stride / row_quads, quad_step = stride % row_quads;
  index_t r = first / row_quads, q = first % row_quads;
  while (r < rows_p) {
    float v[kQuadsInFlight][4];
    index_t at[kQuadsInFlight];  // the quads' packed offsets, -1 past the end
#pragma unroll
    for (int u = 0; u < kQuadsInFlight; ++u) {
      const index_t p = 4 * q;
      const float* from = x + p + r * ld;
      at[u] = r < rows_p ? r * kp + p : -1;
      if (r < rows && p + 4 <= k) {
        const float4 f = *reinterpret_cast<const float4*>(from);
        v[u][0] = f.x, v[u][1] = f.y, v[u][2] = f.z, v[u][3] = f.w;
      } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) v[u][i] = r < rows && p + i < k ? from[i] : 0.0f;
      }
      q += quad_step, r += row_step;
      if (q >= row_quads) q -= row_quads, ++r;
    }
#pragma unroll
    for (int u = 0; u < kQuadsInFlight; ++u)
      if (at[u] >= 0) split_four(v[u], scale, lo_scale, hi + at[u], lo + at[u]);
  }
}

constexpr int kPlanThreads = kExponentBins;

/// The plan from the operands' histograms (null histogram: an FP16 operand), into `plan` and, where
/// non-null, `published` (host memory). The block reads the bins and leaves them zero for the next
/// product's histograms (no reset of its own between the kernels); one thread plans.
__global__ void __launch_bounds__(kPlanThreads)
    plan_kernel(unsigned long long* hist_a, unsigned long long* hist_b, TensorCore tc, DevicePlan* plan,
                DevicePlan* published, tc::NonfiniteState nonfinite) {
  static_assert(sizeof(ExponentHistogram) == sizeof(std::int64_t) * kExponentBins &&
                    std::is_standard_layout<ExponentHistogram>::value,
                "an ExponentHistogram is its counts");
  __shared__ std::int64_t bins[2][kExponentBins];
  unsigned long long* hs[2] = {hist_a, hist_b};
  for (int o = 0; o < 2; ++o) {
    if (hs[o] == nullptr) continue;
    bins[o][threadIdx.x] = static_cast<std::int64_t>(hs[o][threadIdx.x]);
    hs[o][threadIdx.x] = 0;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  tc::lower_flag(nonfinite);
  OperandPlan p[2];
  for (int o = 0; o < 2; ++o) {
    if (hs[o] == nullptr) {
      p[o] = OperandPlan{tc != TensorCore::TF32, 0};
      continue;
    }
    // Read where the block left them: a copy into a local ExponentHistogram (local memory) took
    // about 2 of this kernel's 7 us (CUPTI, H100).
    p[o] = plan_operand(*reinterpret_cast<const ExponentHistogram*>(bins[o]), tc);
  }
  const bool fp16 = p[0].use_fp16 && p[1].use_fp16;
  *plan = DevicePlan{fp16 ? 1 : 0, fp16 ? p[0].scale_exponent : 0, fp16 ? p[1].scale_exponent : 0};
  if (published) *published = *plan;
}

index_t round_up(index_t x, index_t to) { return (x + to - 1) / to * to; }

/// Packs op(X) of a product, X the product's A (as_b false: rows x k = op(A)) or B (op(B)^T).
template <class T>
void pack(const TcOperand& x, bool as_b, index_t rows, index_t k, index_t rows_p, index_t kp, T* hi, T* lo,
          const DevicePlan* plan, int scale_slot, float lo_scale, cudaStream_t s) {
  const index_t row_tiles = rows_p / 32, tiles = row_tiles * (kp / 32);
  const dim3 grid(static_cast<unsigned>(std::min<index_t>(tiles, 4096))), block(256);
  // op(A) is rows x k with A stored m x k (N) or k x m (T): "trans" means k is the contiguous index.
  const bool trans = as_b ? x.op == Op::N : x.op == Op::T;
  if (!x.fp16 && trans && reinterpret_cast<std::uintptr_t>(x.data) % 16 == 0 && x.ld % 4 == 0) {
    const index_t quads = rows_p * kp / 4;
    const unsigned blocks = static_cast<unsigned>(std::min<index_t>((quads + 255) / 256, 8 * multiprocessors()));
    pack_contiguous_kernel<T><<<blocks, 256, 0, s>>>(static_cast<const float*>(x.data), x.ld, rows, k, rows_p, kp,
                                                      hi, lo, plan, scale_slot, lo_scale);
  } else if (x.fp16)
    pack_kernel<__half, T><<<grid, block, 0, s>>>(static_cast<const __half*>(x.data), x.ld, trans, rows, k, kp,
                                                  row_tiles, hi, lo, plan, scale_slot, lo_scale);
  else
    pack_kernel<float, T><<<grid, block, 0, s>>>(static_cast<const float*>(x.data), x.ld, trans, rows, k, kp,
                                                 row_tiles, hi, lo, plan, scale_slot, lo_scale);
  RANDNLA_CUDA_LAUNCH("tc_gemm pack");
}

template <class T, bool A_LO, bool B_LO>
void launch_gemm(const GemmArgs& args, const tc::NonfiniteState& nonfinite, cudaStream_t s) {
  using Tl = Tile<T, A_LO, B_LO>;
  auto kernel = tc_gemm_kernel<T, A_LO, B_LO>;
  allow_dynamic_shared_memory(kernel, static_cast<int>(Tl::kSmemBytes));
  const dim3 grid(static_cast<unsigned>(args.np / BN), static_cast<unsigned>(args.mp / BM));
  kernel<<<grid, kThreadsGemm, Tl::kSmemBytes, s>>>(args, nonfinite);
  RANDNLA_CUDA_LAUNCH("tc_gemm kernel");
}

template <class T>
void launch_mma_variant(bool a_lo, bool b_lo, const GemmArgs& args, const tc::NonfiniteState& nonfinite, cudaStream_t s) {
  if (a_lo && b_lo) return launch_gemm<T, true, true>(args, nonfinite, s);
  if (a_lo) return launch_gemm<T, true, false>(args, nonfinite, s);
  return launch_gemm<T, false, true>(args, nonfinite, s);
}

__global__ void scale_kernel(MatrixView<float> c, float beta) {
  const index_t n = c.size();
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<index_t>(gridDim.x) * blockDim.x) {
    float& v = c.data()[e % c.rows() + (e / c.rows()) * c.ld()];
    v = beta == 0.0f ? 0.0f : beta * v;
  }
}

}  // namespace

constexpr std::size_t kHistogramBytes = 2 * kExponentBins * sizeof(unsigned long long);

void* TcWorkspace::get(std::size_t bytes) {
  if (bytes > bytes_) {
    buffer_.reset();
    buffer_ = allocate_(bytes);
    bytes_ = bytes;
  }
  return buffer_.get();
}
unsigned long long* TcWorkspace::histograms(cudaStream_t s) {
  if (!small_) {
    small_ = allocate_(kHistogramBytes + 256);
    RANDNLA_CUDA(cudaMemsetAsync(small_.get(), 0, kHistogramBytes, s));
  }
  return static_cast<unsigned long long*>(small_.get());
}
void* TcWorkspace::plan(cudaStream_t s) { return histograms(s) + 2 * kExponentBins; }
std::shared_ptr<PinnedSlots::Slot> TcWorkspace::plan_copy() {
  if (!plan_copies_) plan_copies_ = std::make_shared<PinnedSlots>(device_, sizeof(DevicePlan));
  return plan_copies_->take();
}
void* TcWorkspace::zeroed(std::size_t bytes, cudaStream_t s) {
  if (bytes > zeroed_bytes_) {
    zeroed_.reset();
    zeroed_ = allocate_(bytes);
    zeroed_bytes_ = bytes;
    RANDNLA_CUDA(cudaMemsetAsync(zeroed_.get(), 0, bytes, s));
  }
  return zeroed_.get();
}

namespace {

/// A product's plan on the device, and the page-locked slot the plan kernel also writes it to
/// where the product is reported (else null).
struct Planned {
  DevicePlan* plan;
  std::shared_ptr<PinnedSlots::Slot> published;
};

/// Exponent histograms of the FP32 operands that need one (null: none) and the plan from them,
/// all on the device; the plan kernel also lowers the last product's non-finite flag.
Planned plan_on_device(const TcOperand* a, const TcOperand* b, TensorCore tc, TcWorkspace& ws, const ProductReport* report,
                       cudaStream_t s, const tc::NonfiniteState& nonfinite = {}) {
  unsigned long long* hist = ws.histograms(s);  // zero: the last plan kernel left them so
  Planned planned{static_cast<DevicePlan*>(ws.plan(s)), report ? ws.plan_copy() : nullptr};
  const TcOperand* ops[2] = {a, b};
  for (int o = 0; o < 2; ++o) {
    if (ops[o] == nullptr || tc == TensorCore::TF32) continue;
    const TcOperand& x = *ops[o];
    launch_histogram(MatrixView<const float>(static_cast<const float*>(x.data), x.rows, x.cols, x.ld, MemorySpace::Device),
                     HistogramTarget{hist + o * kExponentBins}, s);
  }
  plan_kernel<<<1, kPlanThreads, 0, s>>>(
      a ? hist : nullptr, b ? hist + kExponentBins : nullptr, tc, planned.plan,
      planned.published ? static_cast<DevicePlan*>(planned.published->device_data) : nullptr, nonfinite);
  RANDNLA_CUDA_LAUNCH("tc_gemm plan");
  return planned;
}

void report_plan(const DevicePlan& h, bool swap_scales, ProductReport& report) {
  const TensorCore f = h.use_fp16 ? TensorCore::FP16 : TensorCore::TF32;
  report.a_format = report.b_format = f;
  report.a_scale_exponent = swap_scales ? h.scale_b : h.scale_a;
  report.b_scale_exponent = swap_scales ? h.scale_a : h.scale_b;
}

/// The report's formats and scales from the plan the plan kernel published: now (a wait), or, where
/// the report settles later, when its `settle` is called.
void fill_report(const Planned& planned, bool swap_scales, ProductReport* report, cudaStream_t s) {
  if (!report) return;
  std::shared_ptr<PinnedSlots::Slot> slot = planned.published;
  RANDNLA_CUDA(cudaEventRecord(slot->written, s));
  report->settle = [slot, swap_scales](ProductReport& r) {
    wait_written(*slot);
    DevicePlan h;
    std::memcpy(&h, slot->data, sizeof h);
    report_plan(h, swap_scales, r);
  };
  if (!report->settle_later) std::exchange(report->settle, nullptr)(*report);
}

/// The paths a product may take, known before its plan: FP16 unless TF32 is asked for; TF32 where
/// asked for, or where an FP32 operand's exponents may send the plan there (plan_operand). Each
/// path's kernel returns at once where the plan chose the other; a path that cannot be chosen is
/// not launched.
struct Paths {
  bool fp16, tf32;
};
Paths possible_paths(TensorCore tc, bool planned_fp32_operand) {
  return {tc != TensorCore::TF32, tc == TensorCore::TF32 || planned_fp32_operand};
}

/// Packs both operands as T (the FP16 or the TF32 path) into the workspace and launches the
/// mma.sync kernel for that path.
template <class T>
void pack_both_and_launch(const TcOperand& a, const TcOperand& b, index_t m, index_t n, index_t k, GemmArgs args,
                          float* workspace, const tc::NonfiniteState& nonfinite, cudaStream_t s) {
  const std::size_t a_elems = static_cast<std::size_t>(args.mp * args.kp), b_elems = static_cast<std::size_t>(args.np * args.kp);
  T *ahi = reinterpret_cast<T*>(workspace), *alo = ahi + a_elems, *bhi = alo + a_elems, *blo = bhi + b_elems;
  pack(a, false, m, k, args.mp, args.kp, ahi, alo, args.plan, 0, kSplitShift, s);
  pack(b, true, n, k, args.np, args.kp, bhi, blo, args.plan, 1, kSplitShift, s);
  args.a_hi = ahi, args.a_lo = alo, args.b_hi = bhi, args.b_lo = blo;
  launch_mma_variant<T>(!a.fp16, !b.fp16, args, nonfinite, s);
}

/// Both operands packed, the mma.sync kernel (any GPU from sm_80).
void tc_gemm_packed(const TcOperand& a, const TcOperand& b, index_t m, index_t n, index_t k, GemmArgs args,
                    TensorCore tc, ProductReport* report, TcWorkspace& ws, cudaStream_t s) {
  // Both paths share one allocation, sized for TF32 parts; FP16 parts use half of it.
  float* workspace = static_cast<float*>(ws.get(2 * static_cast<std::size_t>((args.mp + args.np) * args.kp) * sizeof(float)));
  const auto nonfinite = tc::nonfinite_state(ws.zeroed(tc::nonfinite_state_bytes(m, n, k), s), m, n, k);
  const Planned planned = plan_on_device(a.fp16 ? nullptr : &a, b.fp16 ? nullptr : &b, tc, ws, report, s, nonfinite);
  args.plan = planned.plan;
  const Paths paths = possible_paths(tc, !a.fp16 || !b.fp16);
  if (paths.fp16) pack_both_and_launch<__half>(a, b, m, n, k, args, workspace, nonfinite, s);
  if (paths.tf32) pack_both_and_launch<float>(a, b, m, n, k, args, workspace, nonfinite, s);
  tc::launch_nonfinite_epilogue(a, b, args.alpha, args.beta, MatrixView<float>(args.c, m, n, args.ldc, MemorySpace::Device),
                                nonfinite, s);
  fill_report(planned, false, report, s);
}

/// One FP32 operand streamed, the other packed, the wgmma kernel (compute 9.0). The streamed one is
/// the FP32 operand, the larger of the two in TCEC; when it is B, the kernel computes C^T = op(B)^T op(A)^T.
void tc_gemm_streamed(const TcOperand& a, const TcOperand& b, index_t m, index_t n, index_t k, GemmArgs args,
                      TensorCore tc, ProductReport* report, TcWorkspace& ws, cudaStream_t s, TcStructure structure) {
  const bool stream_b = a.slices == 1 && (a.fp16 || (!b.fp16 && n > m));
  const TcOperand& x = stream_b ? b : a;
  const TcOperand& p = stream_b ? a : b;
  const index_t x_rows = stream_b ? n : m, p_rows = stream_b ? m : n;
  const index_t p_rows_p = round_up(p_rows, kPadRows), kp = args.kp;
  const std::size_t p_elems = static_cast<std::size_t>(p_rows_p * kp);
  // The copy engine reads rows of 16-byte multiples from 16-byte-aligned memory: otherwise X is
  // first copied into such a layout.
  const bool x_aligned = tc_gemm_streams_in_place(x.data, x.ld);
  const index_t x_ld = x_aligned ? x.ld : round_up(x.rows, 4);
  const std::size_t x_copy_bytes = x_aligned ? 0 : static_cast<std::size_t>(x_ld * x.cols) * sizeof(float);
  // op(A) rows are A's rows (contiguous when op = N); op(B)^T rows are B's columns (contiguous K when op = N).
  const bool x_k_major = stream_b ? x.op == Op::N : x.op == Op::T;
  const index_t slice_k = k / x.slices, slice_stride = x.slice_stride;
  StreamGemmArgs sa{nullptr, x_ld, x_k_major, x_rows, k, slice_k, slice_stride, nullptr, nullptr, p_rows_p, kp, kp, kp,
                    stream_b, structure.c_lower && !stream_b, structure.b_upper && !stream_b, args, nullptr, {}};
  sa.nonfinite = tc::nonfinite_state(ws.zeroed(tc::nonfinite_state_bytes(m, n, k), s), m, n, k);
  const std::size_t scratch_bytes = wgmma_gemm_scratch_bytes(sa);
  auto* base = static_cast<unsigned char*>(ws.get(2 * p_elems * sizeof(float) + x_copy_bytes + scratch_bytes));
  if (scratch_bytes > 0) sa.scratch = base + 2 * p_elems * sizeof(float) + x_copy_bytes;
  const float* x_data = static_cast<const float*>(x.data);
  if (!x_aligned) {
    auto* copy = reinterpret_cast<float*>(base + 2 * p_elems * sizeof(float));
    RANDNLA_CUDA(cudaMemcpy2DAsync(copy, x_ld * sizeof(float), x.data, x.ld * sizeof(float), x.rows * sizeof(float),
                                   x.cols, cudaMemcpyDeviceToDevice, s));
    x_data = copy;
  }
  // Only the packed operand has one exponent scale for the whole matrix; the streamed one is
  // scaled per row and K slice inside the kernel and never needs TF32 for its range.
  const Planned planned = plan_on_device(nullptr, p.fp16 ? nullptr : &p, tc, ws, report, s, sa.nonfinite);
  DevicePlan* plan = planned.plan;
  sa.c_args.plan = plan;
  sa.x = x_data;
  // An FP16 P whose K is contiguous in 16-byte-aligned rows is the FP16 path's operand as it is.
  const bool p_k_contiguous = stream_b ? p.op == Op::T : p.op == Op::N;
  const bool p_as_is = p.fp16 && p_k_contiguous && reinterpret_cast<std::uintptr_t>(p.data) % 16 == 0 && p.ld % 8 == 0;
  auto pack_and_launch = [&](auto part) {  // part: the packed element type of the path
    using T = decltype(part);
    StreamGemmArgs path = sa;
    if (sizeof(T) == 2 && p_as_is) {
      path.p_hi = p.data, path.p_rows_p = p_rows, path.p_k = k, path.p_ld = p.ld;
    } else {
      T *hi = reinterpret_cast<T*>(base), *lo = hi + p_elems;
      pack(p, !stream_b, p_rows, k, p_rows_p, kp, hi, lo, plan, 1, 1.0f, s);
      path.p_hi = hi, path.p_lo = p.fp16 ? nullptr : lo;
    }
    launch_wgmma_gemm(path, sizeof(T) == 2, s);
  };
  const Paths paths = possible_paths(tc, !p.fp16);
  if (paths.fp16) pack_and_launch(__half());
  if (paths.tf32) pack_and_launch(float());
  tc::launch_nonfinite_epilogue(a, b, args.alpha, args.beta, MatrixView<float>(args.c, m, n, args.ldc, MemorySpace::Device),
                                sa.nonfinite, s);
  fill_report(planned, stream_b, report, s);
}

}  // namespace

bool tc_gemm_streams_in_place(const void* data, index_t ld) {
  return reinterpret_cast<std::uintptr_t>(data) % 16 == 0 && ld % 4 == 0;
}

bool tc_gemm_takes_slices(const TcOperand& a) {
  const index_t slice_k = a.op == Op::N ? a.cols : a.rows;
  return choose_wgmma() && !a.fp16 && slice_k % 64 == 0 && slice_k <= std::numeric_limits<int>::max() &&
         a.slice_stride % 4 == 0 && a.ld % 4 == 0 &&
         reinterpret_cast<std::uintptr_t>(a.data) % 16 == 0;
}

void tc_gemm(const TcOperand& a, const TcOperand& b, float alpha, float beta, MatrixView<float> c, TensorCore tc,
             ProductReport* report, TcWorkspace& ws, cudaStream_t s, TcStructure structure) {
  const index_t m = c.rows(), n = c.cols();
  const index_t k = (a.op == Op::N ? a.cols : a.rows) * a.slices;
  require(a.slices == 1 || tc_gemm_takes_slices(a), "A.slices", a.slices, "need the wgmma kernel and aligned slices");
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == 0.0f) {
    scale_kernel<<<256, 256, 0, s>>>(c, beta);
    RANDNLA_CUDA_LAUNCH("tc_gemm beta scale");
    if (report) report->a_scale_exponent = report->b_scale_exponent = 0;
    return;
  }
  static_assert(kPadRows % BM == 0 && kPadRows % BN == 0 && kPadK % BK == 0, "padding must cover the tiles");
  const index_t mp = round_up(m, kPadRows), np = round_up(n, kPadRows), kp = round_up(k, kPadK);
  const GemmArgs args{nullptr, nullptr, nullptr, nullptr, mp, np, kp, m, n, alpha, beta, c.data(), c.ld(), nullptr};
  if (choose_wgmma())
    tc_gemm_streamed(a, b, m, n, k, args, tc, report, ws, s, structure);
  else
    tc_gemm_packed(a, b, m, n, k, args, tc, report, ws, s);
}

}  // namespace cuda
}  // namespace randnla
