// Choosing a backend. Every algorithm takes a Backend&; these make one.
#pragma once

#include <memory>
#include <string>

#include "randnla/backend.hpp"

namespace randnla {

enum class BackendKind {
  Host,  ///< Kokkos host execution space + LAPACK
  Cuda,  ///< the CUDA backend on GPU `device`; throws UnsupportedConfiguration without a GPU
  Auto   ///< Cuda when built with CUDA and a GPU is present, else Host
};

/// True when this build has the CUDA backend and at least one GPU is visible.
bool cuda_available();

/// A backend of the given kind. Kokkos must be initialised for the host backend.
std::unique_ptr<Backend> make_backend(BackendKind kind = BackendKind::Auto, int device = 0);

/// Parses "host", "cuda" or "auto"; throws InvalidArgument naming `parameter` otherwise.
BackendKind parse_backend_kind(const std::string& text, const std::string& parameter = "backend");

}  // namespace randnla
