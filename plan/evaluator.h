// Evaluator: one simulation of a candidate at one load, judged against the plan's SLOs — the
// unit every search step (plan/load_search.h, plan/cluster_verification.h) is made of. It
// turns the scenario into a run of a candidate at a load (keeping the scenario's arrival
// shape), and an outcome into pass or the first constraint missed.
// Ownership: owns copies of the base config, the scenario's arrival JSON and the SLOs.
// Thread-safety: const after construction; config() and evaluate() may run on many threads.
// Invariant: every evaluation of equal arguments gives an equal Evaluation (seeds come
// from the scenario), which is what makes the plan deterministic.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plan/planner.h"
#include "sim/run/simulation.h"

namespace servesim {

struct Evaluation {
  bool pass = false;
  std::string failed;  // the first constraint missed: "ttft:p99", "error rate", "throughput"
  MetricsSummary summary;
  int64_t steps = 0;  // steps of replica 0
};

// The fields of an Evaluation, in a fixed order, for the ranks that did not run it
// (PlanState::share_for_candidates).
template <typename E, typename Field>
void evaluation_fields(E& e, Field&& field) {
  field(e.pass);
  field(e.failed);
  field(e.summary);
  field(e.steps);
}

class Evaluator {
 public:
  // open_arrival: the scenario's open-loop arrival JSON, scaled per run to keep its shape
  // (burstiness, on/off); null when it has none. kv_transfer: the scenario's
  // disaggregation.kv_transfer JSON, resolved per GPU for disaggregated candidates (its
  // nvlink and pcie presets are the GPU's); null: vLLM's NixlConnector over InfiniBand.
  // Throws ConfigError if either does not parse.
  Evaluator(const PlanOptions& options, SimulationConfig base, nlohmann::json open_arrival,
            nlohmann::json kv_transfer);

  // The scenario as `replicas` replicas (disaggregated: groups) of `c` on `gpu` (a group's
  // prefill instances on `prefill_gpu`), offered `value` (requests/s, or clients when `load`
  // counts concurrency) for `requests` requests.
  SimulationConfig config(const HardwareSpec& gpu, const HardwareSpec& prefill_gpu,
                          const PlanCandidate& c, int replicas, PlanLoad load, double value,
                          uint64_t requests) const;

  // A disaggregated candidate's KV transfer from `prefill` GPUs to `decode` GPUs: a link
  // preset takes the slower side's figures. Throws ConfigError when the preset does not join
  // them (nvlink on a PCIe-only GPU, or between two GPU types).
  KvTransferSpec kv_transfer(const HardwareSpec& prefill, const HardwareSpec& decode) const;
  // The engine flags a disaggregated role starts from: the scenario's role's, or its
  // top-level engine block without a disaggregation block.
  const EngineConfig& role_engine(bool prefill) const;

  // offered_qps: open loop's offered rate (checked against throughput); NaN for closed.
  // early_stop: give up as soon as the outcome is sure to fail (SloWatch).
  Evaluation evaluate(const SimulationConfig& cfg, double offered_qps, bool early_stop) const;

 private:
  void cap_kv_blocks(SimulationConfig& cfg, const PlanCandidate& c) const;
  void set_disaggregation(SimulationConfig& cfg, const HardwareSpec& gpu,
                          const HardwareSpec& prefill_gpu, const PlanCandidate& c,
                          int groups) const;
  void set_load(WorkloadSpec& w, PlanLoad load, double value) const;

  std::vector<SloTarget> slos_;
  double max_error_rate_ = 0;              // fraction of requests
  PlanLoad target_load_ = PlanLoad::kQps;  // what the plan's target counts
  SimulationConfig base_;
  nlohmann::json open_arrival_;        // the scenario's open-loop arrival JSON; null if none
  nlohmann::json kv_transfer_;         // the scenario's kv_transfer JSON; null if none
  double base_mean_qps_ = 1;           // requests/s of open_arrival_ as the scenario gives it
  bool reuses_prefixes_ = true;        // shared prefixes, sessions, repeats hit the cache
  double longest_request_tokens_ = 0;  // prompt + output, tokens; may be infinite
};

}  // namespace servesim
