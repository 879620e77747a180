// Loading the CUDA backend's module (cuda_module.hpp; where it is looked for: cuda_module_status()
// in randnla/backends.hpp).
#include "cuda_module.hpp"

#include <dirent.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "randnla/version.hpp"

namespace randnla {
namespace {

struct CudaModule {
  int (*device_count)() = nullptr;
  Backend* (*make)(int device, void* stream) = nullptr;
  std::string path;   ///< the file loaded (make non-null)
  std::string error;  ///< why none loaded (make null)
};

/// The directory of the file holding this code: the shared library, or the executable (or shared
/// library) a static library was linked into.
std::string directory_of_library() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuda_module_device_count), &info) == 0 || !info.dli_fname) return ".";
  char* resolved = realpath(info.dli_fname, nullptr);  // an executable run as ./bin/app is named so
  const std::string file(resolved ? resolved : info.dli_fname);
  std::free(resolved);
  const auto slash = file.find_last_of('/');
  return slash == std::string::npos ? "." : file.substr(0, slash);
}

std::vector<std::string> candidates() {
  if (const char* path = std::getenv("RANDNLA_CUDA_MODULE"); path && *path) return {path};
  const std::string dir = directory_of_library();
  return {dir + "/" RANDNLA_CUDA_MODULE_NAME, dir + "/" RANDNLA_BINDIR_TO_LIBDIR "/" RANDNLA_CUDA_MODULE_NAME,
          RANDNLA_CUDA_MODULE_NAME};
}

template <class F>
F lookup(void* handle, const char* name) {
  return reinterpret_cast<F>(dlsym(handle, name));
}

/// Why the loaded file at `path` is not this build's module; empty when it is.
std::string mismatch(void* handle, const std::string& path) {
  auto build_id = lookup<const char* (*)()>(handle, "randnla_cuda_module_build_id");
  if (!build_id) return path + ": no randnla_cuda_module_build_id (not a randnla CUDA module, or an older one)";
  if (std::strcmp(build_id(), RANDNLA_BUILD_ID) != 0)
    return path + ": the CUDA module of build " + build_id() + ", not of this library's " RANDNLA_BUILD_ID;
  if (!dlsym(handle, "randnla_cuda_device_count") || !dlsym(handle, "randnla_make_cuda_backend"))
    return path + ": lacks randnla_cuda_device_count or randnla_make_cuda_backend";
  return "";
}

/// The first candidate that loads and is of this library's build.
CudaModule load() {
  std::string tried;
  for (const std::string& path : candidates()) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      tried += "\n  " + std::string(dlerror());
      continue;
    }
    if (const std::string why = mismatch(handle, path); !why.empty()) {
      tried += "\n  " + why;
      dlclose(handle);
      continue;
    }
    CudaModule m;
    m.device_count = lookup<int (*)()>(handle, "randnla_cuda_device_count");
    m.make = lookup<Backend* (*)(int, void*)>(handle, "randnla_make_cuda_backend");
    Dl_info info{};  // the file found where `path` is a bare name
    m.path = dladdr(reinterpret_cast<void*>(m.device_count), &info) != 0 && info.dli_fname ? info.dli_fname : path;
    return m;
  }
  CudaModule none;
  none.error = "the CUDA backend's module " RANDNLA_CUDA_MODULE_NAME
               " of this build could not be loaded (set RANDNLA_CUDA_MODULE to its path); tried:" + tried;
  return none;
}

/// Loaded once per process and never unloaded: backends made by it may live until exit.
const CudaModule& module() {
  static const CudaModule loaded = load();
  return loaded;
}

/// A CUDA device node (/dev/nvidia0, /dev/nvidia1, ...), or the driver counting a device: a GPU
/// is there whether or not the module loads.
bool gpu_present() {
  if (DIR* dev = opendir("/dev")) {
    bool found = false;
    while (const dirent* e = readdir(dev))
      if (std::strncmp(e->d_name, "nvidia", 6) == 0 && e->d_name[6] >= '0' && e->d_name[6] <= '9') found = true;
    closedir(dev);
    if (found) return true;
  }
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) return false;
  auto init = lookup<int (*)(unsigned)>(driver, "cuInit");
  auto count = lookup<int (*)(int*)>(driver, "cuDeviceGetCount");
  int n = 0;
  const bool any = init && count && init(0) == 0 && count(&n) == 0 && n > 0;
  dlclose(driver);
  return any;
}

}  // namespace

int cuda_module_device_count() { return module().make ? module().device_count() : 0; }

std::unique_ptr<Backend> make_cuda_module_backend(int device, void* stream) {
  const CudaModule& m = module();
  if (!m.make) throw UnsupportedConfiguration(m.error);
  if (m.device_count() == 0) throw UnsupportedConfiguration("the CUDA backend was asked for but no GPU is visible");
  return std::unique_ptr<Backend>(m.make(device, stream));
}

CudaModuleStatus loaded_cuda_module_status() {
  const CudaModule& m = module();
  CudaModuleStatus s;
  s.built = true;
  s.loaded = m.make != nullptr;
  s.path = m.path;
  s.build_id = RANDNLA_BUILD_ID;
  s.reason = m.error;
  s.device_count = cuda_module_device_count();
  s.gpu_present = s.device_count > 0 || gpu_present();
  return s;
}

}  // namespace randnla
