// The library's own eigensolver for small dense symmetric FP64 matrices (n up to a few hundred,
// the Gram matrices of the RSVD's small SVD): tridiagonalisation in one thread-block cluster
// (tridiagonalize_sm90.cu), divide and conquer on the tridiagonal matrix (tridiagonal_dc.cu).
// cuSOLVER's syevd spends 2.5 ms on a 272 x 272 matrix, nearly all in latency-bound kernels; this
// takes 1.8 ms on the H100 (perf_tests/results/bench_dense_parts.md).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "randnla/backend.hpp"

namespace randnla {
namespace cuda {

/// Largest order launch_tridiagonalize takes on `device` (its rows of G must fit in a cluster's
/// shared memory); 0 where the device is not compute capability 9.0.
int tridiagonalize_max_order(int device);

/// G = Q T Q^T for symmetric G (n x n, device, FP64, upper triangle read), 3 <= n <=
/// tridiagonalize_max_order. T = 2^exponent tridiag(e, d, e): d (n) and e (n - 1) come scaled by
/// 2^-exponent, so that max |g_ij| 2^-exponent lies in [1/2, 1). Q = H_0 ... H_{n-3}, H_i = I -
/// tau_i v_i v_i^T: v_i is column i of V (n x (n - 2), ld ldv; zero above row i + 1, 1 there; a
/// zero column where tau_i = 0), tau (n - 2). *status := 1 if G has a non-finite entry (it is left
/// 0 otherwise).
void launch_tridiagonalize(const double* g, index_t ldg, int n, double* d, double* e, double* v, index_t ldv,
                           double* tau, int* exponent, int* status, cudaStream_t s);

/// A second stream, with its own cuBLAS handle (a handle's workspace serves one stream at a time),
/// on which symmetric_eig_dc forms Q while the main stream runs the divide and conquer; `reduced`
/// and `formed` order the two.
struct SideStream {
  cudaStream_t stream;
  cublasHandle_t blas;
  cudaEvent_t reduced, formed;
};

/// Device memory symmetric_eig_dc needs for order n.
std::size_t symmetric_eig_dc_workspace_bytes(int n);

/// Eigenvalues (descending, into w) and eigenvectors (into g's columns) of symmetric G, n x n on
/// the device, 3 <= n <= tridiagonalize_max_order: the tridiagonalisation, then on `side` the
/// formation of Q from its reflectors (Q = I - V T V^T with T^{-1} = diag(1/tau) + striu(V^T V):
/// Joffrain, Low, Quintana-Orti, van de Geijn & Van Zee, ACM TOMS 32 (2006), the UT transform)
/// while the divide and conquer runs on s, then Z := Q Z by DGEMM. Synchronises once, to read
/// the status; returns false, with G untouched, if G has a non-finite entry or an eigenvector came
/// out non-finite (the caller then uses cuSOLVER).
bool symmetric_eig_dc(MatrixView<double> g, MatrixView<double> w, void* workspace, cublasHandle_t blas,
                      cudaStream_t s, const SideStream& side);

}  // namespace cuda
}  // namespace randnla
