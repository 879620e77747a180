// The TSQR tree's own operations on a CUDA device (tsqr_ops.cu).
#pragma once

#include <cuda_runtime.h>

#include <memory>

#include "randnla/tsqr/tensor_core_tsqr_ops.hpp"
#include "randnla/tsqr/tsqr_ops.hpp"

namespace randnla {
namespace cuda {

/// The TSQR operations on `device`, queued on `stream`: every block of a level factored by one
/// thread block in shared memory (n <= 128), the products Q_i S_i by one kernel.
std::shared_ptr<TsqrOps> make_tsqr_ops(int device, cudaStream_t stream);

/// The Tensor Core variants' blocks (fp16-refined, tf32, fp16) on `device`, queued on `stream`: one
/// warp per block of up to 32 rows and 16 columns, the reflectors applied by wmma products.
std::shared_ptr<TensorCoreTsqrOps> make_tensor_core_tsqr_ops(int device, cudaStream_t stream);

}  // namespace cuda
}  // namespace randnla
