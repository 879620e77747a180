// The CUDA backend: its context and one file per operation family (the folders beside this file),
// and the operations of the algorithms listed in RANDNLA_ALGORITHMS (provide_algorithm_ops).
#include "cuda_backend.hpp"

#include "cuda/context/cuda_context.cuh"
#include "cuda/conversions/cuda_conversions.cuh"
#include "cuda/elementwise/cuda_elementwise.cuh"
#include "cuda/factorizations/cuda_factorizations.cuh"
#include "cuda/products/cuda_products.cuh"
#include "cuda/random/cuda_random.cuh"
#include "cuda/reductions/cuda_reductions.cuh"
#include "cuda_algorithm_ops.cuh"  // generated from RANDNLA_ALGORITHMS

namespace randnla {

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver / no device" error
    return 0;
  }
  return n;
}


namespace {

class CudaBackend final : public Backend,
                          public cuda::CudaConversions,
                          public cuda::CudaElementwise,
                          public cuda::CudaReductions,
                          public cuda::CudaRandom,
                          public cuda::CudaProducts,
                          public cuda::CudaFactorizations {
 public:
  CudaBackend(int device, cudaStream_t stream) : cuda::CudaContext(device, stream) {
    cuda::provide_algorithm_ops(resources(), *this);
  }
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(int device, void* stream) {
  return std::make_unique<CudaBackend>(device, static_cast<cudaStream_t>(stream));
}

}  // namespace randnla
