// The orthonormalisers' own operations on the CUDA backend (listed by RANDNLA_ALGORITHMS).
#include "cuda/context/resources.cuh"
#include "cuda/orthonormalize/cholesky_qr_ops.cuh"

namespace randnla {
namespace cuda {

void provide_orthonormalize_ops(const Resources& r, DeviceContext& c) {
  c.provide<CholeskyQrOps>(make_cholesky_qr_ops(r.device, r.stream(), r.blas, r.workspace));
}

}  // namespace cuda
}  // namespace randnla
