// The orthonormalisers' own operations on the portable backend (listed by RANDNLA_ALGORITHMS).
#pragma once

#include <memory>

#include "portable/orthonormalize/cholesky_qr_kernels.hpp"

namespace randnla {
namespace portable {

template <class Exec>
void provide_orthonormalize_ops(const Exec& exec, Backend& b) {
  b.provide<CholeskyQrOps>(std::make_shared<CholeskyQrKernels<Exec>>(exec, b.memory_space()));
}

}  // namespace portable
}  // namespace randnla
