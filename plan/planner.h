// Planner: from a workload, a target load and SLOs to GPUs, parallelism, engine flags,
// replicas and cost — by simulation. `servesim plan` is its front end; docs/planning.md
// states the method. In short:
//   1. Enumerate candidates: GPU x TP x PP x max_num_seqs (the scenario — a file, or JSON
//      the CLI builds from --model/--input-len/--output-len — gives the model, the workload
//      shape and every other flag; --fix overrides scenario keys).
//   2. Prune without simulating: invalid parallelism (TP must divide the heads), MemoryPlan
//      says it does not fit (weights, or max_model_len beyond the KV capacity), one replica
//      exceeds --max-gpus or the budget.
//   3. Per survivor, the highest load one replica sustains: a saturation probe (closed
//      loop, max_num_seqs clients) bounds it by X requests/s; then bisection on [0, X]
//      (or on clients in [0, 2 max_num_seqs]) until (hi - lo) <= 5% of hi or 7 steps. A load
//      is sustained when every SLO percentile holds, the error rate is within the limit and
//      (open loop) completed requests/s reach 90% of the offered rate. Every evaluation
//      uses the same seed, so the search is deterministic.
//   4. Replicas = ceil(target / sustained); cost = GPUs x price; $/1M tokens at the target.
//      Candidates are searched in order of a cost lower bound (replicas at the probe's
//      capacity); once K feasible ones are known, those whose bound exceeds the K-th cost
//      are skipped (reported as not searched) unless search_all is set.
//   5. Rank by $/hour (then headroom, then fewer GPUs); verify the top K with a
//      full-cluster simulation at the target load (router included), adding up to two
//      replicas when the cluster misses an SLO; verified candidates rank first.
// Candidates run on a thread pool; results are stored by candidate index, so the report is
// byte-identical whatever the thread count. Across processes (mpirun), each step's
// candidates are split among the ranks of a WorkShare and every rank receives every
// result before the next step, so every rank's report is the one a process alone makes.
// Thread-safety: plan() is re-entrant; PlanReport is a plain value.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/catalog.h"
#include "models/memory_plan.h"
#include "plan/work_share.h"
#include "sim/metrics/metrics.h"

namespace servesim {

enum class SloMetric { kTtft, kTpot, kItl, kE2e };

struct SloTarget {
  SloMetric metric = SloMetric::kTtft;
  int percentile = 99;  // 50, 90, 95 or 99
  double limit_s = 0;   // seconds (per output token for TPOT and ITL)

  std::string name() const;  // "ttft:p99"
};

// "ttft:p99=0.5" (seconds; also "500ms"). Throws ConfigError naming --slo.
SloTarget parse_slo_target(const std::string& spec);

enum class PlanLoad { kQps, kConcurrency };

struct PlanOptions {
  std::string scenario_path;  // model, workload shape, engine flags, SLOs
  // Read instead of a file when scenario_path is empty: the scenario as its file would hold
  // it (the CLI builds one from --model/--input-len/--output-len). Relative paths in it
  // resolve against the working directory.
  nlohmann::json scenario;
  std::vector<std::string> fixed;             // scenario overrides applied first (--fix key=value)
  PlanLoad load = PlanLoad::kQps;             // what target_load counts
  double target_load = 0;                     // requests/s, or concurrent clients
  std::vector<SloTarget> slos;                // empty: the scenario's slo block, read as p99
  double max_error_rate = 0;                  // fraction of requests rejected or timed out
  std::vector<std::string> gpus;              // catalog names or files; empty: the whole catalog
  std::vector<int> tp;                        // empty: 1, 2, 4, 8 (or the fixed value)
  std::vector<int> pp;                        // empty: the scenario's
  std::vector<int> max_num_seqs;              // empty: the scenario's (vLLM's default if unset)
  std::optional<int> max_gpus;                // whole deployment
  std::optional<double> max_budget_per_hour;  // dollars per hour, whole deployment
  int top_k = 3;                              // candidates verified with a full-cluster simulation
  uint64_t requests = 2000;                   // requests per single-replica evaluation
  int threads = 0;                            // per process; <= 0: all cores
  // Search every candidate, even those whose cost bound rules them out of the top K (for a
  // complete table and Pareto frontier).
  bool search_all = false;
};

enum class CandidateStatus {
  kFeasible,        // meets the SLOs within the limits
  kDominated,       // not searched: its cost bound exceeds the K-th cheapest feasible
  kOverLimits,      // meets the SLOs, but needs more GPUs or money than allowed
  kSloUnreachable,  // misses an SLO even at the lowest load searched
  kDoesNotFit,      // pruned by MemoryPlan
  kInvalid,         // parallelism or flags the engine rejects
};

struct PlanCandidate {
  // What it is.
  std::string gpu;
  int tp = 1;
  int pp = 1;
  int max_num_seqs = 0;  // resolved (vLLM's default filled in)
  EngineConfig engine;   // resolved flags, for the vllm serve line
  int gpus_per_replica = 1;
  double price_per_gpu_hour = 0;  // dollars
  int64_t kv_cache_tokens = 0;    // per replica

