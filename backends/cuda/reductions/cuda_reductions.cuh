// The CUDA reduction family: histograms published into page-locked memory, sums of squares in FP64.
#pragma once

#include <cmath>

#include "cuda/context/cuda_context.cuh"

namespace randnla {
namespace cuda {

class CudaReductions : public virtual ReductionOps, public virtual CudaContext {
 public:
  ExponentHistogram do_exponent_histogram(MatrixView<const float> x) override {
    return histogram_of([&](cuda::HistogramTarget t) { cuda::launch_histogram(x, t, stream()); });
  }
  double do_frobenius_norm(MatrixView<const float> x) override {
    const DeviceScope scope(device_);
    return sum_squares_root(x);
  }
  double do_frobenius_norm(MatrixView<const double> x) override {
    const DeviceScope scope(device_);
    return sum_squares_root(x);
  }

 private:
  template <class T>
  double sum_squares_root(MatrixView<const T> x) {
    auto* d = static_cast<double*>(scratch(sizeof(double)));
    RANDNLA_CUDA(cudaMemsetAsync(d, 0, sizeof(double), stream()));
    cuda::launch_sum_squares(x, d, stream());
    double h = 0;
    read_back(d, &h, 1);
    return std::sqrt(h);
  }
};

}  // namespace cuda
}  // namespace randnla
