#include "randnla/backends.hpp"

#include <map>
#include <mutex>
#include <utility>

#include "portable/portable_backend.hpp"
#include "randnla/kokkos_compat.hpp"
#include "randnla/version.hpp"
#if defined(RANDNLA_HAVE_CUDA)
#include "cuda_module.hpp"
#endif

namespace randnla {

bool cuda_available() {
#if defined(RANDNLA_HAVE_CUDA)
  return cuda_module_device_count() > 0;
#else
  return false;
#endif
}

CudaModuleStatus cuda_module_status() {
#if defined(RANDNLA_HAVE_CUDA)
  return loaded_cuda_module_status();
#else
  CudaModuleStatus s;
  s.build_id = RANDNLA_BUILD_ID;
  s.reason = "this build of randnla has no CUDA backend (RANDNLA_ENABLE_CUDA=OFF)";
  return s;
#endif
}

namespace {

/// Auto's choice: the GPU where the CUDA backend can run there; never the host silently where a
/// GPU is present but the module failed to load.
BackendKind resolve_auto() {
  if (cuda_available()) return BackendKind::Cuda;
#if defined(RANDNLA_HAVE_CUDA)
  const CudaModuleStatus s = cuda_module_status();
  if (!s.loaded && s.gpu_present)
    throw UnsupportedConfiguration("backend Auto: a GPU is present but " + s.reason +
                                   "\n(ask for the host backend to run on the host)");
#endif
  return BackendKind::Host;
}

}  // namespace

std::unique_ptr<Backend> make_backend(BackendKind kind, int device) {
  if (kind == BackendKind::Auto) kind = resolve_auto();
  if (kind == BackendKind::Host) return make_portable_backend(Kokkos::DefaultHostExecutionSpace());
#if defined(RANDNLA_HAVE_CUDA)
  return make_cuda_module_backend(device, nullptr);
#else
  (void)device;
  throw UnsupportedConfiguration("this build of randnla has no CUDA backend (RANDNLA_ENABLE_CUDA=OFF)");
#endif
}

namespace {

template <class Exec>
std::shared_ptr<Backend> make_for(const Exec& exec, BackendChoice) {
  return make_portable_backend(exec);
}

#if defined(KOKKOS_ENABLE_CUDA) && defined(RANDNLA_HAVE_CUDA)
/// One Tensor Core backend per (device, stream): its cuBLAS and cuSOLVER handles and memory pool
/// cost more to make than most calls. Never destroyed: the CUDA runtime may be gone at exit.
std::shared_ptr<Backend> make_for(const Kokkos::Cuda& exec, BackendChoice choice) {
  if (choice == BackendChoice::Portable) return make_portable_backend(exec);
  static std::mutex mutex;
  static auto* backends = new std::map<std::pair<int, void*>, std::shared_ptr<Backend>>();
  const std::pair<int, void*> key(exec.cuda_device(), static_cast<void*>(exec.cuda_stream()));
  std::lock_guard<std::mutex> lock(mutex);
  auto& backend = (*backends)[key];
  if (!backend) backend = make_cuda_module_backend(key.first, key.second);
  return backend;
}
#endif

}  // namespace

template <class Exec>
std::shared_ptr<Backend> backend_for(const Exec& exec, BackendChoice choice) {
  return make_for(exec, choice);
}

// One instance for each execution space this Kokkos was built with.
#if defined(KOKKOS_ENABLE_SERIAL)
template std::shared_ptr<Backend> backend_for(const Kokkos::Serial&, BackendChoice);
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
template std::shared_ptr<Backend> backend_for(const Kokkos::OpenMP&, BackendChoice);
#endif
#if defined(KOKKOS_ENABLE_THREADS)
template std::shared_ptr<Backend> backend_for(const Kokkos::Threads&, BackendChoice);
#endif
#if defined(KOKKOS_ENABLE_CUDA)
template std::shared_ptr<Backend> backend_for(const Kokkos::Cuda&, BackendChoice);
#endif
#if defined(KOKKOS_ENABLE_HIP)
template std::shared_ptr<Backend> backend_for(const compat::Hip&, BackendChoice);
#endif
#if defined(KOKKOS_ENABLE_SYCL)
template std::shared_ptr<Backend> backend_for(const compat::Sycl&, BackendChoice);
#endif

}  // namespace randnla
