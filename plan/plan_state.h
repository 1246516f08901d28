// PlanState: the one state plan() (plan/planner.h) builds and its phases fill in, in order:
//   construction           options checked, scenario read, SLOs resolved, evaluator built
//   enumerate_candidates   gpus, candidates, gpu_of, prefill_gpu_of, memory_plans, order;
//                          report.enumerated
//   search_loads           probes; each candidate's outcome; report.simulated, .searched
//   verify_clusters        order (ranked), the top K's outcome
//   rank_candidates        order (re-ranked); report.candidates, .simulations
//   find_pareto_frontier   report.pareto
// A phase reads what the phases before it wrote and writes only what its line names.
// Ownership: owns everything but the catalog and the WorkShare, which must outlive it.
// Thread-safety: phases run one after another on the calling thread; inside a step they
// run items on worker threads through share_for_candidates(), each item writing only its
// own candidate's slots. Every rank of `share` holds the same state after each step.
// Invariants:
//   1. candidates, gpu_of, prefill_gpu_of, memory_plans and probes are indexed alike: by
//      candidate index, in enumeration order (plan/candidate_enumeration.h), never
//      reordered — which keeps the report independent of thread and rank counts.
//   2. order is a permutation of the candidate indices; only ranking reorders it.
//   3. options, scenario and evaluator are fixed at construction (const).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/catalog.h"
#include "models/hardware_spec.h"
#include "models/memory_plan.h"
#include "models/speculative_config.h"
#include "plan/evaluator.h"
#include "plan/planner.h"
#include "plan/work_share.h"
#include "sim/scenario/scenario.h"

namespace servesim {

// Whether a --fix override sets `key` ("gpu", "parallel.tensor_parallel_size", ...).
bool is_fixed(const PlanOptions& options, const std::string& key);

// The speculative decoding a --num-speculative-tokens value > 0 varies: the scenario's
// engine.speculative, else its disaggregated decode role's; nullopt when it has neither.
const std::optional<SpeculativeConfig>& speculation_of(const SimulationConfig& config);

// What a step's items send to the ranks that did not run them.
enum class SharedOutcome {
  kCandidate,          // the candidate's outcome fields
  kCandidateAndProbe,  // those and its saturation probe
};

// What share_for_candidates does with an item it skips after a stop.
enum class WhenStopped { kMarkInterrupted, kSkip };

struct PlanState {
  // Throws ConfigError for bad options, an unreadable scenario, a trace workload or no SLO.
  PlanState(const PlanOptions& options, const Catalog& catalog, WorkShare& share);
  PlanState(const PlanState&) = delete;
  PlanState& operator=(const PlanState&) = delete;

  // Runs body(i) for each candidate index i in `items` across `share` on options.threads
  // threads, then gives every rank what `shared` names of each candidate.
  // Once options.should_stop asks to stop, items not yet started are skipped: with
  // kMarkInterrupted their candidate becomes kInterrupted, with kSkip it is left as it was.
  void share_for_candidates(const std::vector<size_t>& items,
                            const std::function<void(size_t)>& body, SharedOutcome shared,
                            WhenStopped when_stopped = WhenStopped::kMarkInterrupted);
  // Whether options.should_stop asked to stop; latched, so that one Ctrl-C stops every later
  // step. Thread-safe.
  bool stop_requested();
  // Candidate i as `replicas` replicas at `value` of `load` for `requests` requests, on its
  // GPUs (Evaluator::config).
  SimulationConfig config(size_t i, int replicas, PlanLoad load, double value,
                          uint64_t requests) const;
  // Whether a stop was latched: some step was skipped.
  bool stopped() const { return stopped_.load(std::memory_order_relaxed); }

  const Catalog& catalog;
  WorkShare& share;
  const PlanOptions options;  // checked; slos from the scenario's slo block when none given
  const Scenario scenario;    // --fix applied; scenario.config is the base of every candidate
  const Evaluator evaluator;

  // The GPU axis, then the disaggregated roles' GPUs that are not on it.
  std::vector<HardwareSpec> gpus;
  std::vector<PlanCandidate> candidates;
  std::vector<size_t> gpu_of;            // per candidate: index into gpus (a group's decode role's)
  std::vector<size_t> prefill_gpu_of;    // per candidate: a group's prefill role's; else gpu_of
  std::vector<MemoryPlan> memory_plans;  // per candidate; default for an invalid one
  std::vector<Evaluation> probes;        // per candidate: its saturation probe, if it had one
  std::vector<size_t> order;             // candidate indices, best first once ranked

  PlanReport report;

 private:
  struct Inputs;  // what is read before the evaluator can be built
  static Inputs read_inputs(const PlanOptions& options, const Catalog& catalog);
  PlanState(Inputs inputs, const Catalog& catalog, WorkShare& share);

  std::atomic<bool> stopped_{false};
};

}  // namespace servesim
