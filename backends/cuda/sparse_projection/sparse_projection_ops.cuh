// The sparse sign projection's operation on a CUDA device (sparse_projection_ops.cu).
#pragma once

#include <cuda_runtime.h>

#include <memory>

#include "sparse_projection/sparse_projection_ops.hpp"

namespace randnla {
namespace cuda {

/// The sparse projection kernels on `device`, queued on `stream`.
std::shared_ptr<SparseProjectionOps> make_sparse_projection_ops(int device, cudaStream_t stream);

}  // namespace cuda
}  // namespace randnla
