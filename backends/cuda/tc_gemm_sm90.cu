// The Hopper (sm_90a) kernel of the Tensor Core products with error correction (SHGEMM, its
// mirror and TCEC-SGEMM; tc_gemm.cu chooses it on compute 9.0 devices).
//
// One FP32 operand, the "streamed" one (the larger, or the only FP32 one), is read straight from
// the caller's matrix and split in registers, as in the SHGEMM paper; the other is packed
// beforehand (tc_gemm.cu) as K-contiguous hi (and lo) parts, or, FP16 with K contiguous already,
// read as it is. So the large operand crosses device memory once, and no pass over it precedes
// the product. One persistent block per SM computes tiles of 128 x BN of C in turn (TileOrder:
// bands of 8 row tiles for L2 reuse; a last round that would leave SMs idle is split along K in
// a second launch, TileRange), BN = 128, or 136 where that covers the packed operand's rows in
// fewer padded rows (an RSVD's l = k + p = 266 or 272 takes two 136-wide tiles instead of three
// 128-wide ones, 41% of them padding):
//  - a producer warp streams K slices of both operands into a ring of shared-memory stages with
//    the bulk tensor copy engine (TMA, 128-byte swizzle);
//  - two consumer warpgroups, each owning 64 rows of C: per slice, each thread loads its 32 (FP16)
//    or 16 (TF32) elements once from shared memory (addresses: a few per-thread offsets plus
//    compile-time immediates, the layout K- or M-major being a template parameter), scales its
//    two rows by powers of two 2^s that bring each row's largest element of the slice to
//    [2^14, 2^15) (FP16 only: no slice overflows or underflows FP16 for want of scaling), splits
//    them into hi + lo (lo not shifted: hi and lo share one accumulator) as wgmma register
//    fragments, and
//      fresh = sum over the slice of (lo_x hi_p [+ hi_x lo_p]) + hi_x hi_p   (wgmma; small terms
//              first)
//      main += fresh * 2^-s                                                  (FP32, round to nearest)
//    so the Tensor Core's truncation (round toward zero) never accumulates over K: its sums are
//    added outside it, each spanning two slices at most. Slices go in pairs: an even slice's
//    chain starts from zero (scale-d = 0), the odd one's continues from the even one's sum with
//    its products negated (step). A fresh sum of same-signed terms (all-positive inputs) is
//    truncated downwards every time, and those errors, all of one sign, would add up over K to
//    several times SGEMM's; the odd chain, running from the even sum back towards zero, errs the
//    other way for the pair, so a pair's errors largely cancel. Software-pipelined by one slice:
//    while the Tensor Core runs slice kb, the warpgroup loads and splits slice kb + 1 (two
//    fragment sets in alternate roles).
#include "tc_gemm_kernels.cuh"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>
#include <type_traits>

#include "cuda_check.hpp"
#include "kernel_config.cuh"

namespace randnla {
namespace cuda {
namespace {

constexpr int kBM = 128, kConsumers = 2, kThreads = 128 * (kConsumers + 1);
constexpr int kSliceBytes = 128;  // one swizzle row: the K extent of a packed tile row
// Stages fill 196 KiB, the count measured best with 128-wide tiles; where that holds fewer than 3,
// up to the H100's 227 KiB per block (less alignment slack and the barriers).
constexpr int kSmemPreferred = 200704, kSmemMax = 232448 - 2048;

/// BN = 128 + 8 * kExtraN8: the tile's columns, as one wgmma N = 128 and kExtraN8 (0 or 1) N = 8.
template <class T, bool P_LO, int BN>
struct Sm90Tile {
  static_assert(BN == 128 || BN == 136, "tiles are 128 or 128 + 8 columns wide");
  static constexpr int kExtraN8 = (BN - 128) / 8;
  static constexpr int kBK = kSliceBytes / static_cast<int>(sizeof(T));  // 64 (FP16) or 32 (TF32)
  static constexpr int kStreamBytes = kBM * kBK * 4;                     // the FP32 slice as loaded
  static constexpr int kPackedTile = BN * kSliceBytes;                   // a multiple of 1024 (8 rows)
  static constexpr int kStageBytes = kStreamBytes + kPackedTile * (P_LO ? 2 : 1);
  static constexpr int kStages =
      kSmemPreferred / kStageBytes >= 3 ? kSmemPreferred / kStageBytes : kSmemMax / kStageBytes;
  static constexpr int kSmemBytes = kStages * kStageBytes + 1024;  // + alignment slack
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(std::uint64_t* bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
  } while (!done);
}
/// Box (c0, c1) of a 2-D tensor map into shared memory, completing on `bar`.
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}

/// Shared-memory matrix descriptor of a K-major tile in 128-byte swizzle: rows of 128 bytes,
/// groups of 8 rows 1024 bytes apart. Adding 2 advances K by 32 bytes (one wgmma K step).
__device__ __forceinline__ std::uint64_t smem_desc(const void* tile) {
  return static_cast<std::uint64_t>((smem_addr(tile) & 0x3FFFF) >> 4) | (std::uint64_t{1} << 16) |
         (std::uint64_t{1024 >> 4} << 32) | (std::uint64_t{1} << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }

// The operand lists of the wgmma wrappers: 64 (n128) or 4 (n8) FP32 accumulators a thread, then
// the four A fragment registers, the B descriptor and scale-d.
#define RANDNLA_WGMMA_D64                                                                               \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, " \
  "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, "   \
  "%42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, "   \
  "%62, %63}, {%64, %65, %66, %67}, %68, p"
#define RANDNLA_WGMMA_D64_OUT                                                                                        \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),          \
      "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),           \
      "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),          \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),          \
      "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),          \
      "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),          \
      "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),          \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define RANDNLA_WGMMA_D4 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, p"
