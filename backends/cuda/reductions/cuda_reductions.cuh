// The CUDA reduction family: histograms published into page-locked memory, sums of squares in FP64.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

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

  std::vector<float> do_signs_of_largest(MatrixView<const float> x) override {
    const DeviceScope scope(device_);
    const std::size_t k = static_cast<std::size_t>(x.cols()), chunk = kReadBackBytes / sizeof(float);
    auto* d = static_cast<float*>(scratch(k * sizeof(float)));
    cuda::launch_signs_of_largest(x, d, stream());
    std::vector<float> h(k);
    for (std::size_t c = 0; c < k; c += chunk) read_back(d + c, h.data() + c, std::min(chunk, k - c));
    return h;
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
