#include "gpu_test_support.hpp"

namespace randnla {
namespace gpu_test {

std::vector<const char*> tensor_core_kernels(Backend& dev) {
  std::vector<const char*> k{"mma"};
  if (dev.description().find("sm_90") != std::string::npos) k.push_back("wgmma");
  return k;
}

Matrix<fp16> to_device_fp16(Backend& dev, const test::HostMatrix<float>& x) {
  auto f = test::to_backend(dev, x);
  Matrix<fp16> h(dev, x.rows, x.cols);
  dev.convert(f.view(), h.view());
  return h;
}

}  // namespace gpu_test
}  // namespace randnla