#define RANDNLA_WGMMA_D4_OUT "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
#define RANDNLA_WGMMA_IN "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d)

/// d (64 x 128, FP32) = A (64 x K step, register fragment) B (K step x 128, shared memory) + (scale_d ? d : 0).
template <int SIGN>
__device__ __forceinline__ void wgmma(float (&d)[64], const std::uint32_t (&a)[4], std::uint64_t db, int scale_d, __half) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " RANDNLA_WGMMA_D64 ", %70, 1, 0;\n}\n"
               : RANDNLA_WGMMA_D64_OUT
               : RANDNLA_WGMMA_IN, "n"(SIGN));
}
template <int SIGN>
__device__ __forceinline__ void wgmma(float (&d)[64], const std::uint32_t (&a)[4], std::uint64_t db, int scale_d, float) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " RANDNLA_WGMMA_D64 ", %70, 1;\n}\n"
               : RANDNLA_WGMMA_D64_OUT
               : RANDNLA_WGMMA_IN, "n"(SIGN));
}

/// The same for the 8 columns past the first 128 (m64n8: 4 accumulators a thread).
template <int SIGN>
__device__ __forceinline__ void wgmma_n8(float (&d)[4], const std::uint32_t (&a)[4], std::uint64_t db, int scale_d,
                                         __half) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 " RANDNLA_WGMMA_D4 ", %10, 1, 0;\n}\n"
               : RANDNLA_WGMMA_D4_OUT
               : RANDNLA_WGMMA_IN, "n"(SIGN));
}
template <int SIGN>
__device__ __forceinline__ void wgmma_n8(float (&d)[4], const std::uint32_t (&a)[4], std::uint64_t db, int scale_d,
                                         float) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 " RANDNLA_WGMMA_D4 ", %10, 1;\n}\n"
               : RANDNLA_WGMMA_D4_OUT
               : RANDNLA_WGMMA_IN, "n"(SIGN));
}
#undef RANDNLA_WGMMA_D64
#undef RANDNLA_WGMMA_D64_OUT
#undef RANDNLA_WGMMA_D4
#undef RANDNLA_WGMMA_D4_OUT
#undef RANDNLA_WGMMA_IN

/// 2^s brings a row's largest |x| (as bits) to [2^14, 2^15); zero rows stay unscaled.
__device__ __forceinline__ int scale_exponent(std::uint32_t max_bits) {
  const int top = static_cast<int>(max_bits >> 23);
  if (top == 0) return 0;  // zeros and FP32 subnormals only
  const int s = kFp16TargetExponent - (top - 127);
  return s > 110 ? 110 : (s < -110 ? -110 : s);
}

/// The element type's register fragments: how many elements a K step holds, which of the
/// thread's two rows an element is in, and the split of scaled values into hi + lo (lo not
/// shifted). The conversions to hi saturate: an infinite x gives the largest finite hi and an
/// infinite lo = x - hi, so hi * p + lo * p is the product IEEE arithmetic gives (Inf, or NaN
/// for Inf * 0), where an infinite hi would make lo = Inf - Inf a NaN.
template <class T>
struct Fragment;
template <>
struct Fragment<__half> {
  static constexpr int kElems = 8, kSteps = 4, kBK = 64;
  __device__ __forceinline__ static constexpr int row_half(int q) { return (q >> 1) & 1; }
  __device__ __forceinline__ static void split(const float (&y)[8], std::uint32_t (&hi)[4], std::uint32_t (&lo)[4]) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      std::uint32_t h;
      asm("cvt.rn.satfinite.f16x2.f32 %0, %1, %2;\n" : "=r"(h) : "f"(y[2 * j + 1]), "f"(y[2 * j]));
      const float2 hf = __half22float2(*reinterpret_cast<const __half2*>(&h));
      const __half2 l = __floats2half2_rn(__fsub_rn(y[2 * j], hf.x), __fsub_rn(y[2 * j + 1], hf.y));
      hi[j] = h;
      lo[j] = *reinterpret_cast<const std::uint32_t*>(&l);
    }
  }
};
template <>
struct Fragment<float> {
  static constexpr int kElems = 4, kSteps = 4, kBK = 32;
  __device__ __forceinline__ static constexpr int row_half(int q) { return q & 1; }
  __device__ __forceinline__ static void split(const float (&y)[4], std::uint32_t (&hi)[4], std::uint32_t (&lo)[4]) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      std::uint32_t h, l;
      asm("cvt.rna.satfinite.tf32.f32 %0, %1;\n" : "=r"(h) : "f"(y[q]));
      asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(l) : "f"(__fsub_rn(y[q], __uint_as_float(h))));
      hi[q] = h;
      lo[q] = l;
    }
  }
};

