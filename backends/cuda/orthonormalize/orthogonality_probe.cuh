// ||W^T W - I||_F estimated from a few probe vectors, the products in FP64 (orthogonality_probe.cu).
#pragma once

#include <cuda_runtime.h>

#include "randnla/matrix_view.hpp"

namespace randnla {
namespace cuda {

/// The most probes a call takes, and the widest W on any device (the kernel's accumulators).
constexpr index_t kMaxOrthogonalityProbes = 8, kMaxProbeColumns = 1024;

/// The widest W the current device takes: kMaxProbeColumns, or less where two chunks of W's rows
/// do not fit a block's shared memory (768 columns on compute 8.0).
index_t orthogonality_probe_max_columns();

/// FP64 elements of the workspace queue_orthogonality_probe needs for an n-column W and s probes.
index_t orthogonality_probe_workspace(index_t n, index_t s);

/// *sum_of_squares (device or mapped memory) := ||W^T (W Omega) - Omega||_F^2, W m x n FP32 (read
/// once from memory; n <= orthogonality_probe_max_columns()), Omega n x s FP32 (s <=
/// kMaxOrthogonalityProbes), every product summed in FP64 (on the FP64 Tensor Cores); with a
/// non-empty `copy_to` (m x n FP32), W is copied there on the way.
/// Queued on `stream`; `work`: orthogonality_probe_workspace(m, n, s) doubles.
void queue_orthogonality_probe(MatrixView<const float> w, MatrixView<const float> omega, MatrixView<float> copy_to,
                               double* work, double* sum_of_squares, cudaStream_t stream);

}  // namespace cuda
}  // namespace randnla
