// The sparse algorithms' operations on a CUDA device (cusparse_ops.cu).
#pragma once

#include <memory>

#include "randnla/sparse/sparse_ops.hpp"
#include "cuda/context/stream_memory.cuh"

namespace randnla {
namespace cuda {

/// cuSPARSE's SpMM and the CSR checks on the current device, queued on the stream of `memory`,
/// their workspaces taken from it.
std::shared_ptr<SparseOps> make_sparse_ops(std::shared_ptr<StreamMemory> memory);

}  // namespace cuda
}  // namespace randnla
