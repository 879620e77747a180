// Choosing a backend: every algorithm takes a Backend&; these make one (backends/choose_backend.cpp,
// which alone knows the backends behind them).
#pragma once

#include <memory>
#include <string>

#include "randnla/backend.hpp"

namespace randnla {

enum class BackendKind {
  Host,  ///< the portable backend on Kokkos's default host execution space
  Cuda,  ///< the CUDA backend on GPU `device`; throws UnsupportedConfiguration without a GPU
  Auto   ///< Cuda when built with CUDA and a GPU is present, else Host
};

/// True when this build has the CUDA backend and at least one GPU is visible.
bool cuda_available();

/// A backend of the given kind. Kokkos must be initialised for the portable (host) backend.
std::unique_ptr<Backend> make_backend(BackendKind kind = BackendKind::Auto, int device = 0);

/// Which backend serves an execution space.
enum class BackendChoice {
  Fastest,  ///< the Tensor Core backend where one serves the space, else the portable backend
  Portable  ///< the portable Kokkos backend on any space (validation, comparisons)
};

/// The backend for data in Exec's memory space, queuing its work on the instance `exec`: on a
/// Kokkos::Cuda instance (with the CUDA backend built) the Tensor Core backend on that instance's
/// device and stream, shared by every call on that stream, unless `choice` asks for the portable
/// one; on every other execution space the portable backend. Instantiated for each execution
/// space Kokkos was built with.
template <class Exec>
std::shared_ptr<Backend> backend_for(const Exec& exec, BackendChoice choice = BackendChoice::Fastest);

inline const EnumNames<BackendKind>& names_of(BackendKind) {
  static const EnumNames<BackendKind> names{{BackendKind::Host, "host"}, {BackendKind::Cuda, "cuda"}, {BackendKind::Auto, "auto"}};
  return names;
}

}  // namespace randnla
