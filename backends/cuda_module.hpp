// The CUDA backend lives in a module (librandnla_cuda.so) that is loaded on the first call that
// needs it, so that a process that never asks for a GPU never loads the CUDA libraries (cuBLAS,
// cuSOLVER and the runtime cost 70-80 ms of start-up on the 2-core CI machine,
// perf_tests/results/bench_pca_host.md).
#pragma once

#include <memory>

#include "randnla/backend.hpp"
#include "randnla/backends.hpp"

namespace randnla {

/// Number of visible CUDA devices; 0 when the module cannot be loaded, or without a driver or GPU.
int cuda_module_device_count();

/// The CUDA backend on GPU `device`, queuing its work on `stream` (a cudaStream_t, or null for a
/// stream of its own). Throws UnsupportedConfiguration when the module cannot be loaded (saying
/// where it was looked for and why each failed) or no GPU is visible, InvalidArgument for a device
/// that does not exist. Where the module is looked for: randnla::cuda_module_status().
std::unique_ptr<Backend> make_cuda_module_backend(int device, void* stream);

/// The module's state (loading it if it was not yet), for cuda_module_status().
CudaModuleStatus loaded_cuda_module_status();

}  // namespace randnla
