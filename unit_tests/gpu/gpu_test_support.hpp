// What the GPU tests (label gpu, one file per algorithm or operation family, built as one
// executable test_gpu) share. They are skipped without a GPU; on the H100 they hold the CUDA backend
// to the portable backend on the host (bit for bit where the arithmetic is defined bit for bit) and
// to FP64 references.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "randnla/backends.hpp"
#include "test_support.hpp"

/// The first statement of every GPU test: skips it where no GPU is visible.
#define RANDNLA_REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no GPU visible (or built without CUDA)"

namespace randnla {
namespace gpu_test {

using test::Elements;

/// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value, 1);
  }
  ~ScopedEnv() { had_ ? setenv(name_, old_.c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

/// The Tensor Core kernels this GPU runs: the mma.sync kernel everywhere, the wgmma one on compute 9.0.
std::vector<const char*> tensor_core_kernels(Backend& dev);

/// x on the device in FP16 (converted there, round to nearest).
Matrix<fp16> to_device_fp16(Backend& dev, const test::HostMatrix<float>& x);

}  // namespace gpu_test
}  // namespace randnla
