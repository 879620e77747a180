// The very sparse projection's own operations on the portable backend (listed by RANDNLA_ALGORITHMS).
#pragma once

#include <memory>

#include "portable/sparse_projection/sparse_projection_kernels.hpp"

namespace randnla {
namespace portable {

template <class Exec>
void provide_sparse_projection_ops(const Exec& exec, Backend& b) {
  b.provide<SparseProjectionOps>(std::make_shared<SparseProjectionKernels<Exec>>(exec, b.memory_space()));
}

}  // namespace portable
}  // namespace randnla
