// The CUDA conversion family: one kernel per conversion; to FP16 with the exponent histogram in the same pass.
#pragma once

#include "cuda/context/cuda_context.cuh"

namespace randnla {
namespace cuda {

class CudaConversions : public virtual ConversionOps, public virtual CudaContext {
 public:
  void do_convert(MatrixView<const float> s, MatrixView<double> d) override {
    const DeviceScope scope(device_);
    cuda::launch_convert(s, d, stream());
  }
  void do_convert(MatrixView<const double> s, MatrixView<float> d) override {
    const DeviceScope scope(device_);
    cuda::launch_convert(s, d, stream());
  }
  void do_convert(MatrixView<const float> s, MatrixView<fp16> d) override {
    const DeviceScope scope(device_);
    cuda::launch_convert(s, d, stream());
  }
  void do_convert(MatrixView<const fp16> s, MatrixView<float> d) override {
    const DeviceScope scope(device_);
    cuda::launch_convert(s, d, stream());
  }
  ExponentHistogram do_convert_measured(MatrixView<const float> src, MatrixView<fp16> dst, float scale) override {
    return histogram_of([&](cuda::HistogramTarget t) { cuda::launch_convert_measured(src, dst, scale, t, stream()); });
  }
};

}  // namespace cuda
}  // namespace randnla
