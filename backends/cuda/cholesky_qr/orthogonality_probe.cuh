// ||W^T W - I||_F estimated from a few probe vectors, the products in FP64 (orthogonality_probe.cu).
#pragma once

#include <cuda_runtime.h>

#include "randnla/matrix_view.hpp"

namespace randnla {
namespace cuda {

/// The most probes a call takes, and the widest W (its probes' products stay in shared memory).
constexpr index_t kMaxOrthogonalityProbes = 8, kMaxProbeColumns = 1024;

/// FP64 elements of the workspace queue_orthogonality_probe needs for an n-column W and s probes.
index_t orthogonality_probe_workspace(index_t n, index_t s);

/// *sum_of_squares (device or mapped memory) := ||W^T (W Omega) - Omega||_F^2, W m x n FP32 (read
/// once from memory), Omega n x s FP64 (s <= kMaxOrthogonalityProbes, n <= kMaxProbeColumns), every product
/// summed in FP64; with a non-empty `copy_to` (m x n FP32), W is copied there by the second read.
/// Queued on `stream`; `work`: orthogonality_probe_workspace(m, n, s) doubles.
void queue_orthogonality_probe(MatrixView<const float> w, MatrixView<const double> omega, MatrixView<float> copy_to,
                               double* work, double* sum_of_squares, cudaStream_t stream);

}  // namespace cuda
}  // namespace randnla
