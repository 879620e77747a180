// The sparse sign projection on the Tensor Cores, for dense-ish S (tensor_core_tiles.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>

#include "randnla/matrix_view.hpp"
#include "randnla/sparse_projection/sparse_sign_operator.hpp"
#include "cuda/context/stream_memory.cuh"

namespace randnla {
namespace cuda {

/// Y := S A (k x b, FP32) with tiles of S drawn into shared memory and multiplied on the Tensor
/// Cores against A split as hi + lo FP16 (each column of A scaled by a power of two into FP16's
/// range first): FP32-level accuracy. A is D x b (`columns`) or b x D. Queued on the stream of
/// `memory`; the parts take a workspace from it of 4 D ceil(b / 32) 32 bytes (A's size for b a
/// multiple of 32).
void project_on_tensor_cores(int device, const SparseSignOperator& s, MatrixView<const float> a, bool columns,
                             MatrixView<float> y, const std::shared_ptr<StreamMemory>& memory);

/// Y := the sum of `parts` k x b partial sums (part z's (j, c) at partial[z k b + j + c k]), added in
/// order so that Y does not depend on the timing of the kernels that wrote them; queued on `stream`.
void add_partial_sums(const float* partial, std::int64_t parts, index_t k, MatrixView<float> y, cudaStream_t stream);

}  // namespace cuda
}  // namespace randnla
