// Launcher of the one-block kernel that inverts a small SPD matrix's Cholesky factor (cholesky_inverse.cu).
#pragma once

#include <cuda_runtime.h>

#include "randnla/backend.hpp"

namespace randnla {
namespace cuda {

/// The largest order the one-block kernel takes (larger ones go through cuSOLVER).
index_t inverse_cholesky_max_order();

/// rinv (n x n) := R^{-1}, R^T R = G (n x n SPD, FP64, lower triangle read, G overwritten by
/// workspace values); *info (device) := 0, or the 1-based column of the first pivot that is not
/// positive and finite (rinv and G are then left part-way). One thread block; n <= the maximum.
void launch_inverse_cholesky(MatrixView<double> g, MatrixView<double> rinv, int* info, cudaStream_t s);

}  // namespace cuda
}  // namespace randnla
