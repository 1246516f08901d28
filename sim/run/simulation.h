// Simulation: one run of a serving deployment — data-parallel Replicas (each the shared
// Scheduler plus a SimulatedExecutor over a CostModel) behind a Router, fed by a workload's
// RequestSource, on an EventLoop in simulated time. Produces the metrics vLLM's benchmark
// reports and a fingerprint of the event trace.
//
// Construction sizes the KV cache with MemoryPlan (so a deployment that does not fit fails
// with the planner's one-line error), builds the cost model and checks an agent workload's
// workflows against the deployment; run() may be called once.
// Determinism: every random draw comes from seeds in the config; equal configs give equal
// results and fingerprints, byte for byte.
// Memory: bounded by the requests in flight plus the per-request metric samples (one float
// per metric per request) and the ITL sketch; nothing is stored per token.
// Ownership: owns everything it builds; borrows the Observer during run(). Not thread-safe;
// run it on a worker thread and let the observer forward.
#pragma once

#include <stdexcept>
#include <vector>

#include "models/cost_model.h"
#include "sim/agent/workflow_spec.h"
#include "sim/core/observer.h"
#include "sim/run/built_deployment.h"
#include "sim/run/simulation_result.h"
#include "sim/scenario/simulation_config.h"

namespace servesim {

// run() found nothing left to execute while requests were still in the system, so nothing
// would ever finish them (a decode instance that preempted its only request once stopped
// scheduling for good), or engine steps going on without any request producing a token or
// leaving for far longer than any prompt could take (a livelock). That is a defect of the
// model, never a result: the run ends with this error, naming where the requests sit, instead
// of a summary that silently leaves them out or a run that never ends.
class SimulationStalled : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Simulation {
 public:
  // Throws ConfigError when a deployment does not fit or a setting is invalid.
  explicit Simulation(SimulationConfig config);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  const SimulationConfig& config() const { return config_; }
  // Every deployment as built, the scenario's own first (RequestSpec::deployment indexes it).
  const std::vector<BuiltDeployment>& deployments() const { return deployments_; }
  // The own deployment's: a disaggregated one's decode instances' (the prefill instances'
  // below; without disaggregation those are empty).
  const MemoryPlan& memory_plan() const { return own().serving.plan; }
  const SchedulerConfig& scheduler_config() const { return own().serving.scheduler; }
  const CostModel& cost_model() const { return *own().serving.cost_model; }
  const MemoryPlan& prefill_memory_plan() const { return own_prefill().plan; }
  const SchedulerConfig& prefill_scheduler_config() const { return own_prefill().scheduler; }
  // What an agent workload's llm steps are checked against: every deployment.
  AgentLimits agent_limits() const;
  // KV offload: bytes/s per direction of each GPU's host link
  // (engine.kv_offloading_bandwidth_GBps, else the GPU's PCIe figure); a disaggregated
  // deployment's decode instances', or with `prefill` its prefill instances'.
  double host_kv_bandwidth_Bps(bool prefill = false) const;

  // Throws SimulationStalled (above).
  SimulationResult run(Observer& observer);

 private:
  class Driver;
  const BuiltDeployment& own() const { return deployments_.front(); }
  const BuiltRole& own_prefill() const;
  // The whole run's GPUs and price per GPU-hour over every deployment.
  void count_gpus();

  SimulationConfig config_;
  std::vector<BuiltDeployment> deployments_;  // the own first; never empty once built
};

}  // namespace servesim
