// Y = A Omega for a CSR A and the sparse sign test matrix Omega on a CUDA device (sparse_sign_sketch.cu).
#pragma once

#include <cuda_runtime.h>

#include "randnla/matrix_view.hpp"
#include "randnla/sparse/csr_view.hpp"
#include "randnla/sparse/sparse_sign_sketch.hpp"

namespace randnla {
namespace cuda {

/// SparseOps::sparse_sign_sketch queued on stream s (A and Y on the current device). Throws
/// UnsupportedConfiguration where one row of Y (l floats) exceeds the device's shared memory.
void queue_sparse_sign_sketch(const CsrView& a, const SparseSignSketch& omega, MatrixView<float> y, cudaStream_t s);

}  // namespace cuda
}  // namespace randnla
