// TSQR's own operations on the portable backend (listed by RANDNLA_ALGORITHMS): the Tensor Core
// variants' arithmetic emulated; the FP32 tree's blocks are the algorithm's generic LAPACK ones.
#pragma once

#include <memory>

#include "portable/tsqr/reflector_tsqr_ops.hpp"

namespace randnla {
namespace portable {

template <class Exec>
void provide_tsqr_ops(const Exec& exec, Backend& b) {
  b.provide<TensorCoreTsqrOps>(std::make_shared<ReflectorTsqrKernels<Exec>>(exec, b));
}

}  // namespace portable
}  // namespace randnla
