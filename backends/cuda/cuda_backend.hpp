// The CUDA backend: hand-written Tensor Core kernels (SHGEMM, TCEC-SGEMM), cuBLAS and cuSOLVER.
// This header includes no CUDA header, so host-only code can make one.
#pragma once

#include <memory>

#include "randnla/backend.hpp"

namespace randnla {

/// Number of visible CUDA devices (0 when there is no driver or no GPU; never throws).
int cuda_device_count();

/// A Backend on device memory of GPU `device`, queuing its work on `stream` (a cudaStream_t; the
/// caller's, which must outlive the backend) or, when null, on a stream of its own. Throws
/// InvalidArgument for a device that does not exist, DeviceError if it cannot be set up.
std::unique_ptr<Backend> make_cuda_backend(int device = 0, void* stream = nullptr);

}  // namespace randnla
