#include "backends.hpp"

#include "host/host_backend.hpp"
#if defined(RANDNLA_HAVE_CUDA)
#include "cuda/cuda_backend.hpp"
#endif

namespace randnla {

bool cuda_available() {
#if defined(RANDNLA_HAVE_CUDA)
  return cuda_device_count() > 0;
#else
  return false;
#endif
}

std::unique_ptr<Backend> make_backend(BackendKind kind, int device) {
  if (kind == BackendKind::Auto) kind = cuda_available() ? BackendKind::Cuda : BackendKind::Host;
  if (kind == BackendKind::Host) return make_host_backend();
#if defined(RANDNLA_HAVE_CUDA)
  if (!cuda_available()) throw UnsupportedConfiguration("the CUDA backend was asked for but no GPU is visible");
  return make_cuda_backend(device);
#else
  (void)device;
  throw UnsupportedConfiguration("this build of randnla has no CUDA backend (RANDNLA_ENABLE_CUDA=OFF)");
#endif
}

BackendKind parse_backend_kind(const std::string& text, const std::string& parameter) {
  if (text == "host") return BackendKind::Host;
  if (text == "cuda") return BackendKind::Cuda;
  if (text == "auto") return BackendKind::Auto;
  throw InvalidArgument(parameter, text, "must be host, cuda or auto");
}

}  // namespace randnla
