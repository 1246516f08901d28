// DeploymentSpec: one more deployment of a simulation besides the scenario's own — another
// `vllm serve` with its own model, GPU, parallelism, engine flags and router — that an agent
// workload's llm steps call by name (a large planner model and a small reviewer model in one
// run). Each is its own cluster: its own memory plan, scheduler, cost model and replicas.
//
// Requests carry the deployment they go to (RequestSpec::deployment: 0 is the scenario's own,
// k is deployments[k - 1]). Plain value; the scenario parser checks it.
#pragma once

#include <string>

#include "models/engine_config.h"
#include "models/hardware_spec.h"
#include "models/model_spec.h"
#include "models/parallel_config.h"
#include "sim/serving/router.h"

namespace servesim {

struct DeploymentSpec {
  std::string name;  // what llm steps name it by; unique, not the scenario's own model name
  ModelSpec model;
  HardwareSpec gpu;
  ParallelConfig parallel;  // its replicas are parallel.dp
  EngineConfig engine;      // its own vLLM flags; zero sizes take vLLM's defaults for its GPU
  RouterPolicy router = RouterPolicy::kRoundRobin;  // among its replicas
};

}  // namespace servesim