/// Where a consumer thread finds its A-fragment elements in the streamed slice (128 rows x kBK
/// FP32, as the copy engine left it: K-major source in boxes of 32 K values x 128 rows, M-major in
/// boxes of 32 rows x kBK K values, 128-byte swizzle), in wgmma's register layout (per warp as
/// mma.m16n8k16 and m16n8k8), g = lane / 4, t = lane % 4, rows relative to the warp's 16:
/// FP16: element q = 2 j + h of K step ks (register j): row g + 8 (j & 1), k = 16 ks + 2 t + 8 (j >> 1) + h.
/// TF32: element q = 0..3: row g + 8 (q & 1), k = 8 ks + t + 4 (q >> 1).
/// Each address is stage + lane_offset(sel(ks, q)) + offset(ks, q): the swizzle makes a few
/// lane-dependent offsets (computed once per thread), the rest is a compile-time immediate, so a
/// slice costs one shared-memory load per element (per two elements where they are adjacent) and
/// a handful of additions.
template <class T, bool K_MAJOR>
struct SliceLayout;
/// K-major: box ks / 2; chunk 4 (ks % 2) + 2 (q >> 2) + t / 2, XOR g (= row & 7 for both rows).
template <>
struct SliceLayout<__half, true> {
  static constexpr int kOffsets = 4;
  __device__ static std::uint32_t lane_offset(int sel, int wrow, int g, int t) {
    return (wrow + g) * 128 + 8 * (t & 1) + (((4 * (sel >> 1) + 2 * (sel & 1) + t / 2) ^ g) << 4);
  }
  __device__ __forceinline__ static constexpr int sel(int ks, int q) { return 2 * (ks % 2) + (q >> 2); }
  __device__ __forceinline__ static constexpr std::uint32_t offset(int ks, int q) {
    return (ks / 2) * (kBM * 128) + 1024 * ((q >> 1) & 1) + 4 * (q & 1);
  }
};
/// M-major: k row 16 ks + 8 (q >> 2) + (q & 1) + 2 t; chunk (wrow % 32) / 4 + g / 4 + 2 h, XOR 2 t + (q & 1).
template <>
struct SliceLayout<__half, false> {
  static constexpr int kOffsets = 4;
  __device__ static std::uint32_t lane_offset(int sel, int wrow, int g, int t) {
    return (wrow / 32) * (Fragment<__half>::kBK * 128) + 2 * t * 128 + 4 * (g % 4) +
           ((((wrow % 32) / 4 + g / 4 + 2 * (sel >> 1)) ^ (2 * t + (sel & 1))) << 4);
  }
  __device__ __forceinline__ static constexpr int sel(int, int q) { return 2 * ((q >> 1) & 1) + (q & 1); }
  __device__ __forceinline__ static constexpr std::uint32_t offset(int ks, int q) {
    return (16 * ks + 8 * (q >> 2) + (q & 1)) * 128;
  }
};
/// K-major: chunk 2 ks + (q >> 1), XOR g; within it word t.
template <>
struct SliceLayout<float, true> {
  static constexpr int kOffsets = 8;
  __device__ static std::uint32_t lane_offset(int sel, int wrow, int g, int t) {
    return (wrow + g) * 128 + 4 * t + ((sel ^ g) << 4);
  }
  __device__ __forceinline__ static constexpr int sel(int ks, int q) { return 2 * ks + (q >> 1); }
  __device__ __forceinline__ static constexpr std::uint32_t offset(int, int q) { return 1024 * (q & 1); }
};
/// M-major: k row 8 ks + 4 (q >> 1) + t; chunk (wrow % 32) / 4 + g / 4 + 2 h, XOR t + 4 (q >> 1).
template <>
struct SliceLayout<float, false> {
  static constexpr int kOffsets = 4;
  __device__ static std::uint32_t lane_offset(int sel, int wrow, int g, int t) {
    return (wrow / 32) * (Fragment<float>::kBK * 128) + t * 128 + 4 * (g % 4) +
           ((((wrow % 32) / 4 + g / 4 + 2 * (sel >> 1)) ^ (t + 4 * (sel & 1))) << 4);
  }
  __device__ __forceinline__ static constexpr int sel(int, int q) { return 2 * (q & 1) + (q >> 1); }
  __device__ __forceinline__ static constexpr std::uint32_t offset(int ks, int q) {
    return (8 * ks + 4 * (q >> 1)) * 128;
  }
};

/// Shared-memory loads kept in program order with the barrier waits (both are volatile asm).
__device__ __forceinline__ float lds(std::uint32_t addr) {
  float x;
  asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(x) : "r"(addr));
  return x;
}
__device__ __forceinline__ void lds2(std::uint32_t addr, float& x0, float& x1) {
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(x0), "=f"(x1) : "r"(addr));
}

/// The thread's slice elements, loaded once from shared memory.
template <class T, bool K_MAJOR>
__device__ __forceinline__ void load_slice(std::uint32_t stage, const std::uint32_t (&lane)[SliceLayout<T, K_MAJOR>::kOffsets],
                                           float (&y)[Fragment<T>::kSteps][Fragment<T>::kElems]) {
  using L = SliceLayout<T, K_MAJOR>;
  using Fr = Fragment<T>;
  std::uint32_t base[L::kOffsets];
#pragma unroll
  for (int i = 0; i < L::kOffsets; ++i) base[i] = stage + lane[i];
#pragma unroll
  for (int ks = 0; ks < Fr::kSteps; ++ks)
#pragma unroll
    for (int q = 0; q < Fr::kElems; ++q) {
      const std::uint32_t a = base[L::sel(ks, q)] + L::offset(ks, q);
      constexpr bool kPairs = sizeof(T) == 2 && K_MAJOR;  // q, q + 1 adjacent for even q
      if (kPairs && q % 2 == 0)
        lds2(a, y[ks][q], y[ks][q + 1]);
      else if (!kPairs)
        y[ks][q] = lds(a);
    }
}
#endif

