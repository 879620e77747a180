// The entry points of the CUDA backend's module (librandnla_cuda.so), which backends/cuda_module.cpp
// loads on first use and looks up by these names.
#include "cuda_backend.hpp"
#include "randnla/version.hpp"

extern "C" {

/// The build id of the randnla build this module belongs to: the library loads it only when equal.
const char* randnla_cuda_module_build_id() { return RANDNLA_BUILD_ID; }

int randnla_cuda_device_count() { return randnla::cuda_device_count(); }

randnla::Backend* randnla_make_cuda_backend(int device, void* stream) {
  return randnla::make_cuda_backend(device, stream).release();
}

}  // extern "C"
