// DeploymentOptions: the command-line flags that describe one deployment (model, GPU,
// parallelism, vLLM engine flags), shared by every subcommand that needs them. Flag names
// and defaults follow `vllm serve`.
//
// add_to() registers the flags on a CLI11 subcommand; resolve() turns the parsed strings into
// checked specs, throwing ConfigError naming the flag. Not thread-safe (CLI parsing).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "models/catalog.h"
#include "models/engine_config.h"
#include "models/parallel_config.h"

namespace servesim {

struct DeploymentOptions {
  std::string model;
  std::string gpu;
  int tp = 1;
  int pp = 1;
  int dp = 1;
  bool enable_expert_parallel = false;
  double gpu_memory_utilization = 0.9;
  int max_model_len = 0;
  int max_num_seqs = 0;
  int max_num_batched_tokens = 0;
  int block_size = 16;
  std::string dtype = "auto";
  std::string kv_cache_dtype = "auto";
  bool enable_prefix_caching = true;
  bool enable_chunked_prefill = true;
  std::string non_torch_memory;
  std::string cuda_graph_memory;
  std::string kv_cache_memory;
  std::string activation_memory;
  std::string gpu_memory_bytes;
  std::string vllm_version;
  bool enforce_eager = false;
  std::string cudagraph_mode;  // vLLM's name, e.g. FULL_DECODE_ONLY; "" = the release's default
  int64_t num_gpu_blocks_override = 0;
  bool allow_long_max_model_len = false;
  std::string speculative_config;  // vLLM --speculative-config JSON; "" = none
  double kv_offloading_size = 0;   // GiB, vLLM --kv-offloading-size; 0 = no KV offload
  std::string kv_offloading_backend = "native";

  // `model_required` false: a command that can read the model elsewhere (memory --from-log).
  void add_to(CLI::App& app, bool model_required = true);

  struct Resolved {
    ModelSpec model;
    HardwareSpec gpu;
    ParallelConfig parallel;
    EngineConfig engine;
  };
  Resolved resolve(const Catalog& catalog) const;
};

}  // namespace servesim