/// Rows of the packed operand P (C's columns, or its rows when C is computed transposed).
__host__ __device__ inline index_t packed_rows_of(const StreamGemmArgs& args) {
  return args.transpose_c ? args.c_args.m : args.c_args.n;
}

/// The tile grid in the order blocks take it: bands of kBandRows row tiles, each band column
/// by column, so that the tiles in flight at once (one per SM) share a few row panels of X and a
/// few column panels of P in L2 instead of all of P's panels (the whole 8192 x 8192 P, 128 MB in
/// FP16, would otherwise cross device memory with every wave of 132 tiles).
template <int BN>
struct TileOrder {
  static constexpr int kBandRows = 8;
  int row_tiles, col_tiles;
  /// Tiles of kBM rows of X by BN rows of P (C's tiles, or its transpose's).
  __host__ __device__ explicit TileOrder(const StreamGemmArgs& args)
      : row_tiles(static_cast<int>((args.rows + kBM - 1) / kBM)),
        col_tiles(static_cast<int>((packed_rows_of(args) + BN - 1) / BN)) {}
  __host__ __device__ index_t tiles() const { return index_t{row_tiles} * col_tiles; }
  /// (row tile, column tile) of the tile taken t-th.
  __device__ int2 operator()(int t) const {
    const int band = t / (kBandRows * col_tiles), first = band * kBandRows;
    const int rows = min(kBandRows, row_tiles - first), in_band = t - band * kBandRows * col_tiles;
    return make_int2(first + in_band % rows, in_band / rows);
  }
};

/// A product's last `tail` tiles of the TileOrder (fewer than the blocks) split along K into
/// `parts` (tail 0, parts 1: none). The launch of whole tiles (SPLIT false) computes the others:
/// block b takes tiles b, b + gridDim.x, ... The split launch (SPLIT true) runs tail x parts
/// blocks: block b computes part b % parts, a range of K slices, of tail tile b / parts, and the
/// part that arrives last adds the parts' sums in part order (a fixed order whatever the timing).
struct TileRange {
  int tail, parts;
};

