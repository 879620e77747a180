// The FP64 Tensor Cores' warp-level product (mma.sync .f64): exact products of FP64 operands, FP64
// sums; the building block of the CholeskyQR kernels' Gram sums and probes (cholesky_qr/).
#pragma once

#include <cuda_runtime.h>

namespace randnla {
namespace cuda {
namespace tc {

/// d += a b on the FP64 Tensor Cores, a 16 x 8 by 8 x 8 product. With g = lane / 4, t = lane % 4:
/// a = a[g][t], a[g + 8][t], a[g][t + 4], a[g + 8][t + 4]; b = b[t][g], b[t + 4][g]; d = d[g][2 t],
/// d[g][2 t + 1], d[g + 8][2 t], d[g + 8][2 t + 1]. On sm_90, one PTX mma.m16n8k8 .f64 (twice the
/// rate of m8n8k4 on the H100); before, four m8n8k4, whose fragments are these quarters.
__device__ __forceinline__ void mma_f64(double (&d)[4], const double (&a)[4], const double (&b)[2]) {
#if __CUDA_ARCH__ >= 900
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
#pragma unroll
  for (int half = 0; half < 2; ++half)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                   : "+d"(d[2 * half]), "+d"(d[2 * half + 1])
                   : "d"(a[half + 2 * h]), "d"(b[h]));
#endif
}

}  // namespace tc
}  // namespace cuda
}  // namespace randnla
