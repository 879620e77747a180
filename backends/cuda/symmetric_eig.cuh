// The library's own eigensolver for small dense symmetric FP64 matrices (n up to a few hundred,
// the Gram matrices of the RSVD's small SVD): tridiagonalisation in one thread-block cluster
// (tridiagonalize_sm90.cu), divide and conquer on the tridiagonal matrix (tridiagonal_dc.cu).
// cuSOLVER's syevd spends 2.5 ms on a 272 x 272 matrix, nearly all in latency-bound kernels; this
// takes 2.1 ms on the H100 (perf_tests/results/2026-11-22_h100_dc_eig).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "randnla/backend.hpp"

namespace randnla {
namespace cuda {

/// Largest order launch_tridiagonalize takes on `device` (its rows of G and Q must fit in a
/// cluster's shared memory); 0 where the device is not compute capability 9.0.
int tridiagonalize_max_order(int device);

/// G = Q T Q^T for symmetric G (n x n, device, FP64, upper triangle read), 3 <= n <=
/// tridiagonalize_max_order. T = 2^exponent tridiag(e, d, e): d (n) and e (n - 1) come scaled by
/// 2^-exponent, so that max |g_ij| 2^-exponent lies in [1/2, 1). Q: n x n, ld ldq. *status := 1 if
/// G has a non-finite entry (it is left 0 otherwise).
void launch_tridiagonalize(const double* g, index_t ldg, int n, double* d, double* e, double* q, index_t ldq,
                           int* exponent, int* status, cudaStream_t s);

/// Device memory symmetric_eig_dc needs for order n.
std::size_t symmetric_eig_dc_workspace_bytes(int n);

/// Eigenvalues (descending, into w) and eigenvectors (into g's columns) of symmetric G, n x n on
/// the device, 3 <= n <= tridiagonalize_max_order: the two steps above, then Z := Q Z by DGEMM.
/// Synchronises once, to read the status; returns false, with G untouched, if G has a non-finite
/// entry or an eigenvector came out non-finite (the caller then uses cuSOLVER).
bool symmetric_eig_dc(MatrixView<double> g, MatrixView<double> w, void* workspace, cublasHandle_t blas,
                      cudaStream_t s);

}  // namespace cuda
}  // namespace randnla
