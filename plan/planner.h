// Planner: from a workload, a target load and SLOs to GPUs, parallelism, engine flags,
// replicas and cost — by simulation. `servesim plan` is its front end; docs/planning.md
// states the method. In short:
//   1. Enumerate candidates: GPU x TP x PP x max_num_seqs, then on each GPU disaggregated
//      groups of P:D x prefill TP x decode TP x PP x max_num_seqs (the scenario — a file,
//      or JSON the CLI builds from --model/--input-len/--output-len — gives the model, the
//      workload shape and every other flag; --fix overrides scenario keys).
//   2. Prune without simulating: invalid parallelism (TP must divide the heads), MemoryPlan
//      says it does not fit (weights, or max_model_len beyond the KV capacity), one replica
//      exceeds --max-gpus or the budget.
//   3. Per survivor, the highest load one replica sustains: a saturation probe (closed
//      loop, max_num_seqs clients per engine) bounds it by X requests/s; then bisection on [0, X]
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
// plan() runs its phases in order over one PlanState (plan/plan_state.h), each in its own
// file: SLO targets and checks (slo_check.h), candidate enumeration and memory pruning
// (candidate_enumeration.h), the load search (load_search.h), full-cluster verification
// (cluster_verification.h), ranking (candidate_ranking.h), the Pareto frontier
// (pareto_frontier.h); the report and its renderings are plan_report.h.
// Thread-safety: plan() is re-entrant; PlanReport is a plain value.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/catalog.h"
#include "plan/plan_report.h"
#include "plan/slo_check.h"
#include "plan/work_share.h"

namespace servesim {

// One disaggregated group's instance counts ("2P1D" is {2, 1}).
struct PdRatio {
  int prefill = 1;
  int decode = 1;
};

struct PlanOptions {
  std::string scenario_path;  // model, workload shape, engine flags, SLOs
  // Read instead of a file when scenario_path is empty: the scenario as its file would hold
  // it (the CLI builds one from --model/--input-len/--output-len). Relative paths in it
  // resolve against the working directory.
  nlohmann::json scenario;
  std::vector<std::string> fixed;  // scenario overrides applied first (--fix key=value)
  PlanLoad load = PlanLoad::kQps;  // what target_load counts
  double target_load = 0;          // requests/s, or concurrent clients
  std::vector<SloTarget> slos;     // empty: the scenario's slo block, read as p99
  double max_error_rate = 0;       // fraction of requests rejected or timed out
  std::vector<std::string> gpus;   // catalog names or files; empty: the whole catalog
  std::vector<int> tp;             // empty: 1, 2, 4, 8 (or the fixed value)
  std::vector<int> pp;             // empty: the scenario's
  std::vector<int> max_num_seqs;   // empty: the scenario's (vLLM's default if unset)
  // KV offload: host-tier sizes to search, GiB (vLLM --kv-offloading-size); 0 = no offload.
  // Empty: the scenario's.
  std::vector<double> kv_offloading_sizes;
  // Speculative decoding: draft tokens per step to search (vLLM num_speculative_tokens); 0 =
  // none. A value > 0 takes the rest (method, drafts, acceptance) from the scenario's
  // engine.speculative block. Empty: the scenario's.
  std::vector<int> num_speculative_tokens;
  // Prefill/decode disaggregation: the P:D instance counts of one group to search besides
  // the aggregated candidates, each role's TP from prefill_tp / decode_tp (empty: the TP
  // axis) and the scenario's kv_transfer (NixlConnector over InfiniBand without one).
  // nullopt: the scenario's disaggregation block's P:D, none without a block.
  std::optional<std::vector<PdRatio>> pd_ratios;
  std::vector<int> prefill_tp;
  std::vector<int> decode_tp;
  // Each role's GPUs (catalog names or files). Both empty: a group's roles share each GPU of
  // the gpus axis; else every prefill GPU is paired with every decode GPU, an empty list
  // standing for the gpus axis.
  std::vector<std::string> prefill_gpus;
  std::vector<std::string> decode_gpus;
  bool aggregated = true;                     // false: disaggregated candidates only
  std::optional<int> max_gpus;                // whole deployment
  std::optional<double> max_budget_per_hour;  // dollars per hour, whole deployment
  int top_k = 3;                              // candidates verified with a full-cluster simulation
  uint64_t requests = 2000;                   // requests per single-replica evaluation
  int threads = 0;                            // per process; <= 0: all cores
  // Search every candidate, even those whose cost bound rules them out of the top K (for a
  // complete table and Pareto frontier).
  bool search_all = false;
  // Polled before each candidate's step starts (on worker threads: it must be thread-safe and
  // cheap); true stops the plan: steps running finish, later ones are skipped and their
  // candidates reported kInterrupted (the CLI's Ctrl-C). Empty: never stops.
  std::function<bool()> should_stop;
};

// Throws ConfigError for bad input: unknown SLO metric, empty candidate set, contradictory
// limits, no scenario, a workload the planner cannot scale (a trace).
PlanReport plan(const PlanOptions& options, const Catalog& catalog);

// The same plan computed by every rank of `share` together: call it on every rank with the
// same options; each gets the whole report (and the same ConfigError, if any).
PlanReport plan(const PlanOptions& options, const Catalog& catalog, WorkShare& share);

}  // namespace servesim
