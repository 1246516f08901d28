// BackendModule: what one backend implements for backend.cpp, which dispatches to it. The CPU
// backend is compiled into servesim_engine (cpu_backend.cpp); the CUDA backend is the shared
// module servesim_cuda_backend (cuda_backend_module.cpp), which backend.cpp opens with dlopen()
// and asks for its BackendModule through the one symbol it exports:
//
//   extern "C" const servesim::BackendModule* servesim_backend_module(int interface_version);
//
// The factory returns nullptr when `interface_version` is not the kBackendModuleVersion the
// module was built with (a stale module named by SERVESIM_CUDA_BACKEND), so that a mismatch is
// a one-line error instead of calls through a different vtable.
//
// The boundary is C++ — virtual calls, std::string, shared_ptr, exceptions — because the
// module and the program are built together by one compiler against one libstdc++ and share
// the layout of every type passed here. The module hides everything else it contains (its
// copies of the weights, runner and CUDA kernel code), so it cannot clash with the program's.
// Exceptions cross it as they are: ConfigError for bad input, DeviceError for a failing CUDA
// call (libstdc++ matches a catch by the type's name across shared objects).
//
// Ownership: each backend owns its BackendModule (a function-local static, alive until exit:
// the module is never closed). Implementations are stateless and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/runtime/backend.h"

namespace servesim {

// Bump when this interface, RunnerOptions, CeilingOptions, DeviceCeilings, BackendWeights,
// Runner or Weights change shape.
inline constexpr int kBackendModuleVersion = 1;
// The name the module exports its factory under.
inline constexpr char kBackendModuleFactory[] = "servesim_backend_module";

class BackendModule {
 public:
  // Throws ConfigError (one line, no "--backend" prefix) when no device is usable.
  virtual void require_device() const = 0;
  virtual std::string device_name() const = 0;
  // As load_weights with no checkpoint / upload_weights (backend.h); `spec` is supported by
  // the engine (Weights::check_supported has passed).
  virtual std::shared_ptr<const BackendWeights> random_weights(const ModelSpec& spec,
                                                               uint64_t seed) const = 0;
  virtual std::shared_ptr<const BackendWeights> upload_weights(
      std::shared_ptr<const Weights> host) const = 0;
  virtual DeviceCeilings measure_ceilings(const CeilingOptions& options) const = 0;

 protected:
  ~BackendModule() = default;
};

// The CPU backend, in this process.
const BackendModule& cpu_backend_module();

using BackendModuleFactory = const BackendModule* (*)(int interface_version);

}  // namespace servesim