/// Scratch of a split launch: per block and consumer, 68 partial sums x 128 threads, element-major
/// (a warp's stores coalesce), then an arrival counter per tile and consumer (zeroed before it).
constexpr int kPartialElems = 68;
__host__ __device__ constexpr std::size_t partial_floats(int blocks) {
  return static_cast<std::size_t>(blocks) * kConsumers * kPartialElems * 128;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/// A split tile's part (TileRange): this consumer's sums into the block's scratch slot; true for
/// the part that arrives last, whose acc and x then hold the parts' sums added in part order
/// (each part fences its stores before counting its arrival, so the last sees them all).
template <bool EXTRA>
__device__ bool sum_of_parts(void* scratch, const TileRange& range, int tid, int cw, float (&acc)[64], float (&x)[4]) {
  float* partials = static_cast<float*>(scratch);
  int* arrivals = reinterpret_cast<int*>(partials + partial_floats(gridDim.x));
  auto slot = [&](int block, int e) {
    return partials + partial_floats(block) + (static_cast<std::size_t>(cw) * kPartialElems + e) * 128 + tid;
  };
  const int block = blockIdx.x, first = block - block % range.parts;
#pragma unroll
  for (int e = 0; e < 64; ++e) *slot(block, e) = acc[e];
  if (EXTRA) {
#pragma unroll
    for (int e = 0; e < 4; ++e) *slot(block, 64 + e) = x[e];
  }
  __threadfence();
  __shared__ int last[kConsumers];
  asm volatile("bar.sync %0, 128;\n" ::"r"(1 + cw) : "memory");
  if (tid == 0) last[cw] = atomicAdd(&arrivals[(block / range.parts) * kConsumers + cw], 1) == range.parts - 1;
  asm volatile("bar.sync %0, 128;\n" ::"r"(1 + cw) : "memory");
  if (!last[cw]) return false;
  __threadfence();
#pragma unroll
  for (int e = 0; e < 64; ++e) acc[e] = 0.0f;
#pragma unroll
  for (int e = 0; e < 4; ++e) x[e] = 0.0f;
#pragma unroll 1
  for (int part = first; part < first + range.parts; ++part) {
#pragma unroll
    for (int e = 0; e < 64; ++e) acc[e] += __ldcg(slot(part, e));
    if (EXTRA) {
#pragma unroll
      for (int e = 0; e < 4; ++e) x[e] += __ldcg(slot(part, 64 + e));
    }
  }
  return true;
}
#endif

/// X(r, :) P(c, :)^T over all of K in FP32 (P as its hi + lo parts), summed in order as SGEMM
/// would, so that Inf and NaN come out as SGEMM gives them; 0 outside X's rows or P's.
template <class T>
__device__ __forceinline__ float fp32_dot(const StreamGemmArgs& args, index_t r, index_t c) {
  if (r >= args.rows || c >= packed_rows_of(args)) return 0.0f;
  const T* hi = static_cast<const T*>(args.p_hi) + c * args.p_ld;
  const T* lo = args.p_lo ? static_cast<const T*>(args.p_lo) + c * args.p_ld : nullptr;
  float sum = 0.0f;
  for (index_t q = 0; q < args.k; ++q) {
    const float x = args.x_k_major ? args.x[q + r * args.x_ld] : args.x[r + q * args.x_ld];
    const float p = static_cast<float>(hi[q]) + (lo ? static_cast<float>(lo[q]) : 0.0f);
    sum = __fmaf_rn(x, p, sum);
  }
  return sum;
}

template <class T, bool P_LO, int BN, bool K_MAJOR, bool SPLIT>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_gemm_kernel(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_p_hi,
                      const __grid_constant__ CUtensorMap map_p_lo, StreamGemmArgs args, TileRange range) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Tl = Sm90Tile<T, P_LO, BN>;
  using Fr = Fragment<T>;
  constexpr int kBK = Tl::kBK, kPackedTile = Tl::kPackedTile;
  constexpr bool kFp16 = sizeof(T) == 2;
  static_assert(Fr::kBK == kBK, "the fragments cover one slice");
  if (!plan_chooses<T>(args.c_args.plan)) return;
  extern __shared__ unsigned char smem_raw[];
  // 128-byte swizzled tiles must start on 1024-byte boundaries.
  unsigned char* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  __shared__ std::uint64_t loaded[Tl::kStages], consumed[Tl::kStages];
  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
  // Persistent (TileRange): the copy engine fills the next tile's stages while the consumers
  // store the last tile. The block's slices of a tile: kb_begin, ..., kb_begin + nk - 1.
  const TileOrder<BN> order(args);
  const int all_slices = static_cast<int>(args.kp / kBK), part = SPLIT ? blockIdx.x % range.parts : 0;
  const int kb_begin = SPLIT ? part * all_slices / range.parts : 0;
  const int nk = SPLIT ? (part + 1) * all_slices / range.parts - kb_begin : all_slices;
  const int tiles = static_cast<int>(order.tiles());
  const int first_tile = SPLIT ? tiles - range.tail + static_cast<int>(blockIdx.x) / range.parts : blockIdx.x;
  const int end_tile = SPLIT ? first_tile + 1 : tiles - range.tail;
  if (threadIdx.x == 0) {
    for (int s = 0; s < Tl::kStages; ++s) {
      mbar_init(&loaded[s], 1);
      mbar_init(&consumed[s], kConsumers);
    }
  }
  __syncthreads();

  // Register budget: 168 per thread at launch; the producer gives 128 x 128, the consumers take
  // 256 x 64 of them (setmaxnreg.inc waits for registers the block has released, forever if too few).
  if (wg == 0) {  // producer
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid != 0) return;
    int it = 0;  // slices loaded so far, over all of this block's tiles: the stage and its phase
    for (int tile = first_tile; tile < end_tile; tile += gridDim.x) {
      const int2 rc = order(tile);
      const int row0 = rc.x * kBM, col0 = rc.y * BN;
      for (int kb = kb_begin; kb < kb_begin + nk; ++kb, ++it) {
        const int s = it % Tl::kStages;
        mbar_wait(&consumed[s], (it / Tl::kStages) & 1);
        mbar_expect_tx(&loaded[s], Tl::kStreamBytes + kPackedTile * (P_LO ? 2 : 1));
        unsigned char* stage = smem + s * Tl::kStageBytes;
        const int k0 = kb * kBK;
        if (K_MAJOR) {
          for (int h = 0; h < kBK / 32; ++h) tma_load(stage + h * (kBM * 128), &map_x, &loaded[s], k0 + 32 * h, row0);
        } else {
          for (int q = 0; q < kBM / 32; ++q) tma_load(stage + q * (kBK * 128), &map_x, &loaded[s], row0 + 32 * q, k0);
        }
        tma_load(stage + Tl::kStreamBytes, &map_p_hi, &loaded[s], k0, col0);
        if (P_LO) tma_load(stage + Tl::kStreamBytes + kPackedTile, &map_p_lo, &loaded[s], k0, col0);
      }
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int cw = wg - 1;
  if (tid == 0)
    for (int s = 0; s < Tl::kStages; ++s) mbar_arrive(&consumed[s]);  // every stage starts free
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int wrow = cw * 64 + warp * 16;  // this warp's 16 rows of the tile; the thread's: wrow + g, + 8
  using L = SliceLayout<T, K_MAJOR>;
  std::uint32_t lane_offsets[L::kOffsets];
#pragma unroll
  for (int i = 0; i < L::kOffsets; ++i) lane_offsets[i] = L::lane_offset(i, wrow, g, t);
  float main_acc[64], fresh[64], main_x[4], fresh_x[4];  // *_x: the extra 8 columns (BN = 136)
#pragma unroll
  for (int e = 0; e < 64; ++e) fresh[e] = 0.0f;
#pragma unroll
  for (int e = 0; e < 4; ++e) fresh_x[e] = 0.0f;
  int it0 = 0;  // slices consumed before this tile (the producer's count): stage and phase of slice kb
  // One slice's A fragments and row unscales, ready for the Tensor Core.
  struct Split {
    std::uint32_t hi[Fr::kSteps][4], lo[Fr::kSteps][4];
    float unscale[2];
  };
  auto stage_of = [&](int kb) { return smem + ((it0 + kb) % Tl::kStages) * Tl::kStageBytes; };
  auto prepare = [&](int kb, Split& f) {
    mbar_wait(&loaded[(it0 + kb) % Tl::kStages], ((it0 + kb) / Tl::kStages) & 1);
    float y[Fr::kSteps][Fr::kElems];
    load_slice<T, K_MAJOR>(smem_addr(stage_of(kb)), lane_offsets, y);
    // FP16: scales of the thread's two rows, from their largest elements over the slice (the
    // four threads of a row hold a quarter of it each). fmaxf passes NaN by; a NaN row's
    // products are NaN whatever its scale.
    float scale[2] = {1.0f, 1.0f};
    f.unscale[0] = f.unscale[1] = 1.0f;
    if (kFp16) {
      float top[2] = {0.0f, 0.0f};
#pragma unroll
      for (int ks = 0; ks < Fr::kSteps; ++ks)
#pragma unroll
        for (int q = 0; q < Fr::kElems; ++q) top[Fr::row_half(q)] = fmaxf(top[Fr::row_half(q)], fabsf(y[ks][q]));
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        top[h] = fmaxf(top[h], __shfl_xor_sync(0xffffffffu, top[h], 1));
        top[h] = fmaxf(top[h], __shfl_xor_sync(0xffffffffu, top[h], 2));
        const int e = scale_exponent(__float_as_uint(top[h]));
        scale[h] = exp2i(e), f.unscale[h] = exp2i(-e);
      }
#pragma unroll
      for (int ks = 0; ks < Fr::kSteps; ++ks)
#pragma unroll
        for (int q = 0; q < Fr::kElems; ++q) y[ks][q] = __fmul_rn(y[ks][q], scale[Fr::row_half(q)]);
    }
#pragma unroll
    for (int ks = 0; ks < Fr::kSteps; ++ks) Fr::split(y[ks], f.hi[ks], f.lo[ks]);
  };
  // Slice kb on the Tensor Core from `cur` while this warpgroup splits slice kb + 1 into `next`;
  // then the slice's sum is added outside the Tensor Core. Slices go in pairs (file comment): the
  // even one's chain starts from zero, giving u = s_even; the odd one's continues from u with its
  // products negated, giving v = u - s_odd; main gets u (w_even + w_odd) - v w_odd
  // = s_even w_even + s_odd w_odd (w: the rows' unscales).
  auto step = [&](auto odd, int kb, const Split& cur, Split& next) {
    constexpr bool kOdd = decltype(odd)::value;
    constexpr int kSign = kOdd ? -1 : 1;
    const std::uint64_t p_hi = smem_desc(stage_of(kb) + Tl::kStreamBytes), p_lo = p_hi + (kPackedTile >> 4);
    constexpr std::uint64_t kRow128 = (128 * kSliceBytes) >> 4;  // the descriptor of packed row 128
    auto mma = [&](const std::uint32_t(&x)[4], std::uint64_t p, int scale_d) {
      wgmma<kSign>(fresh, x, p, scale_d, T());
      if (Tl::kExtraN8) wgmma_n8<kSign>(fresh_x, x, p + kRow128, scale_d, T());
    };
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < Fr::kSteps; ++ks) mma(cur.lo[ks], p_hi + 2 * ks, kOdd ? 1 : ks);
    if (P_LO) {
#pragma unroll
      for (int ks = 0; ks < Fr::kSteps; ++ks) mma(cur.hi[ks], p_lo + 2 * ks, 1);
    }
#pragma unroll
    for (int ks = 0; ks < Fr::kSteps; ++ks) mma(cur.hi[ks], p_hi + 2 * ks, 1);
    wgmma_commit();
    if (kb + 1 < nk) prepare(kb + 1, next);
    // Reading an accumulator while any wgmma is in flight serialises every wgmma (ptxas C7514).
    wgmma_wait_all();
    if (tid == 0) mbar_arrive(&consumed[(it0 + kb) % Tl::kStages]);
    float w[2];
#pragma unroll
    for (int h = 0; h < 2; ++h)
      w[h] = kOdd ? -cur.unscale[h] : cur.unscale[h] + (kb + 1 < nk ? next.unscale[h] : 0.0f);
#pragma unroll
    for (int e = 0; e < 64; ++e) main_acc[e] = __fmaf_rn(fresh[e], w[(e >> 1) & 1], main_acc[e]);
    if (Tl::kExtraN8) {
#pragma unroll
      for (int e = 0; e < 4; ++e) main_x[e] = __fmaf_rn(fresh_x[e], w[(e >> 1) & 1], main_x[e]);
    }
  };
  Split even, odd;  // two sets of fragments, in alternate roles: unrolled by two, no copies
  const float unscale_p = plan_unscale<T>(args.c_args.plan);
  for (int tile = first_tile; tile < end_tile; tile += gridDim.x, it0 += nk) {
#pragma unroll
    for (int e = 0; e < 64; ++e) main_acc[e] = 0.0f;
#pragma unroll
    for (int e = 0; e < 4; ++e) main_x[e] = 0.0f;
    if (nk > 0) prepare(0, even);
    for (int kb = 0; kb < nk; kb += 2) {
      step(std::false_type(), kb, even, odd);
      if (kb + 1 < nk) step(std::true_type(), kb + 1, odd, even);
    }

    if constexpr (SPLIT) {
      if (!sum_of_parts<Tl::kExtraN8 != 0>(args.scratch, range, tid, cw, main_acc, main_x)) continue;
    }
    const int2 rc = order(tile);
    const index_t row0 = index_t{rc.x} * kBM + wrow + g, col0 = index_t{rc.y} * BN + 2 * t;
    // wgmma's accumulator layout: element e of a thread is row +8*((e>>1)&1), column 8*(e>>2) + (e&1).
    auto row = [&](int e) { return row0 + 8 * ((e >> 1) & 1); };
    auto col = [&](int e, index_t col_offset) { return col0 + col_offset + 8 * (e >> 2) + (e & 1); };
    auto store = [&](int e, index_t col_offset, float v) {
      if (args.transpose_c)
        store_c(args.c_args, unscale_p, col(e, col_offset), row(e), v, 0.0f);
      else
        store_c(args.c_args, unscale_p, row(e), col(e, col_offset), v, 0.0f);
    };
    // A pair's u (w_even + w_odd) - v w_odd is Inf - Inf where u is infinite, and can overflow where
    // the sum does not: elements that end non-finite (bit e of the masks) are summed again as
    // SGEMM would, one at a time, after the others are stored.
    auto non_finite = [](float v) { return !(fabsf(v) <= FLT_MAX); };
    std::uint64_t mask = 0;
    unsigned mask_x = 0;
#pragma unroll
    for (int e = 0; e < 64; ++e) mask |= std::uint64_t{non_finite(main_acc[e])} << e;
#pragma unroll
    for (int e = 0; e < 4; ++e) mask_x |= unsigned{Tl::kExtraN8 && non_finite(main_x[e])} << e;
#pragma unroll
    for (int e = 0; e < 64; ++e)
      if (!((mask >> e) & 1)) store(e, 0, main_acc[e]);
    if (Tl::kExtraN8) {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (!((mask_x >> e) & 1)) store(e, 128, main_x[e]);
    }
#pragma unroll 1
    for (int e = 0; e < 68 && (mask | mask_x); ++e) {
      const bool extra = e >= 64;
      if (extra ? (mask_x >> (e - 64)) & 1 : (mask >> e) & 1) {
        const int f = e % 64;
        const index_t offset = extra ? 128 : 0;
        store(f, offset, fp32_dot<T>(args, row(f), col(f, offset)));
      }
    }
  }