  // What the search found. This and the next block are what the search steps write; a step
  // run across processes sends them to every rank (outcome_fields() in plan/planner.cpp
  // lists them: a field added here must be added there).
  CandidateStatus status = CandidateStatus::kInvalid;
  std::string reason;    // pruned/failed: why; else what limits the load
  std::string limit;     // "KV capacity", "compute", "bandwidth", "SLO ttft:p99", "memory", ...
  double capacity = 0;   // saturation probe: requests/s of one replica
  double sustained = 0;  // per replica: requests/s or clients
  int evaluations = 0;   // simulations run for this candidate
  MetricsSummary at_sustained;  // one replica at the sustained load

  // What it takes to serve the target.
  int replicas = 0;
  int total_gpus = 0;
  double cost_per_hour = 0;           // dollars
  double usd_per_million_tokens = 0;  // input + output, at the target load
  double headroom = 0;                // replicas x sustained / target - 1
  bool verified = false;              // a full-cluster simulation met the SLOs
  bool verify_failed = false;         // verified but missed an SLO even with extra replicas
  MetricsSummary predicted;           // cluster at the target if verified, else at_sustained
  std::string suggestion;             // infeasible: what would have to change
  double gap = 0;                     // infeasible: how far off (1 = just), for ordering
};

struct ParetoPoint {
  size_t candidate = 0;              // index into PlanReport::candidates
  std::string load;                  // "slo" (at the sustained load) or "saturation"
  double tokens_per_s_per_user = 0;  // 1 / mean TPOT
  double tokens_per_s_per_gpu = 0;   // output tokens/s of one replica / its GPUs
};

struct PlanReport {
  std::string model;
  std::string model_repo;  // Hugging Face repo for `vllm serve`; may be empty
  std::string scenario;
  PlanLoad load = PlanLoad::kQps;
  double target_load = 0;
  std::vector<SloTarget> slos;
  double max_error_rate = 0;
  uint64_t requests = 0;
  size_t enumerated = 0;  // candidates before pruning
  size_t simulated = 0;   // candidates that fit and got a saturation probe
  size_t searched = 0;    // of those, candidates whose sustained load was searched
  uint64_t simulations = 0;
  // Ranked: feasible (verified first), then the rest by how close they came.
  std::vector<PlanCandidate> candidates;
  std::vector<ParetoPoint> pareto;  // the frontier, by tokens/s per user ascending

  bool feasible() const {
    return !candidates.empty() && candidates.front().status == CandidateStatus::kFeasible;
  }
  // `vllm serve ...` for candidates.front(); empty when nothing is feasible.
  std::string vllm_command() const;

  nlohmann::json to_json() const;
  std::string to_csv() const;  // one line per candidate, in rank order
  std::string pareto_csv() const;
  std::string to_table(size_t rows) const;  // ranked table, winner and its command, or why not
};

std::string_view candidate_status_name(CandidateStatus status);

// Throws ConfigError for bad input: unknown SLO metric, empty candidate set, contradictory
// limits, no scenario, a workload the planner cannot scale (a trace).
PlanReport plan(const PlanOptions& options, const Catalog& catalog);

// The same plan computed by every rank of `share` together: call it on every rank with the
// same options; each gets the whole report (and the same ConfigError, if any).
PlanReport plan(const PlanOptions& options, const Catalog& catalog, WorkShare& share);

}  // namespace servesim
