// The very sparse projection's own operations on the CUDA backend (listed by RANDNLA_ALGORITHMS).
#include "cuda/context/resources.cuh"
#include "cuda/sparse_projection/sparse_projection_ops.cuh"

namespace randnla {
namespace cuda {

void provide_sparse_projection_ops(const Resources& r, DeviceContext& c) {
  c.provide<SparseProjectionOps>(make_sparse_projection_ops(r.device, r.memory));
}

}  // namespace cuda
}  // namespace randnla
