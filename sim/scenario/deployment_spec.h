// DeploymentSpec: one deployment of a run — a `vllm serve` (or a disaggregated prefill/decode
// pair of them) with its own model, GPU, parallelism, engine flags, router and cost model. A
// run's first deployment is the scenario's own (own_deployment() reads it off the
// SimulationConfig); an agent workload's llm steps may call more by name (a large planner
// model and a small reviewer model in one run). Each is its own Cluster, built the same way:
// its own memory plan, scheduler, cost model and replicas.
//
// Requests carry the deployment they go to (RequestSpec::deployment: 0 is the scenario's own,
// k is SimulationConfig::deployments[k - 1]). Plain value; the scenario parser checks it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "models/calibrated_cost_model.h"
#include "models/calibration_profile.h"
#include "models/engine_config.h"
#include "models/hardware_spec.h"
#include "models/model_spec.h"
#include "models/parallel_config.h"
#include "models/roofline_cost_model.h"
#include "sim/serving/disaggregation_spec.h"
#include "sim/serving/router.h"

namespace servesim {

// What prices a deployment's steps: a fitted profile of its model and GPU (`servesim calibrate
// fit`), else the roofline with these options.
struct DeploymentCostModel {
  std::shared_ptr<const CalibrationProfile> profile;  // null: the roofline
  CalibratedOptions calibrated;                       // with a profile
  RooflineOptions roofline;  // without one; also prices a speculative draft
};

struct DeploymentSpec {
  std::string name;  // what llm steps name it by; unique (the own one: its model's name)
  ModelSpec model;
  HardwareSpec gpu;
  ParallelConfig parallel;  // its replicas are parallel.dp of each of parallel.servers
  EngineConfig engine;      // its own vLLM flags; zero sizes take vLLM's defaults for its GPU
  RouterPolicy router = RouterPolicy::kRoundRobin;  // among its replicas
  // Prefill/decode disaggregation: when enabled, its roles replace gpu, parallel and engine
  // (which stay the defaults the roles were read from) and its routers replace `router`.
  DisaggregationSpec disaggregation;
  // Unset: the roofline with the scenario's cost_model options (SimulationConfig::roofline).
  std::optional<DeploymentCostModel> cost_model;
};

}  // namespace servesim
