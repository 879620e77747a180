// The sparse algorithms' operations on the portable backend (listed by RANDNLA_ALGORITHMS).
#pragma once

#include <memory>

#include "portable/sparse/sparse_kernels.hpp"

namespace randnla {
namespace portable {

template <class Exec>
void provide_sparse_ops(const Exec& exec, Backend& b) {
  b.provide<SparseOps>(std::make_shared<SparseKernels<Exec>>(exec, b.memory_space()));
}

}  // namespace portable
}  // namespace randnla
