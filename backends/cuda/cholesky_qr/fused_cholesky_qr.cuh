// CholeskyQR of a tall-skinny FP32 matrix in place, fused on a CUDA device (fused_cholesky_qr.cu).
#pragma once

#include <cuda_runtime.h>

#include "randnla/matrix_view.hpp"

namespace randnla {
namespace cuda {

constexpr int kFusedCholeskyQrMaxColumns = 64;

/// FP64 elements of the workspace of fused_cholesky_qr for an m x n Y.
index_t fused_cholesky_qr_workspace(index_t m, index_t n);

/// CholeskyQrOps::fused_cholesky_qr on stream s (work: fused_cholesky_qr_workspace(m, n) doubles).
int fused_cholesky_qr(MatrixView<float> y, int passes, MatrixView<double> work, cudaStream_t s);

}  // namespace cuda
}  // namespace randnla
