// CholeskyQR's own operations on a CUDA device (cholesky_qr_ops.cu).
#pragma once

#include <cuda_runtime.h>

#include <memory>

#include "orthonormalize/cholesky_qr_ops.hpp"

namespace randnla {
namespace cuda {

/// The CholeskyQR operations on `device`, queued on `stream`.
std::shared_ptr<CholeskyQrOps> make_cholesky_qr_ops(int device, cudaStream_t stream);

}  // namespace cuda
}  // namespace randnla
