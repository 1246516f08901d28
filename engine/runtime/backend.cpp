#include "engine/runtime/backend.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <utility>

#include "engine/runtime/backend_module.h"
#include "kernels/cpu_isa.h"
#include "models/config_error.h"

namespace servesim {
namespace {

// Where the build put the CUDA module (a compile definition), or nullptr in a CPU-only build.
#ifdef SERVESIM_CUDA_BACKEND_MODULE
constexpr const char* kBuiltCudaModulePath = SERVESIM_CUDA_BACKEND_MODULE;
#else
constexpr const char* kBuiltCudaModulePath = nullptr;
#endif

const char* cuda_module_path() {
  const char* override_path = std::getenv("SERVESIM_CUDA_BACKEND");
  return override_path != nullptr && *override_path != '\0' ? override_path : kBuiltCudaModulePath;
}

// Opens the module and asks it for its BackendModule; the reason it cannot, or "".
std::pair<const BackendModule*, std::string> open_cuda_module() {
  if (kBuiltCudaModulePath == nullptr) {
    return {nullptr,
            "this build has no CUDA backend (rebuild with -DSERVESIM_CUDA=ON on a machine with "
            "nvcc)"};
  }
  const std::string path = cuda_module_path();
  // RTLD_LOCAL: the module's symbols (it exports only its factory) stay out of the global
  // namespace. Never closed: its weights and runners are alive until exit.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    // The loader names the module itself when it is the file that is missing; a library the
    // module needs (libcublas) it names alone.
    std::string reason = ::dlerror();
    if (reason.rfind(path + ": ", 0) == 0) reason.erase(0, path.size() + 2);
    return {nullptr, "cannot load the CUDA backend module " + path + ": " + reason};
  }
  const auto factory =
      reinterpret_cast<BackendModuleFactory>(::dlsym(handle, kBackendModuleFactory));
  if (factory == nullptr) {
    return {nullptr, path + " is not a servesim backend module (it exports no " +
                         std::string(kBackendModuleFactory) + ")"};
  }
  const BackendModule* module = factory(kBackendModuleVersion);
  if (module == nullptr) {
    return {nullptr, path + " was built by another servesim (interface version " +
                         std::to_string(kBackendModuleVersion) +
                         " not supported); rebuild it or unset SERVESIM_CUDA_BACKEND"};
  }
  return {module, ""};
}

// The CUDA module, opened on the first call; ConfigError "--backend cuda: <reason>" when it
// cannot be. The outcome is kept: a second call neither retries nor repeats the loader's work.
const BackendModule& cuda_module() {
  static const std::pair<const BackendModule*, std::string> kOpened = open_cuda_module();
  if (kOpened.first == nullptr) throw ConfigError("--backend cuda: " + kOpened.second);
  return *kOpened.first;
}

// The backend's module, its device checked.
const BackendModule& usable_module(Backend backend) {
  if (backend == Backend::kCpu) return cpu_backend_module();
  const BackendModule& module = cuda_module();
  try {
    module.require_device();
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("--backend cuda: ") + e.what());
  }
  return module;
}

}  // namespace

Backend parse_backend(std::string_view name) {
  if (name == "cpu") return Backend::kCpu;
  if (name == "cuda") return Backend::kCuda;
  throw ConfigError("--backend '" + std::string(name) + "': expected cpu or cuda");
}

const char* backend_name(Backend backend) {
  return backend == Backend::kCpu ? "cpu" : "cuda";
}

bool cuda_backend_built() {
  return kBuiltCudaModulePath != nullptr;
}

void require_backend(Backend backend) {
  usable_module(backend);
}

std::string device_name(Backend backend) {
  return usable_module(backend).device_name();
}

DType backend_dtype(Backend backend) {
  return backend == Backend::kCpu ? DType::kFp32 : DType::kBf16;
}

std::shared_ptr<const BackendWeights> load_weights(Backend backend, const ModelSpec& spec,
                                                   const std::vector<std::string>& checkpoint,
                                                   uint64_t seed) {
  Weights::check_supported(spec);
  const BackendModule& module = usable_module(backend);
  if (checkpoint.empty()) return module.random_weights(spec, seed);
  return module.upload_weights(
      std::make_shared<const Weights>(Weights::load_safetensors(spec, checkpoint)));
}

std::shared_ptr<const BackendWeights> upload_weights(Backend backend,
                                                     std::shared_ptr<const Weights> host) {
  return usable_module(backend).upload_weights(std::move(host));
}

DeviceCeilings measure_ceilings(Backend backend, const CeilingOptions& options) {
  return usable_module(backend).measure_ceilings(options);
}

const char* cpu_kernels_isa() {
  return cpu_isa_name(active_cpu_isa());
}

std::string cpu_kernels_summary() {
  return cpu_isa_summary();
}

}  // namespace servesim
