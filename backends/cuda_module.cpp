// Loading the CUDA backend's module (cuda_module.hpp).
#include "cuda_module.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace randnla {
namespace {

struct CudaModule {
  int (*device_count)() = nullptr;
  Backend* (*make)(int device, void* stream) = nullptr;
  std::string error;  ///< why no module loaded (make is then null)
};

std::string directory_of_executable() {
  std::vector<char> path(4096);
  const ssize_t n = readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (n <= 0) return ".";
  const std::string exe(path.data(), static_cast<std::size_t>(n));
  return exe.substr(0, exe.find_last_of('/'));
}

std::vector<std::string> candidates() {
  if (const char* path = std::getenv("RANDNLA_CUDA_MODULE"); path && *path) return {path};
  std::vector<std::string> paths{directory_of_executable() + "/" RANDNLA_CUDA_MODULE_NAME};
  for (const char* p : {RANDNLA_CUDA_MODULE_BUILD_PATH, RANDNLA_CUDA_MODULE_INSTALL_PATH})
    if (paths.back() != p) paths.emplace_back(p);
  return paths;
}

template <class F>
F lookup(void* handle, const char* name) {
  return reinterpret_cast<F>(dlsym(handle, name));
}

/// The first candidate that loads and is of this library's version.
CudaModule load() {
  std::string tried;
  for (const std::string& path : candidates()) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      tried += "\n  " + std::string(dlerror());
      continue;
    }
    auto version = lookup<const char* (*)()>(handle, "randnla_cuda_module_version");
    CudaModule m;
    m.device_count = lookup<int (*)()>(handle, "randnla_cuda_device_count");
    m.make = lookup<Backend* (*)(int, void*)>(handle, "randnla_make_cuda_backend");
    if (version && m.device_count && m.make && std::string(version()) == RANDNLA_VERSION) return m;
    tried += "\n  " + path + ": not randnla " RANDNLA_VERSION "'s CUDA module";
    dlclose(handle);
  }
  CudaModule none;
  none.error = "the CUDA backend's module " RANDNLA_CUDA_MODULE_NAME
               " could not be loaded (set RANDNLA_CUDA_MODULE to its path); tried:" + tried;
  return none;
}

/// Loaded once per process and never unloaded: backends made by it may live until exit.
const CudaModule& module() {
  static const CudaModule loaded = load();
  return loaded;
}

}  // namespace

int cuda_module_device_count() { return module().make ? module().device_count() : 0; }

std::unique_ptr<Backend> make_cuda_module_backend(int device, void* stream) {
  const CudaModule& m = module();
  if (!m.make) throw UnsupportedConfiguration(m.error);
  if (m.device_count() == 0) throw UnsupportedConfiguration("the CUDA backend was asked for but no GPU is visible");
  return std::unique_ptr<Backend>(m.make(device, stream));
}

}  // namespace randnla
