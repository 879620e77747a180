// The sparse sign projection's operation on a CUDA device (sparse_projection_ops.cu).
#pragma once

#include <cuda_runtime.h>

#include <memory>

#include "randnla/sparse_projection/sparse_projection_ops.hpp"
#include "cuda/context/stream_memory.cuh"

namespace randnla {
namespace cuda {

/// The sparse projection kernels on `device`, queued on the stream of `memory`, their workspaces
/// taken from it.
std::shared_ptr<SparseProjectionOps> make_sparse_projection_ops(int device, std::shared_ptr<StreamMemory> memory);

}  // namespace cuda
}  // namespace randnla
