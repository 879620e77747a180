// The portable backend: Kokkos (host execution space), Kokkos Kernels GEMM and LAPACK.
// The Tensor Core products are emulated with the same splits and the same terms as the CUDA
// kernels (FP32 BLAS on the exactly converted split parts), so algorithms can be validated here.
#pragma once

#include <memory>

#include "randnla/backend.hpp"

namespace randnla {

/// A Backend on host memory. Kokkos must be initialised while it is used.
std::unique_ptr<Backend> make_host_backend();

}  // namespace randnla
