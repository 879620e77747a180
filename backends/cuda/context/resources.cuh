// What the CUDA backend hands the operations of single algorithms when it provides them
// (backends/cuda/<algorithm>/provide_ops.cu, called by the generated provide_algorithm_ops).
#pragma once

#include <cublas_v2.h>

#include <memory>

#include "stream_memory.cuh"
#include "cuda/products/tc_gemm.cuh"
#include "randnla/context.hpp"

namespace randnla {
namespace cuda {

struct Resources {
  int device;
  std::shared_ptr<StreamMemory> memory;  ///< the backend's stream and its stream-ordered pool
  cublasHandle_t blas;                   ///< on that stream
  TcWorkspace& workspace;                ///< the Tensor Core products' workspace, the backend's
  cudaStream_t stream() const { return memory->get(); }
};

}  // namespace cuda
}  // namespace randnla
