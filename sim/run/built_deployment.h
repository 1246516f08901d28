// BuiltDeployment: one deployment of a run as built before it runs — each role's memory plan
// (vLLM's start-up budget, KV blocks included), scheduler settings and cost model, the GPUs
// and price its requests' metrics count, and the ClusterSpec its Cluster is made from. Every
// deployment of a run, the scenario's own and each more one, aggregated or disaggregated, is
// built by this one function; a new kind of deployment is a new case here and in Cluster.
//
// Ownership: owns its cost models; a ClusterSpec it makes borrows its scheduler configs and
// cost models, so the BuiltDeployment must outlive the Cluster. Immutable once built.
#pragma once

#include <memory>
#include <optional>

#include "engine/sched/scheduler_config.h"
#include "models/cost_model.h"
#include "models/memory_plan.h"
#include "sim/metrics/metrics.h"
#include "sim/scenario/deployment_spec.h"
#include "sim/scenario/simulation_config.h"

namespace servesim {

// sim/serving/cluster.h; not included here, so front ends that show a Simulation (the Qt GUI,
// whose `emit` macro the scheduler's header would meet) need not see the replicas.
struct ClusterSpec;

struct BuiltRole {
  MemoryPlan plan;
  SchedulerConfig scheduler;
  std::unique_ptr<CostModel> cost_model;
};

struct BuiltDeployment {
  DeploymentSpec spec;
  std::optional<BuiltRole> prefill;  // disaggregated: the prefill instances
  BuiltRole serving;                 // the replicas, or a disaggregated one's decode instances
  MetricsOptions metrics;            // num_gpus: its own; price_per_gpu_hour: of its GPUs

  // Sizes and prices `spec` as a deployment of `run` (its batching policy, seed, metric
  // options; a price_per_gpu_hour set there holds for every GPU). Throws ConfigError naming
  // the key, a role's prefixed "disaggregation.prefill: " or "disaggregation.decode: ".
  static BuiltDeployment build(const DeploymentSpec& spec, const SimulationConfig& run);

  // The spec of its Cluster as deployment `index` of `run` (the run it was built for).
  ClusterSpec cluster_spec(uint32_t index, const SimulationConfig& run) const;
  // Tokens: the longest request it serves (a disaggregated one's shorter role's).
  int max_model_len() const;
  // KV offload: bytes/s per direction of each GPU's host link of the serving role (with
  // `prefill`, of the prefill role: REQUIRES a disaggregated deployment).
  double host_kv_bandwidth_Bps(bool prefill = false) const;
};

}  // namespace servesim
