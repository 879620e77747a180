// Which flavour of the Tensor Core kernels runs: the wgmma kernels (sm_90a machine code, built
// apart in the randnla_sm90 objects) on compute 9.0 devices, the mma.sync kernels (sm_80 on)
// elsewhere. The GEMMs (tc_gemm.cu) and the sparse projection's tiles ask the same question.
#pragma once

#include <cstdlib>
#include <string>

#include "cuda/context/cuda_check.hpp"
#include "randnla/error.hpp"

namespace randnla {
namespace cuda {

/// True when `device` can run the wgmma kernels (compute 9.0).
inline bool wgmma_available(int device) {
  int major = 0, minor = 0;
  RANDNLA_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  RANDNLA_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major == 9 && minor == 0;
}

/// The wgmma kernels on compute 9.0, the mma.sync kernels elsewhere, for the current device;
/// RANDNLA_TC_KERNEL = mma | wgmma | auto (unset: auto) overrides, so the sm_80 kernels can be
/// tested and compared on a Hopper GPU. Throws InvalidArgument for another value and
/// UnsupportedConfiguration for wgmma where the device cannot run it.
inline bool choose_wgmma() {
  const char* env = std::getenv("RANDNLA_TC_KERNEL");
  const std::string forced = env ? env : "auto";
  require(forced == "auto" || forced == "mma" || forced == "wgmma", "RANDNLA_TC_KERNEL", forced,
          "must be auto, mma or wgmma");
  const bool available = wgmma_available(current_device());
  if (forced == "wgmma" && !available)
    throw UnsupportedConfiguration("RANDNLA_TC_KERNEL=wgmma: the wgmma kernels need a compute 9.0 GPU (sm_90a)");
  return forced == "auto" ? available : forced == "wgmma";
}

}  // namespace cuda
}  // namespace randnla
