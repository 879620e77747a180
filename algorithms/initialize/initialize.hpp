// Set-up ahead of the first call: what a backend's work needs the first time it runs in a process,
// done when the application chooses (its own start-up) instead of inside its first computation.
#pragma once

#include <string>

#include "randnla/backend.hpp"
#include "randnla/report.hpp"

namespace randnla {

/// What initialize() did: each step and its milliseconds (wall clock, the device synchronised).
struct InitializeReport {
  std::string backend;  ///< the backend it prepared, e.g. the GPU's name
  PhaseReport phases;   ///< "backend" (Kokkos entry only: the device context and library handles), "PCA", "RSVD"
  double total_ms() const { return phases.total_ms(); }  ///< the steps' sum, milliseconds
};

/// Prepares `backend` for the library's calls, so that the first one runs at the speed of the
/// later ones. On a GPU backend the first use of each kernel and library routine costs far more
/// than the work: CUDA loads the library's kernel modules lazily (tens of ms for the Tensor Core
/// products' module), cuBLAS and cuSOLVER initialise themselves and load their kernels, and the
/// stream-ordered pool takes its first blocks from the device. initialize() pays these once by
/// running the library's main paths on synthetic data (Philox draws in device memory, discarded):
/// a PCA of 2048 x 512 (k = 16, p = 10, q = 2: the fused CholeskyQR, the FP16 sketch through
/// SHGEMM, the small SVD through the Gram matrix) and an RSVD of 2048 x 1024 (k = 256, p = 10,
/// q = 1: the Tensor Core CholeskyQR, the eigensolver at l = 266, the error estimate). Products of
/// other shapes may still load a cuBLAS kernel of their own on first use. On a host backend, which
/// loads nothing lazily, it runs nothing and returns an empty report. Costs about 0.1-0.3 s on a
/// GPU, most of it the loading it moves out of the first call. Throws what the calls throw
/// (DeviceError when the device fails). Idempotent: a second call costs about as much as warm calls.
InitializeReport initialize(Backend& backend);

}  // namespace randnla