#endif
}

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    RANDNLA_CUDA(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || p == nullptr) throw DeviceError("cuTensorMapEncodeTiled: not found in the driver");
    fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  });
  return fn;
}

/// The current device's SM count (the persistent grid: the kernel's shared memory allows one block per SM).
int multiprocessors() {
  int device = 0, count = 0;
  RANDNLA_CUDA(cudaGetDevice(&device));
  RANDNLA_CUDA(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

/// A 2-D tensor map (inner extent x outer extent, row stride in elements), boxes of 128 bytes x box_outer.
CUtensorMap tensor_map(const void* data, CUtensorMapDataType type, int elem_bytes, index_t inner, index_t outer,
                       index_t stride, int box_outer) {
  CUtensorMap map{};
  if (data == nullptr) return map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(inner), static_cast<cuuint64_t>(outer)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(stride) * elem_bytes};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(kSliceBytes / elem_bytes), static_cast<cuuint32_t>(box_outer)};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = tensor_map_encoder()(&map, type, 2, const_cast<void*>(data), dims, strides, box, elem_strides,
                                          CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                          CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw DeviceError("cuTensorMapEncodeTiled: CUresult " + std::to_string(static_cast<int>(r)));
  return map;
}


/// The most parts a tail tile is split into (RANDNLA_TC_SPLIT_PARTS overrides; 1: no split):
/// about sqrt(2 nk), which balances a part's slices against the last part's reading of all
/// partial sums if a slice of Tensor Core work takes about twice as long as reading one part's
/// sums from L2 (an estimate, not measured; only the 8192^3 gain of the whole split was).
int max_parts(int nk) {
  if (const char* env = std::getenv("RANDNLA_TC_SPLIT_PARTS")) {
    const int forced = std::atoi(env);
    require(forced >= 1, "RANDNLA_TC_SPLIT_PARTS", std::string(env), "must be an integer >= 1");
    return forced;
  }
  return std::max(2, static_cast<int>(std::lround(std::sqrt(2.0 * nk))));
}

/// How a product's tiles are shared out (TileRange): rounds of one whole tile per SM, then the
/// last `tail` tiles (fewer than the SMs) each split along K into `parts`, so that the last round
/// occupies tail x parts SMs instead of tail (4 of 132 at 8192^3: 3% of the product's time).
/// Split only where each tail tile gets at least two parts.
struct Schedule {
  int sms, tiles, tail, parts;
};
Schedule schedule(index_t tiles, int nk) {
  require(tiles <= std::numeric_limits<int>::max(), "tiles", tiles, "exceed the kernel's int tile index");
  const int sms = multiprocessors(), t = static_cast<int>(tiles), tail = t % sms;
  const int parts = tail == 0 ? 1 : std::min({sms / tail, nk, max_parts(nk)});
  return parts < 2 ? Schedule{sms, t, 0, 1} : Schedule{sms, t, tail, parts};
}

template <class T, bool P_LO, int BN, bool K_MAJOR, bool SPLIT>
void launch_range(const CUtensorMap& x, const CUtensorMap& p_hi, const CUtensorMap& p_lo, const StreamGemmArgs& args,
                  TileRange range, int blocks, cudaStream_t s) {
  using Tl = Sm90Tile<T, P_LO, BN>;
  auto kernel = wgmma_gemm_kernel<T, P_LO, BN, K_MAJOR, SPLIT>;
  allow_dynamic_shared_memory(kernel, static_cast<int>(Tl::kSmemBytes));
  kernel<<<blocks, kThreads, Tl::kSmemBytes, s>>>(x, p_hi, p_lo, args, range);
  RANDNLA_CUDA_LAUNCH("tc_gemm wgmma kernel");
}

template <class T, bool P_LO, int BN, bool K_MAJOR>
void launch(const StreamGemmArgs& args, cudaStream_t s) {
  using Tl = Sm90Tile<T, P_LO, BN>;
  const CUtensorMap x = K_MAJOR
                            ? tensor_map(args.x, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, args.k, args.rows, args.x_ld, kBM)
                            : tensor_map(args.x, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, args.rows, args.k, args.x_ld, Tl::kBK);
  const auto type = sizeof(T) == 2 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  const CUtensorMap p_hi = tensor_map(args.p_hi, type, sizeof(T), args.p_k, args.p_rows_p, args.p_ld, BN);
  const CUtensorMap p_lo = tensor_map(args.p_lo, type, sizeof(T), args.p_k, args.p_rows_p, args.p_ld, BN);
  const Schedule sc = schedule(TileOrder<BN>(args).tiles(), static_cast<int>(args.kp / Tl::kBK));
  const TileRange range{sc.tail, sc.parts};
  if (sc.tiles > sc.tail)
    launch_range<T, P_LO, BN, K_MAJOR, false>(x, p_hi, p_lo, args, range, std::min(sc.tiles - sc.tail, sc.sms), s);
  if (sc.tail == 0) return;
  const int blocks = sc.tail * sc.parts;
  int* arrivals = reinterpret_cast<int*>(static_cast<float*>(args.scratch) + partial_floats(blocks));
  RANDNLA_CUDA(cudaMemsetAsync(arrivals, 0, sizeof(int) * kConsumers * sc.tail, s));
  launch_range<T, P_LO, BN, K_MAJOR, true>(x, p_hi, p_lo, args, range, blocks, s);
}

template <int BN, bool K_MAJOR>
void launch_tiles(const StreamGemmArgs& args, bool fp16, cudaStream_t s) {
  const bool p_lo = args.p_lo != nullptr;
  if (fp16) return p_lo ? launch<__half, true, BN, K_MAJOR>(args, s) : launch<__half, false, BN, K_MAJOR>(args, s);
  p_lo ? launch<float, true, BN, K_MAJOR>(args, s) : launch<float, false, BN, K_MAJOR>(args, s);
}

template <int BN>
void launch_layouts(const StreamGemmArgs& args, bool fp16, cudaStream_t s) {
  args.x_k_major ? launch_tiles<BN, true>(args, fp16, s) : launch_tiles<BN, false>(args, fp16, s);
}

/// C's tiles are 136 wide where that covers the packed operand's rows in fewer padded rows, else 128.
int tile_width(const StreamGemmArgs& args) {
  const index_t p = packed_rows_of(args);
  return ((p + 135) / 136) * 136 < ((p + 127) / 128) * 128 ? 136 : 128;
}

}  // namespace

