// The CUDA element-wise family: one kernel launch each (cuda/elementwise.cuh).
#pragma once

#include "cuda/context/cuda_context.cuh"

namespace randnla {
namespace cuda {

class CudaElementwise : public virtual ElementwiseOps, public virtual CudaContext {
 public:
  void do_transpose(MatrixView<const float> s, MatrixView<float> d) override {
    const DeviceScope scope(device_);
    cuda::launch_transpose(s, d, stream());
  }
  void do_add(float alpha, MatrixView<const float> x, float beta, MatrixView<float> y) override {
    const DeviceScope scope(device_);
    cuda::launch_add(alpha, x, beta, y, stream());
  }
  void do_scale(float alpha, MatrixView<float> x) override {
    const DeviceScope scope(device_);
    cuda::launch_scale(alpha, x, stream());
  }
  void do_scale(double alpha, MatrixView<double> x) override {
    const DeviceScope scope(device_);
    cuda::launch_scale(alpha, x, stream());
  }
  void do_scale(MatrixView<const float> s, MatrixView<float> x, bool by_row) override {
    const DeviceScope scope(device_);
    cuda::launch_scale(s.data(), x, by_row, stream());
  }
  void do_scale(MatrixView<const double> s, MatrixView<double> x, bool by_row) override {
    const DeviceScope scope(device_);
    cuda::launch_scale(s.data(), x, by_row, stream());
  }
  void do_add_to_diagonal(MatrixView<double> g, double shift) override {
    const DeviceScope scope(device_);
    cuda::launch_add_to_diagonal(g, shift, stream());
  }
};

}  // namespace cuda
}  // namespace randnla
