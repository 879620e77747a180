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
// 128-wide ones, 41% of them padding), or 64 where it has at most 64 rows:
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
// The building blocks it is made of live in tc/: the sm_90a primitives (mbarrier, TMA, wgmma),
// the split fragments and slice layouts (the mainloop's loads and splits), the tile scheduler and
// the split-K epilogue.
#include "tc_gemm_kernels.cuh"

#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "cuda/context/cuda_check.hpp"
#include "cuda/context/kernel_config.cuh"
#include "cuda/tc/sm90_primitives.cuh"
#include "cuda/tc/split_epilogue.cuh"
#include "cuda/tc/split_fragments.cuh"
#include "cuda/tc/tile_scheduler.cuh"

namespace randnla {
namespace cuda {
namespace {

using namespace tc;  // NOLINT: this file is the tc blocks' main user

constexpr int kConsumers = 2, kThreads = 128 * (kConsumers + 1);
// Stages fill 196 KiB, the count measured best with 128-wide tiles; where that holds fewer than 3,
// up to the H100's 227 KiB per block (less alignment slack and the barriers).
constexpr int kSmemPreferred = 200704, kSmemMax = 232448 - 2048;

/// BN = kMainN + 8 * kExtraN8: the tile's columns, as one wgmma N = kMainN (64 or 128, kAcc = kMainN / 2
/// accumulators a thread) and kExtraN8 (0 or 1) N = 8.
template <class T, bool P_LO, int BN>
struct Sm90Tile {
  static_assert(BN == 64 || BN == 128 || BN == 136, "tiles are 64, 128 or 128 + 8 columns wide");
  static constexpr int kMainN = BN == 64 ? 64 : 128, kAcc = kMainN / 2;
  static constexpr int kExtraN8 = (BN - kMainN) / 8;
  static constexpr int kBK = kSliceBytes / static_cast<int>(sizeof(T));  // 64 (FP16) or 32 (TF32)
  static constexpr int kStreamBytes = kBM * kBK * 4;                     // the FP32 slice as loaded
  static constexpr int kPackedTile = BN * kSliceBytes;                   // a multiple of 1024 (8 rows)
  static constexpr int kStageBytes = kStreamBytes + kPackedTile * (P_LO ? 2 : 1);
  static constexpr int kStages =
      kSmemPreferred / kStageBytes >= 3 ? kSmemPreferred / kStageBytes : kSmemMax / kStageBytes;
  static constexpr int kSmemBytes = kStages * kStageBytes + 1024;  // + alignment slack
};

/// Rows of the packed operand P (C's columns, or its rows when C is computed transposed).
__host__ __device__ inline index_t packed_rows_of(const StreamGemmArgs& args) {
  return args.transpose_c ? args.c_args.m : args.c_args.n;
}

/// The kernel's tile order: kBM rows of X by BN rows of P (C's tiles, or its transpose's).
template <int BN>
__host__ __device__ TileOrder<kBM, BN> tile_order(const StreamGemmArgs& args) {
  return TileOrder<kBM, BN>(args.rows, packed_rows_of(args), args.lower_tiles);
}

template <class T, bool P_LO, int BN, bool K_MAJOR, bool SPLIT, bool SLICED_X>
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
  const TileOrder<kBM, BN> order = tile_order<BN>(args);
  const int all_slices = static_cast<int>(args.kp / kBK), part = SPLIT ? blockIdx.x % range.parts : 0;
  const int kb_begin = SPLIT ? part * all_slices / range.parts : 0;
  const int nk = SPLIT ? (part + 1) * all_slices / range.parts - kb_begin : all_slices;
  const int tiles = static_cast<int>(order.tiles());
  // A whole tile's slices: all, or where P is upper triangular (p_upper: zero past row j of its
  // column j), those up to the tile's last column.
  auto slices_of = [&](int2 rc) {
    return SPLIT || !args.p_upper ? nk : min(nk, ((rc.y + 1) * BN + kBK - 1) / kBK);
  };
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
    // In the split launch of a product one tile wide (a sketch: few row tiles, each split along
    // K), each slice of X is read by one block, once: evicting it first keeps P, which every row
    // tile reads, in L2 (a Tucker sketch's Omega, 128 MB at 2^20 x 64, otherwise crossed device
    // memory again for most row tiles). Every other launch has the plain copy and no test in its
    // loop: an evict-normal policy made the TCEC products 10-16% slower, a test of the policy in
    // the loop 2-3% (bench_gemm.md).
    const bool read_once = SPLIT && order.col_tiles == 1;
    const std::uint64_t once = evict_first_policy();
    auto load_x = [&](void* dst, std::uint64_t* bar, auto... coords) {
      if (read_once)
        tma_load_with_policy(dst, &map_x, bar, once, coords...);
      else
        tma_load(dst, &map_x, bar, coords...);
    };
    int it = 0;  // slices loaded so far, over all of this block's tiles: the stage and its phase
    for (int tile = first_tile; tile < end_tile; tile += gridDim.x) {
      const int2 rc = order(tile);
      const int row0 = rc.x * kBM, col0 = rc.y * BN, tile_nk = slices_of(rc);
      for (int kb = kb_begin; kb < kb_begin + tile_nk; ++kb, ++it) {
        const int s = it % Tl::kStages;
        mbar_wait(&consumed[s], (it / Tl::kStages) & 1);
        mbar_expect_tx(&loaded[s], Tl::kStreamBytes + kPackedTile * (P_LO ? 2 : 1));
        unsigned char* stage = smem + s * Tl::kStageBytes;
        const int k0 = kb * kBK;
        if constexpr (!SLICED_X) {  // X one matrix: a 2-D map
          if (K_MAJOR) {
            for (int h = 0; h < kBK / 32; ++h) load_x(stage + h * (kBM * 128), &loaded[s], k0 + 32 * h, row0);
          } else {
            for (int q = 0; q < kBM / 32; ++q) load_x(stage + q * (kBK * 128), &loaded[s], row0 + 32 * q, k0);
          }
        } else {  // X's K in slices, a 3-D map: a kernel slice never crosses one (x_slice_k a multiple of kBK)
          // 32-bit division: a 64-bit one is a called routine, whose mere presence made every
          // split product about 10% slower (bench_gemm.md).
          const int slice_k = static_cast<int>(args.x_slice_k), slice = k0 / slice_k, kx = k0 - slice * slice_k;
          if (K_MAJOR) {
            for (int h = 0; h < kBK / 32; ++h)
              load_x(stage + h * (kBM * 128), &loaded[s], kx + 32 * h, row0, slice);
          } else {
            for (int q = 0; q < kBM / 32; ++q)
              load_x(stage + q * (kBK * 128), &loaded[s], row0 + 32 * q, kx, slice);
          }
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
  constexpr int kAcc = Tl::kAcc;
  float main_acc[kAcc], fresh[kAcc], main_x[4], fresh_x[4];  // *_x: the extra 8 columns (BN = 136)
#pragma unroll
  for (int e = 0; e < kAcc; ++e) fresh[e] = 0.0f;
#pragma unroll
  for (int e = 0; e < 4; ++e) fresh_x[e] = 0.0f;
  int it0 = 0;  // slices consumed before this tile (the producer's count): stage and phase of slice kb
  int tile_nk = nk;  // this tile's slices (slices_of)
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
    if (kb + 1 < tile_nk) prepare(kb + 1, next);
    // Reading an accumulator while any wgmma is in flight serialises every wgmma (ptxas C7514).
    wgmma_wait_all();
    if (tid == 0) mbar_arrive(&consumed[(it0 + kb) % Tl::kStages]);
    float w[2];
#pragma unroll
    for (int h = 0; h < 2; ++h)
      w[h] = kOdd ? -cur.unscale[h] : cur.unscale[h] + (kb + 1 < tile_nk ? next.unscale[h] : 0.0f);
#pragma unroll
    for (int e = 0; e < kAcc; ++e) main_acc[e] = __fmaf_rn(fresh[e], w[(e >> 1) & 1], main_acc[e]);
    if (Tl::kExtraN8) {
#pragma unroll
      for (int e = 0; e < 4; ++e) main_x[e] = __fmaf_rn(fresh_x[e], w[(e >> 1) & 1], main_x[e]);
    }
  };
  Split even, odd;  // two sets of fragments, in alternate roles: unrolled by two, no copies
  const float unscale_p = plan_unscale<T>(args.c_args.plan);
  for (int tile = first_tile; tile < end_tile; tile += gridDim.x, it0 += tile_nk) {
    tile_nk = slices_of(order(tile));
#pragma unroll
    for (int e = 0; e < kAcc; ++e) main_acc[e] = 0.0f;
#pragma unroll
    for (int e = 0; e < 4; ++e) main_x[e] = 0.0f;
    if (tile_nk > 0) prepare(0, even);
    for (int kb = 0; kb < tile_nk; kb += 2) {
      step(std::false_type(), kb, even, odd);
      if (kb + 1 < tile_nk) step(std::true_type(), kb + 1, odd, even);
    }

    if constexpr (SPLIT) {
      if (!sum_of_parts<kConsumers, Tl::kExtraN8 != 0>(args.scratch, range.parts, tid, cw, main_acc, main_x)) continue;
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
    // the sum does not: elements that end non-finite are left as they are for the non-finite
    // epilogue (tc/nonfinite_epilogue.cuh), which gives them SGEMM's value.
    auto non_finite = [](float v) { return !(fabsf(v) <= FLT_MAX); };
    std::uint64_t mask = 0;
    unsigned mask_x = 0;
#pragma unroll
    for (int e = 0; e < kAcc; ++e) mask |= std::uint64_t{non_finite(main_acc[e])} << e;
#pragma unroll
    for (int e = 0; e < 4; ++e) mask_x |= unsigned{Tl::kExtraN8 && non_finite(main_x[e])} << e;
#pragma unroll
    for (int e = 0; e < kAcc; ++e)
      if (!((mask >> e) & 1)) store(e, 0, main_acc[e]);
    if (Tl::kExtraN8) {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (!((mask_x >> e) & 1)) store(e, 128, main_x[e]);
    }
    auto leave = [&](int e, index_t col_offset) {
      const index_t r = row(e), c = col(e, col_offset);
      const index_t i = args.transpose_c ? c : r, j = args.transpose_c ? r : c;
      if (i < args.c_args.m && j < args.c_args.n) leave_for_epilogue(args.nonfinite, i, j, args.c_args.m);
    };
    // Rare, kept out of the unrolled path: a rolled walk over the elements left.
#pragma unroll 1
    for (std::uint64_t rest = mask; rest; rest &= rest - 1) leave(__ffsll(static_cast<long long>(rest)) - 1, 0);
#pragma unroll 1
    for (unsigned rest = mask_x; rest; rest &= rest - 1) leave(__ffs(rest) - 1, 128);
    if (mask | mask_x) raise_flag(args.nonfinite);
  }
#endif
}

/// X's K in slices: a 3-D map and the SLICED_X kernel, a kernel of its own (a test of the map's
/// kind in every slice made the products about 2% slower; ncu, bench_gemm.md).
bool x_in_slices(const StreamGemmArgs& args) { return args.x_slice_k != args.k; }

template <class T, bool P_LO, int BN, bool K_MAJOR, bool SPLIT>
void launch_range(const CUtensorMap& x, const CUtensorMap& p_hi, const CUtensorMap& p_lo, const StreamGemmArgs& args,
                  TileRange range, int blocks, cudaStream_t s) {
  using Tl = Sm90Tile<T, P_LO, BN>;
  auto kernel = x_in_slices(args) ? wgmma_gemm_kernel<T, P_LO, BN, K_MAJOR, SPLIT, true>
                                  : wgmma_gemm_kernel<T, P_LO, BN, K_MAJOR, SPLIT, false>;
  allow_dynamic_shared_memory(kernel, static_cast<int>(Tl::kSmemBytes));
  kernel<<<blocks, kThreads, Tl::kSmemBytes, s>>>(x, p_hi, p_lo, args, range);
  RANDNLA_CUDA_LAUNCH("tc_gemm wgmma kernel");
}

template <class T, bool P_LO, int BN, bool K_MAJOR>
void launch(const StreamGemmArgs& args, cudaStream_t s) {
  using Tl = Sm90Tile<T, P_LO, BN>;
  // 3-D where X's K runs over slices; a 2-D map otherwise (whose boxes past K are plainly out of
  // bounds: a 3-D map's boxes past its last slice raised illegal-instruction faults).
  const index_t slices = args.k / args.x_slice_k;
  const index_t inner = K_MAJOR ? args.x_slice_k : args.rows, outer = K_MAJOR ? args.rows : args.x_slice_k;
  const int box = K_MAJOR ? kBM : Tl::kBK;
  const CUtensorMap x =
      x_in_slices(args)
          ? tensor_map(args.x, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, inner, outer, args.x_ld, slices, args.x_slice_stride, box)
          : tensor_map(args.x, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, inner, outer, args.x_ld, box);
  const auto type = sizeof(T) == 2 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  const CUtensorMap p_hi = tensor_map(args.p_hi, type, sizeof(T), args.p_k, args.p_rows_p, args.p_ld, BN);
  const CUtensorMap p_lo = tensor_map(args.p_lo, type, sizeof(T), args.p_k, args.p_rows_p, args.p_ld, BN);
  const Schedule sc = schedule(tile_order<BN>(args).tiles(), static_cast<int>(args.kp / Tl::kBK), multiprocessors());
  const TileRange range{sc.tail, sc.parts};
  if (sc.tiles > sc.tail)
    launch_range<T, P_LO, BN, K_MAJOR, false>(x, p_hi, p_lo, args, range, std::min(sc.tiles - sc.tail, sc.sms), s);
  if (sc.tail == 0) return;
  const int blocks = sc.tail * sc.parts;
  int* arrivals = reinterpret_cast<int*>(static_cast<float*>(args.scratch) + partial_floats<kConsumers>(blocks));
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

/// C's tiles are 64 wide where the packed operand has at most 64 rows (half the Tensor Core work of
/// a 128-wide tile, and more stages in flight: a sketch of rank 64 or less), 136 where that covers
/// its rows in fewer padded rows, else 128.
int tile_width(const StreamGemmArgs& args) {
  const index_t p = packed_rows_of(args);
  if (p <= 64) return 64;
  return ((p + 135) / 136) * 136 < ((p + 127) / 128) * 128 ? 136 : 128;
}

index_t tile_count(const StreamGemmArgs& args) {
  switch (tile_width(args)) {
    case 64: return tile_order<64>(args).tiles();
    case 136: return tile_order<136>(args).tiles();
    default: return tile_order<128>(args).tiles();
  }
}

}  // namespace

std::size_t wgmma_gemm_scratch_bytes(const StreamGemmArgs& args) {
  const index_t tiles = tile_count(args);
  const int sms = multiprocessors();
  // Either path may run: FP16 slices (kBK 64) or TF32 ones (kBK 32).
  const Schedule fp16 = schedule(tiles, static_cast<int>(args.kp / Sm90Tile<__half, false, 128>::kBK), sms);
  const Schedule tf32 = schedule(tiles, static_cast<int>(args.kp / Sm90Tile<float, false, 128>::kBK), sms);
  if (fp16.tail == 0 && tf32.tail == 0) return 0;
  // A split launch has at most one block per SM.
  return partial_floats<kConsumers>(fp16.sms) * sizeof(float) + sizeof(int) * kConsumers * fp16.sms;
}

void launch_wgmma_gemm(const StreamGemmArgs& args, bool fp16, cudaStream_t s) {
  static_assert(kPadRows % 128 == 0 && kPadK % (kSliceBytes / 2) == 0, "packing must cover the tiles");
  switch (tile_width(args)) {
    case 64: return launch_layouts<64>(args, fp16, s);
    case 136: return launch_layouts<136>(args, fp16, s);
    default: return launch_layouts<128>(args, fp16, s);
  }
}

}  // namespace cuda
}  // namespace randnla