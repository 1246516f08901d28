// EngineServer: serves a scenario's workload on servesim's real inference engine in real
// time — requests are admitted when their arrival time comes on the wall clock — and reports
// per-request records and metrics in the simulator's very format (RequestRecord,
// MetricsSummary, ReplicaSummary), so `servesim engine run` and `servesim simulate` on the
// same scenario compare line by line. Calibration's validation step runs it next to the
// simulator.
//
//   EngineServer server(scenario.config, options);   // checks, sizes the KV cache, weights
//   EngineServeResult result = server.run(observer);  // blocks for the workload's duration
//
// What matches the simulator by construction: the request stream (the same RequestSource
// from the same WorkloadSpec and seed: ids, arrival times, prompt and output lengths, prompt
// token ids), the scheduler settings (the simulator's scheduler_config_for, prefix-cache salt
// included; every batching policy, static batching with the simulator's gather timer),
// ignore-EOS generation of exactly each request's output length, and the up-front
// rejection of prompt + output beyond max_model_len. What differs: step times are measured,
// the KV cache is sized for this machine's memory (not the GPU's MemoryPlan), sampled
// tokens are the model's (greedy), so a multi-turn session's next prompt hits the prefix cache
// on its previous prompt only, and there is one replica (data_parallel_size must be 1).
//
// Clock: times in records are wall-clock seconds (steady clock) since run() started; a
// request's arrival_s is the workload's arrival time, so a request arriving during a step
// waits for that step's end and the wait counts as queueing. The engine's own StepTrace times
// (the trace stream) count from the engine's construction, a few microseconds earlier.
// Ownership: owns the weights; borrows the trace stream and the observer. Not thread-safe:
// one thread calls run(); run() may be called again for another measurement (a fresh engine
// and request source each time, the same weights).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "engine/runtime/engine.h"
#include "engine/runtime/weights.h"
#include "engine/sched/scheduler_config.h"
#include "sim/core/observer.h"
#include "sim/core/request_record.h"
#include "sim/metrics/metrics.h"
#include "sim/metrics/replica_summary.h"
#include "sim/scenario/simulation_config.h"

namespace servesim {

struct EngineServeOptions {
  // Models above this many parameters are refused unless `force`: a CPU would take hours.
  static constexpr int64_t kMaxParams = 2'000'000'000;
  // Default KV-cache budget (MiB of fp32 keys and values) when neither size is given.

  Backend backend = Backend::kCpu;  // kCuda: bf16 on the GPU (a CUDA build, a device)
  int num_threads = 1;              // CPU threads of the engine. REQUIRES: >= 1
  int64_t num_gpu_blocks = 0;       // KV blocks (block 0 reserved); 0: from kv_cache_mib
  // KV-cache budget in MiB; 0: enough for max_num_seqs sequences of max_model_len tokens,
  // at most kDefaultKvCacheMib (engine/runtime/kv_cache_size.h). REQUIRES: not both sizes set.
  int64_t kv_cache_mib = 0;
  uint64_t max_requests = 0;            // stop admitting after this many; 0: the whole workload
  std::vector<std::string> checkpoint;  // .safetensors shards; empty: weights seeded by `seed`
  bool force = false;                   // run models above kMaxParams anyway
  bool profile = false;                 // per-op times in the trace and in op_totals
  std::ostream* trace = nullptr;        // one StepTrace JSON line per step; borrowed; nullptr: none
};

// One step the engine served, as a cost model sees it: its shape and the wall seconds it took.
struct ServedStep {
  BatchShape shape;
  double seconds = 0;
};

struct EngineServeResult {
  MetricsSummary summary;
  std::vector<ServedStep> steps;        // every step, in order
  std::vector<MetricsSummary> by_step;  // stepped-concurrency workloads: one per step
  std::vector<RequestRecord> records;   // every request, in the order it left
  // The engine as one replica: steps, busy_s (wall seconds inside steps), preemptions,
  // prefix-cache hit rate and evictions, op_totals (sampling and scheduling always; the
  // model's ops with `profile`). total_s is busy_s.
  ReplicaSummary engine;
  double wall_s = 0;     // seconds from run()'s start to its end
  bool stopped = false;  // the observer asked to stop before the end
  // Speculative decoding: drafts verified and, of those, accepted (0 without).
  int64_t num_draft_tokens = 0;
  int64_t num_accepted_tokens = 0;
  SpecDecodeCounters spec_counters;  // by draft position, and decodes without a match
};

class EngineServer {
 public:
  // Checks that the engine can serve the scenario and builds the weights. Throws ConfigError
  // (one line) for a model above kMaxParams without force, an architecture the engine cannot
  // run, static batching, data_parallel_size > 1, a bad KV-cache size or thread count, or a
  // checkpoint that does not load; and whatever Simulation's constructor throws for the
  // scenario itself.
  EngineServer(const SimulationConfig& config, const EngineServeOptions& options);

  const SimulationConfig& config() const { return config_; }
  // The scheduler settings the engine runs with: the simulator's, with num_gpu_blocks sized
  // for this machine.
  const SchedulerConfig& scheduler_config() const { return scheduler_config_; }
  int64_t kv_cache_bytes() const;  // fp32 keys and values of every usable block
  const Weights& weights() const { return weights_; }

  // Serves the workload in real time (blocks until every admitted request left or the
  // observer asks to stop). Records and time samples (every config.sample_interval_s of wall
  // clock, between steps) go to the observer as they happen.
  EngineServeResult run(Observer& observer) const;

 private:
  class Run;

  SimulationConfig config_;
  EngineServeOptions options_;
  SchedulerConfig scheduler_config_;
  Weights weights_;
};

// EngineServer(config, options).run(observer) in one call.
EngineServeResult serve_on_engine(const SimulationConfig& config, const EngineServeOptions& options,
                                  Observer& observer);

}  // namespace servesim
