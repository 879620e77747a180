// The inverse Cholesky factor R^{-1} of a small SPD matrix in one cooperative kernel
// (inverse_cholesky.cu): what cuSOLVER's potrf and cuBLAS's trsm take 0.62 ms for at n = 512.
#pragma once

#include <cuda_runtime.h>

#include "randnla/matrix_view.hpp"

namespace randnla {
namespace cuda {

/// The largest n the kernel takes.
constexpr index_t kInverseCholeskyMaxOrder = 1024;

/// FP64 elements of the workspace queue_inverse_cholesky_factor needs for an n x n G.
index_t inverse_cholesky_workspace(index_t n);

/// rinv := R^{-1}, G = R^T R (G n x n FP64, its lower triangle read; rinv n x n FP64, its strict
/// lower triangle zeroed), 1 <= n <= kInverseCholeskyMaxOrder, queued on `stream`; *status (device
/// memory) := 0, or j + 1 where the j-th pivot is not positive and finite (rinv then undefined).
/// `work`: inverse_cholesky_workspace(n) doubles.
void queue_inverse_cholesky_factor(MatrixView<const double> g, MatrixView<double> rinv, double* work, int* status,
                                   cudaStream_t stream);

}  // namespace cuda
}  // namespace randnla
