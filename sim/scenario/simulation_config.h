// SimulationConfig: one run's whole what-if as a value — the scenario's own deployment (model,
// GPU, parallelism, vLLM flags, cost model, router, disaggregation), more deployments an agent
// workload calls by name, the workload, the service path above the engine, metric options and
// the seed. Scenario (scenario.h) reads it from JSON; the simulator, the real-time engine
// server and the load tester run it. Plain value, copied per sweep point (a profile is shared).
#pragma once

#include <cstdint>
#include <memory>
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
#include "sim/metrics/metrics.h"
#include "sim/scenario/deployment_spec.h"
#include "sim/service/service_spec.h"
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

// The scenario's own deployment (deployment 0) as a DeploymentSpec: its model, GPU,
// parallelism, engine, router, disaggregation and cost model.
DeploymentSpec own_deployment(const SimulationConfig& config);

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

}  // namespace servesim
