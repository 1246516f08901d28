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

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/sched/scheduler_config.h"
#include "models/calibrated_cost_model.h"
#include "models/calibration_profile.h"
#include "models/engine_config.h"
#include "models/hardware_spec.h"
#include "models/memory_plan.h"
#include "models/model_spec.h"
#include "models/parallel_config.h"
#include "models/roofline_cost_model.h"
#include "sim/agent/session_metrics.h"
#include "sim/agent/workflow_spec.h"
#include "sim/core/observer.h"
#include "sim/metrics/metrics.h"
#include "sim/metrics/replica_summary.h"
#include "sim/service/service_spec.h"
#include "sim/service/station.h"
#include "sim/serving/cluster.h"
#include "sim/serving/deployment_spec.h"
#include "sim/serving/disaggregation_spec.h"
#include "sim/serving/router.h"
#include "sim/workload/workload.h"

namespace servesim {

struct SimulationConfig {
  ModelSpec model;
  HardwareSpec gpu;
  ParallelConfig parallel;
  EngineConfig engine;  // vLLM flags; zero sizes take vLLM's defaults for the GPU
  SchedulingPolicy batching = SchedulingPolicy::kContinuous;
  QueueOrder queue_order = QueueOrder::kFcfs;
  int long_prefill_token_threshold = 0;  // tokens; 0 = no cap
  int static_batch_size = 0;             // static batching: 0 = max_num_seqs
  double static_batch_timeout_s = 0.1;   // static batching: longest wait to fill a batch
  RooflineOptions roofline;              // the cost model unless a profile is set
  // A fitted profile (`servesim calibrate fit`): when set, it prices every step instead of
  // the roofline. Shared because sweeps and plans copy the config per point.
  std::shared_ptr<const CalibrationProfile> profile;
  CalibratedOptions calibrated;
  RouterPolicy router = RouterPolicy::kRoundRobin;
  // Prefill/decode disaggregation: when enabled, its roles replace gpu, parallel and engine
  // (which stay the defaults the roles were read from).
  DisaggregationSpec disaggregation;
  // More deployments, each its own cluster, that an agent workload's llm steps call by name
  // (RequestSpec::deployment k is deployments[k - 1]); the fields above are deployment 0's.
  std::vector<DeploymentSpec> deployments;
  WorkloadSpec workload;
  // The request path above the engine (network, gateway, API server, stages); disabled
  // ("service": "none"): requests reach the engine when sent.
  ServiceSpec service;
  MetricsOptions metrics;        // num_gpus and price are filled from the deployment
  double sample_interval_s = 1;  // seconds between time-series samples; 0 = none
  double step_warmup_s = 0;      // stepped workloads: seconds left out at each step's start
  uint64_t seed = 0;             // router and anything else random outside the workload
};

// One deployment's share of a run with several: the requests sent to it, as MetricsSummary
// counts them (its own GPUs and price per GPU for the per-GPU and cost figures).
struct DeploymentResult {
  std::string name;  // the scenario's own model name, or the deployment's "name"
  MetricsSummary summary;
};

struct SimulationResult {
  MetricsSummary summary;
  std::vector<MetricsSummary> by_step;  // stepped-concurrency workloads: one per step
  std::vector<ReplicaSummary> replicas;
  std::string fingerprint;  // hex digest of the event trace
  uint64_t events = 0;
  double simulated_s = 0;  // simulated time at the end of the run
  bool stopped = false;    // the observer asked to stop before the end
  // Calibrated cost model with extrapolate: steps beyond the profile's range (else 0).
  int64_t extrapolated_steps = 0;
  std::vector<StationStats> stations;      // the service path's stations; empty without one
  std::optional<SessionSummary> sessions;  // agent workloads: the sessions' metrics
  std::vector<TenantSummary> tenants;      // per service tenant; empty without tenants
  // With more deployments: each one's requests, the scenario's own first; else empty.
  std::vector<DeploymentResult> deployments;
};

// The scheduler settings a deployment runs with: vLLM's flags as the memory plan resolved
// them (KV blocks included) plus the scenario's batching policy. One function, so the
// simulator and the real-time engine server schedule alike. Throws ConfigError on invalid
// settings.
SchedulerConfig scheduler_config_for(const SimulationConfig& config, const MemoryPlan& plan);

// The run's own settings (static-batch timeout, sample interval) as both serving loops check
// them. Throws ConfigError naming the key.
void check_run_settings(const SimulationConfig& config);

// More deployments are for agent workloads: a ConfigError names what else the config has
// (another workload, a session trace).
void check_deployments(const SimulationConfig& config);

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
  // Throws ConfigError when the deployment does not fit or a setting is invalid.
  explicit Simulation(SimulationConfig config);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  const SimulationConfig& config() const { return config_; }
  // A disaggregated deployment's decode instances' (the prefill instances' below).
  const MemoryPlan& memory_plan() const { return own_.plan; }
  const SchedulerConfig& scheduler_config() const { return own_.scheduler; }
  const CostModel& cost_model() const { return *own_.cost_model; }
  const MemoryPlan& prefill_memory_plan() const { return prefill_.plan; }
  const SchedulerConfig& prefill_scheduler_config() const { return prefill_.scheduler; }
  // config().deployments[k]'s.
  const MemoryPlan& deployment_memory_plan(size_t k) const { return deployments_[k].plan; }
  const SchedulerConfig& deployment_scheduler_config(size_t k) const {
    return deployments_[k].scheduler;
  }
  // What an agent workload's llm steps are checked against: this deployment.
  AgentLimits agent_limits() const;
  // KV offload: bytes/s per direction of each GPU's host link
  // (engine.kv_offloading_bandwidth_GBps, else the GPU's PCIe figure); a disaggregated
  // deployment's decode instances', or with `prefill` its prefill instances'.
  double host_kv_bandwidth_Bps(bool prefill = false) const;

  // Throws SimulationStalled (above).
  SimulationResult run(Observer& observer);

 private:
  class Driver;
  struct Role {  // one role's instances as built: what each of them runs with
    MemoryPlan plan;
    SchedulerConfig scheduler;
    std::unique_ptr<CostModel> cost_model;
  };
  Role build_role(const HardwareSpec& gpu, const ParallelConfig& parallel,
                  const EngineConfig& engine) const;
  void build_disaggregated();
  void build_deployments(bool price_given);
  // The GPU of the decode instances (or with `prefill` the prefill instances); the scenario's
  // when aggregated.
  const HardwareSpec& gpu_of(bool prefill) const;
  std::vector<ClusterSpec> cluster_specs() const;

  SimulationConfig config_;
  Role own_;      // the scenario's own deployment (a disaggregated one's decode instances)
  Role prefill_;  // disaggregated deployments only
  std::vector<Role> deployments_;  // config_.deployments' (deployment k + 1)
  // With more deployments, each one's metric options (its GPUs, their price), the own first.
  std::vector<MetricsOptions> deployment_metrics_;
};

}  // namespace servesim
