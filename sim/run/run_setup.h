// RunSetup: summary.json's "setup" record — everything needed to tell later whether two runs
// compare, and to run one again: servesim's version, the model (weight and KV-cache dtypes,
// parameters), the GPU, the parallelism, every engine flag as the run resolved it (vLLM's
// defaults filled in) with the engine it mirrors, the cost model, the scenario's service,
// workload, SLO and metrics blocks as given after --set (a workload file is read in), the
// knee's error-rate limit and the seed — and the one-line header the summary table opens with.
//
// Plain values and stateless functions; thread-safe. Borrows nothing past the call.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/run/simulation.h"

namespace servesim {

struct RunSetup {
  std::string scenario;          // the scenario's name
  nlohmann::json scenario_json;  // the scenario file after --set
  std::string base_dir;          // the scenario file's folder: resolves a workload file
  std::string servesim_version;  // e.g. "0.1.0"
  std::string git_revision;      // the build's, e.g. "abc1234"
  double max_error_rate = 0;     // fraction of a step's requests that may fail (the knee)
};

// The engine servesim's scheduler, KV-cache manager and memory plan follow.
inline constexpr const char* kMirroredEngine = "vLLM V1";

// Throws ConfigError when a workload file named by the scenario cannot be read.
nlohmann::json setup_json(const Simulation& simulation, const RunSetup& setup);

// Every engine flag as the run resolved it (what `vllm serve` would be given), with the engine
// servesim mirrors: the "engine" object of both records below.
nlohmann::json engine_flags_json(const SimulationConfig& config, const EngineConfig& engine,
                                 const SchedulerConfig& scheduler, int64_t kv_cache_tokens);

// What `engine run` knows of its own run (the in-process engine, no GPU model or parallelism).
struct EngineRunFacts {
  const SimulationConfig& config;    // as the engine resolved it
  const SchedulerConfig& scheduler;  // the engine's scheduler, KV blocks sized
  int64_t kv_cache_tokens = 0;       // tokens the KV cache holds
  int64_t params = 0;                // the loaded weights' parameters
  std::string backend;               // "cpu" or "cuda"
  int threads = 0;                   // the backend's threads (0: its default)
};

// `engine run`'s "setup" record: the keys it shares with a simulation's named the same, so
// `servesim compare` can say which differ; "backend" in place of "gpu" and "parallel".
nlohmann::json engine_run_setup_json(const EngineRunFacts& run, const RunSetup& setup);

// "NAME: MODEL (DTYPE) on N x GPU (TP t, PP p, DP d), vLLM V1 engine, BATCHING batching,
// service ..., seed S, servesim VERSION".
std::string setup_line(const Simulation& simulation, const RunSetup& setup);

}  // namespace servesim
