// PlanReport: what plan() returns — every candidate it enumerated, ranked, with what the
// search found and what serving the target takes, the Pareto frontier, and its renderings
// (phase 6 of plan(), plan/planner.h): the ranked table, JSON, CSV, the frontier's CSV and the
// winner's `vllm serve` line.
// Ownership: plain values; a ParetoPoint refers to a candidate by its rank.
// Thread-safety: none needed; the renderings are const and read only the report.
// Invariants: candidates are in rank order (feasible first, verified before unverified);
// every ParetoPoint::candidate < candidates.size(); pareto is by tokens/s per user ascending.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "models/engine_config.h"
#include "plan/slo_check.h"
#include "sim/metrics/metrics.h"

namespace servesim {

enum class PlanLoad { kQps, kConcurrency };

enum class CandidateStatus {
  kFeasible,        // meets the SLOs within the limits
  kDominated,       // not searched: its cost bound exceeds the K-th cheapest feasible
  kOverLimits,      // meets the SLOs, but needs more GPUs or money than allowed
  kSloUnreachable,  // misses an SLO even at the lowest load searched
  kDoesNotFit,      // pruned by MemoryPlan
  kInvalid,         // parallelism or flags the engine rejects
  kInterrupted,     // not searched: the plan was stopped (Ctrl-C) before its turn
};

struct PlanCandidate {
  // What it is.
  std::string gpu;
  int tp = 1;
  int pp = 1;
  // Expert parallelism: one server of dp data-parallel replicas whose MoE layers split the
  // experts over EP = tp x dp ranks (vLLM --enable-expert-parallel --data-parallel-size dp);
  // a "replica" below is then that whole server.
  bool expert_parallel = false;
  int dp = 1;
  // Prefill/decode disaggregation ("xPyD"): a replica below is then one group of
  // prefill_instances prefill instances on prefill_gpu and decode_instances decode instances
  // on gpu, joined by the scenario's KV transfer; tp and pp (and engine, kv_cache_tokens) are
  // the decode role's, prefill_tp and prefill_engine the prefill role's. 0 prefill instances:
  // aggregated.
  int prefill_instances = 0;
  int decode_instances = 0;
  std::string prefill_gpu;  // catalog name; a group's only
  int prefill_tp = 0;
  EngineConfig prefill_engine;  // resolved flags of a prefill instance
  int max_num_seqs = 0;         // sequences; resolved (vLLM's default filled in); a group's
                                // decode instances'
  EngineConfig engine;          // resolved flags, for the vllm serve line
  int gpus_per_replica = 1;
  double price_per_gpu_hour = 0;  // dollars; a group of two GPU types: its mean per GPU
  int64_t kv_cache_tokens = 0;    // per replica (expert parallel: per data-parallel rank)

  // What the search found. This and the next block are what the search steps write; a step
  // run across processes sends them to every rank (outcome_fields() in
  // plan/candidate_outcome.h lists them: a field added here must be added there).
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
  double usd_per_million_tokens = 0;  // dollars; input + output, at the target load
  double headroom = 0;                // fraction: replicas x sustained / target - 1
  bool verified = false;              // a full-cluster simulation met the SLOs
  bool verify_failed = false;         // verified but missed an SLO even with extra replicas
  MetricsSummary predicted;           // cluster at the target if verified, else at_sustained
  std::string suggestion;             // infeasible: what would have to change
  double gap = 0;                     // infeasible: how far off, as a ratio (1 = just)

  bool disaggregated() const { return prefill_instances > 0; }
  // Sequences one replica holds at once: max_num_seqs of each engine (every instance of a
  // group: a prefill instance holds its queue).
  int slots() const {
    return disaggregated()
               ? prefill_instances * prefill_engine.max_num_seqs + decode_instances * max_num_seqs
               : max_num_seqs;
  }
  // "TP2 PP1", "TP2 PP2 EP8 (DP4)", or for a disaggregated group "2P TP1 + 1D TP2" (both
  // roles on gpu) or "2P L40S TP1 + 1D H200 TP2".
  bool mixed_gpus() const { return disaggregated() && prefill_gpu != gpu; }
  std::string shape() const;
};

struct ParetoPoint {
  size_t candidate = 0;              // index into PlanReport::candidates
  std::string load;                  // "slo" (at the sustained load) or "saturation"
  double tokens_per_s_per_user = 0;  // output tokens/s: 1 / mean TPOT
  double tokens_per_s_per_gpu = 0;   // output tokens/s of one replica / its GPUs
};

struct PlanReport {
  std::string model;
  std::string model_repo;  // Hugging Face repo for `vllm serve`; may be empty
  std::string scenario;
  PlanLoad load = PlanLoad::kQps;
  double target_load = 0;  // requests/s, or concurrent clients
  // The target counts multi-turn sessions started per second (an open-loop multi_turn
  // workload's arrival process starts sessions), not requests.
  bool sessions = false;
  std::vector<SloTarget> slos;
  double max_error_rate = 0;  // fraction of requests
  uint64_t requests = 0;      // requests per single-replica evaluation
  size_t enumerated = 0;      // candidates before pruning
  size_t simulated = 0;       // candidates that fit and got a saturation probe
  size_t searched = 0;        // of those, candidates whose sustained load was searched
  uint64_t simulations = 0;
  // Disaggregated candidates' KV transfer: vLLM's kv_connector and the link preset.
  std::string kv_connector;
  std::string kv_link;
  // Stopped by PlanOptions::should_stop: the candidates searched before are ranked as usual
  // (the top K maybe unverified), the rest are kInterrupted.
  bool interrupted = false;
  // Ranked: feasible (verified first), then the rest by how close they came.
  std::vector<PlanCandidate> candidates;
  std::vector<ParetoPoint> pareto;  // the frontier, by tokens/s per user ascending

  bool feasible() const {
    return !candidates.empty() && candidates.front().status == CandidateStatus::kFeasible;
  }
  // `vllm serve ...` for candidates.front(): one line, or a disaggregated winner's prefill
  // and decode instances' lines (in that order, both with --kv-transfer-config); empty when
  // nothing is feasible.
  std::vector<std::string> vllm_commands() const;

  nlohmann::json to_json() const;
  std::string to_csv() const;  // one line per candidate, in rank order
  std::string pareto_csv() const;
  std::string to_table(size_t rows) const;  // ranked table, winner and its command, or why not
};

std::string_view candidate_status_name(CandidateStatus status);

}  // namespace servesim
