// CholeskyQR's own operations on a CUDA device (cholesky_qr_ops.cu).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <memory>

#include "cuda/products/tc_gemm.cuh"
#include "randnla/orthonormalize/cholesky_qr_ops.hpp"

namespace randnla {
namespace cuda {

/// The CholeskyQR operations on `device`, queued on `stream` (`blas`: a cuBLAS handle on it; `products`:
/// the backend's Tensor Core product workspace, which must outlive them).
std::shared_ptr<CholeskyQrOps> make_cholesky_qr_ops(int device, cudaStream_t stream, cublasHandle_t blas,
                                                    TcWorkspace& products);

}  // namespace cuda
}  // namespace randnla
