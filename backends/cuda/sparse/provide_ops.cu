// The sparse algorithms' operations on the CUDA backend (listed by RANDNLA_ALGORITHMS).
#include "cuda/context/resources.cuh"
#include "cuda/sparse/cusparse_ops.cuh"

namespace randnla {
namespace cuda {

void provide_sparse_ops(const Resources& r, DeviceContext& c) { c.provide<SparseOps>(make_sparse_ops(r.memory)); }

}  // namespace cuda
}  // namespace randnla
