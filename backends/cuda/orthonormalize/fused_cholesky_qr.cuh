// CholeskyQR of a tall-skinny FP32 matrix in place, fused on a CUDA device (fused_cholesky_qr.cu).
#pragma once

#include <cuda_runtime.h>

#include "randnla/matrix_view.hpp"

namespace randnla {
namespace cuda {

constexpr int kFusedCholeskyQrMaxColumns = 64;

/// The fused CholeskyQR's verdict, kept on the device while it runs: a breakdown, the Cholesky
/// passes run, and the last pass that runs (a Y found orthonormal ends the sequence before the
/// next pass, one with orthogonal columns after a pass that only scales them).
struct FusedCholeskyQrStatus {
  int breakdown, passes, last_pass;
};

/// FP64 elements of the workspace of fused_cholesky_qr for an m x n Y.
index_t fused_cholesky_qr_workspace(index_t m, index_t n);

/// CholeskyQrOps::queue_fused_cholesky_qr on stream s (work: fused_cholesky_qr_workspace(m, n)
/// doubles): the last kernel writes the verdict to `verdict` (page-locked host memory mapped for
/// the device: no copy of its own between the kernels), and `published` is recorded after it.
void queue_fused_cholesky_qr(MatrixView<float> y, int passes, MatrixView<double> work, FusedCholeskyQrStatus* verdict,
                             cudaEvent_t published, cudaStream_t s);

}  // namespace cuda
}  // namespace randnla
