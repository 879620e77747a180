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
  Auto   ///< Cuda when built with CUDA and a GPU is present, else Host (see make_backend)
};

/// True when this build has the CUDA backend, its module loaded, and at least one GPU is visible.
bool cuda_available();

/// Where this build's CUDA backend stands. With CUDA the backend is a module, `librandnla_cuda.so`,
/// which the library loads on the first call that asks for a GPU (or for this status), so that
/// host-only runs never load the CUDA libraries. It is looked for relative to the randnla library
/// itself, found at run time (for a static library, the executable or shared library it is linked
/// into), so that an install can be moved:
///  1. `$RANDNLA_CUDA_MODULE` when that environment variable is set, and only there;
///  2. the library's directory (the install's and the build tree's `<libdir>`);
///  3. `../<libdir>` from it (a static library in an executable in `<prefix>/bin`);
///  4. by file name, through the run path of the executable (which the CMake package sets for a
///     static library) and `LD_LIBRARY_PATH`.
/// A file is loaded only when its build id (`randnla_cuda_module_build_id()`, exported by the
/// module) equals the library's, RANDNLA_BUILD_ID of <randnla/version.hpp>. Loading needs the CUDA
/// libraries (runtime, cuBLAS, cuSOLVER), not a GPU or a driver.
struct CudaModuleStatus {
  bool built = false;        ///< this build of randnla has the CUDA backend (RANDNLA_ENABLE_CUDA)
  bool loaded = false;       ///< a module of this build was loaded
  std::string path;          ///< the file loaded; empty when none was
  std::string build_id;      ///< this library's build id (RANDNLA_BUILD_ID)
  std::string reason;        ///< why none was loaded: each path tried and why it failed; empty when loaded
  bool gpu_present = false;  ///< a CUDA device is there (a /dev/nvidia<N> node, or the driver counts one)
  int device_count = 0;      ///< the GPUs the loaded module sees; 0 without a module, driver or GPU
};

/// The CUDA backend's state in this process, loading its module if no call has yet (once per
/// process: a module, loaded or not, stays so until exit). Throws nothing.
CudaModuleStatus cuda_module_status();

/// A backend of the given kind. Kokkos must be initialised for the portable (host) backend.
/// Auto is the CUDA backend where cuda_available(), else the host, except that it throws
/// UnsupportedConfiguration (with cuda_module_status().reason) when this build has CUDA and a GPU
/// is present but the module could not be loaded: it never falls back to the host silently then
/// (ask for BackendKind::Host to run there). Cuda throws UnsupportedConfiguration without CUDA in
/// this build, without the module (naming every path tried), or without a GPU.
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
