// TSQR's own operations on the CUDA backend (listed by RANDNLA_ALGORITHMS): the FP32 tree's
// blocks and the Tensor Core variants.
#include "cuda/context/resources.cuh"
#include "cuda/tsqr/tsqr_ops.cuh"

namespace randnla {
namespace cuda {

void provide_tsqr_ops(const Resources& r, DeviceContext& c) {
  c.provide<TsqrOps>(make_tsqr_ops(r.device, r.stream()));
  c.provide<TensorCoreTsqrOps>(make_tensor_core_tsqr_ops(r.device, r.stream()));
}

}  // namespace cuda
}  // namespace randnla
