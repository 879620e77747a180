// The CUDA random generation family: Philox blocks drawn by a kernel, equal to the host's bit for bit.
#pragma once

#include "cuda/context/cuda_context.cuh"

namespace randnla {
namespace cuda {

class CudaRandom : public virtual RandomOps, public virtual CudaContext {
 public:
  void do_fill_random(const RandomDraw& draw, MatrixView<float> x) override {
    const DeviceScope scope(device_);
    cuda::launch_fill_random(draw, x, stream());
  }
  void do_fill_random(const RandomDraw& draw, MatrixView<fp16> x) override {
    const DeviceScope scope(device_);
    cuda::launch_fill_random(draw, x, stream());
  }
};

}  // namespace cuda
}  // namespace randnla
