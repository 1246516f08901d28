// ProfileTarget: what `calibrate profile` measures on — a backend's Runner (sharing the weights
// it was built over), the device's name and dtypes, and the device's measured ceilings (read
// bandwidth and GEMM rate) — built through engine/runtime/backend.h for the CPU (fp32 over
// seeded random weights) or a GPU (bf16 over weights drawn on the device, so an 8B model needs
// no 32 GB of host fp32 first).
//
// Move-only; one thread drives its runner.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/runtime/runner.h"
#include "models/dtype.h"
#include "models/model_spec.h"

namespace servesim {

struct ProfileTargetOptions {
  std::string backend = "cpu";  // "cpu" or "cuda"
  int64_t num_blocks = 2;       // KV blocks including the null block 0
  int block_size = 16;          // tokens per KV block
  int threads = 1;              // CPU threads (CPU backend)
  uint64_t seed = 0;            // random weights
  bool measure_device = true;   // measure the ceilings (seconds of work)
};

struct ProfileTarget {
  std::unique_ptr<Runner> runner;  // profiling on: per-op times in RunnerOutput::op_s
  std::string device;              // CPU model name or GPU name
  DType weight_dtype = DType::kFp32;
  DType kv_dtype = DType::kFp32;
  // {"read_bandwidth_Bps": .., "gemm_flops": ..}; empty unless measure_device.
  nlohmann::json measured = nlohmann::json::object();
};

// Throws ConfigError for an unknown backend, "cuda" in a build without CUDA or on a machine
// without a device, or a model the engine cannot run.
ProfileTarget make_profile_target(const ModelSpec& spec, const ProfileTargetOptions& options);

}  // namespace servesim