bool wgmma_gemm_available(int device) {
  int major = 0, minor = 0;
  RANDNLA_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  RANDNLA_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major == 9 && minor == 0;
}

std::size_t wgmma_gemm_scratch_bytes(const StreamGemmArgs& args) {
  const index_t tiles = tile_width(args) == 136 ? TileOrder<136>(args).tiles() : TileOrder<128>(args).tiles();
  // Either path may run: FP16 slices (kBK 64) or TF32 ones (kBK 32).
  const Schedule fp16 = schedule(tiles, static_cast<int>(args.kp / Sm90Tile<__half, false, 128>::kBK));
  const Schedule tf32 = schedule(tiles, static_cast<int>(args.kp / Sm90Tile<float, false, 128>::kBK));
  if (fp16.tail == 0 && tf32.tail == 0) return 0;
  // A split launch has at most one block per SM.
  return partial_floats(fp16.sms) * sizeof(float) + sizeof(int) * kConsumers * fp16.sms;
}

void launch_wgmma_gemm(const StreamGemmArgs& args, bool fp16, cudaStream_t s) {
  static_assert(kPadRows % 128 == 0 && kPadK % (kSliceBytes / 2) == 0, "packing must cover the tiles");
  tile_width(args) == 136 ? launch_layouts<136>(args, fp16, s) : launch_layouts<128>(args, fp16, s);
}

}  // namespace cuda
}  // namespace randnla
