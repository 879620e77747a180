// Hopper (sm_90a) building blocks of the Tensor Core kernels: shared-memory addresses, mbarriers,
// the bulk tensor copy (TMA) and its tensor maps, wgmma descriptors, fences and the m64n128,
// m64n64 and m64n8 wgmma instructions on FP16 and TF32 register fragments. Device code exists only
// where the sm_90a features do (__CUDA_ARCH_FEAT_SM90_ALL); the tensor-map helpers are host code.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <string>

#include "cuda/context/cuda_check.hpp"
#include "randnla/matrix_view.hpp"

namespace randnla {
namespace cuda {
namespace tc {

/// The width of a 128-byte swizzle row: the K extent of a tile row in shared memory.
constexpr int kSliceBytes = 128;

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

/// Box (c0, c1, c2) of a 3-D tensor map into shared memory, completing on `bar`.
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(bar))
      : "memory");
}

/// The L2 policy of data read once, which should not push data read again out of L2: evict first.
__device__ __forceinline__ std::uint64_t evict_first_policy() {
  std::uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

/// tma_load (2-D) under an L2 `policy` (evict_first_policy).
__device__ __forceinline__ void tma_load_with_policy(void* dst, const CUtensorMap* map, std::uint64_t* bar,
                                                     std::uint64_t policy, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, "
      "%3}], [%4], %5;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar)), "l"(policy)
      : "memory");
}

/// tma_load (3-D) under an L2 `policy` (evict_first_policy).
__device__ __forceinline__ void tma_load_with_policy(void* dst, const CUtensorMap* map, std::uint64_t* bar,
                                                     std::uint64_t policy, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, "
      "%3, %4}], [%5], %6;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(bar)), "l"(policy)
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

// The operand lists of the wgmma wrappers: 64 (n128), 32 (n64) or 4 (n8) FP32 accumulators a thread, then
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
#define RANDNLA_WGMMA_D32                                                                               \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p"
#define RANDNLA_WGMMA_D32_OUT \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
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

/// The same for tiles 64 wide (m64n64: 32 accumulators a thread).
template <int SIGN>
__device__ __forceinline__ void wgmma(float (&d)[32], const std::uint32_t (&a)[4], std::uint64_t db, int scale_d, __half) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " RANDNLA_WGMMA_D32 ", %38, 1, 0;\n}\n"
               : RANDNLA_WGMMA_D32_OUT
               : RANDNLA_WGMMA_IN, "n"(SIGN));
}
template <int SIGN>
__device__ __forceinline__ void wgmma(float (&d)[32], const std::uint32_t (&a)[4], std::uint64_t db, int scale_d, float) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 " RANDNLA_WGMMA_D32 ", %38, 1;\n}\n"
               : RANDNLA_WGMMA_D32_OUT
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
/// d (64 x 32, FP32) = A (64 x 16, shared memory, descriptor da) B (16 x 32, shared memory,
/// descriptor db, both K-major) + (scale_d ? d : 0): 16 accumulators a thread.
__device__ __forceinline__ void wgmma_ss_n32(float (&d)[16], std::uint64_t da, std::uint64_t db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, "
               "%11, %12, %13, %14, %15}, %16, %17, p, 1, 1, 0, 0;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
               : "l"(da), "l"(db), "r"(scale_d));
}
/// Keeps the compiler from moving reads or writes of v across this point (a wgmma's accumulator
/// is written asynchronously: read it only after the wait).
__device__ __forceinline__ void pin(float& v) { asm volatile("" : "+f"(v)::"memory"); }

#undef RANDNLA_WGMMA_D64
#undef RANDNLA_WGMMA_D64_OUT
#undef RANDNLA_WGMMA_D32
#undef RANDNLA_WGMMA_D32_OUT
#undef RANDNLA_WGMMA_D4
#undef RANDNLA_WGMMA_D4_OUT
#undef RANDNLA_WGMMA_IN
#endif

inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
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

/// A tensor map of `rank` (2 or 3) dimensions, extents dims[0..rank) (dims[0] contiguous), the
/// others `strides` elements apart, boxes of 128 bytes x box_outer (x 1).
inline CUtensorMap tensor_map_of(const void* data, CUtensorMapDataType type, int elem_bytes, int rank,
                                 const index_t* dims, const index_t* strides, int box_outer) {
  CUtensorMap map{};
  if (data == nullptr) return map;
  cuuint64_t d[3], st[2];
  for (int i = 0; i < rank; ++i) d[i] = static_cast<cuuint64_t>(dims[i]);
  for (int i = 0; i + 1 < rank; ++i) st[i] = static_cast<cuuint64_t>(strides[i]) * elem_bytes;
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(kSliceBytes / elem_bytes), static_cast<cuuint32_t>(box_outer), 1};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  const CUresult r = tensor_map_encoder()(&map, type, rank, const_cast<void*>(data), d, st, box, elem_strides,
                                          CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                          CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw DeviceError("cuTensorMapEncodeTiled: CUresult " + std::to_string(static_cast<int>(r)));
  return map;
}

/// A 2-D tensor map (inner extent x outer extent, row stride in elements), boxes of 128 bytes x box_outer.
inline CUtensorMap tensor_map(const void* data, CUtensorMapDataType type, int elem_bytes, index_t inner, index_t outer,
                              index_t stride, int box_outer) {
  const index_t dims[2] = {inner, outer}, strides[1] = {stride};
  return tensor_map_of(data, type, elem_bytes, 2, dims, strides, box_outer);
}

/// A 3-D tensor map: `slices` matrices inner x outer (row stride `stride`), `slice_stride` apart.
inline CUtensorMap tensor_map(const void* data, CUtensorMapDataType type, int elem_bytes, index_t inner, index_t outer,
                              index_t stride, index_t slices, index_t slice_stride, int box_outer) {
  const index_t dims[3] = {inner, outer, slices}, strides[2] = {stride, slice_stride};
  return tensor_map_of(data, type, elem_bytes, 3, dims, strides, box_outer);
}


}  // namespace tc
}  // namespace cuda
}  // namespace randnla
