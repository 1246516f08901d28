#include "sim/scenario/simulation_config.h"

#include <string>

#include "models/config_error.h"

namespace servesim {

DeploymentSpec own_deployment(const SimulationConfig& config) {
  DeploymentSpec d;
  d.name = config.model.name;
  d.model = config.model;
  d.gpu = config.gpu;
  d.parallel = config.parallel;
  d.engine = config.engine;
  d.router = config.router;
  d.disaggregation = config.disaggregation;
  d.cost_model = DeploymentCostModel{config.profile, config.calibrated, config.roofline};
  return d;
}

SchedulerConfig scheduler_config_for(const SimulationConfig& config, const MemoryPlan& plan) {
  const EngineConfig& e = plan.engine;
  SchedulerConfig sc;
  sc.max_num_seqs = e.max_num_seqs;
  sc.max_num_batched_tokens = e.max_num_batched_tokens;
  sc.max_model_len = e.max_model_len;
  sc.block_size = e.block_size;
  sc.num_gpu_blocks = plan.num_gpu_blocks;
  sc.enable_chunked_prefill = e.enable_chunked_prefill;
  sc.enable_prefix_caching = e.enable_prefix_caching;
  sc.long_prefill_token_threshold = config.long_prefill_token_threshold;
  sc.policy = config.batching;
  sc.queue_order = config.queue_order;
  sc.static_batch_size = config.static_batch_size;
  sc.hash_salt = config.seed;
  sc.num_speculative_tokens = e.speculative ? e.speculative->num_speculative_tokens : 0;
  sc.num_host_kv_blocks = plan.num_host_kv_blocks;
  sc.validate();
  return sc;
}

void check_run_settings(const SimulationConfig& config) {
  if (!(config.static_batch_timeout_s >= 0)) {
    throw ConfigError("engine.static_batch_timeout_s must be >= 0");
  }
  if (!(config.sample_interval_s >= 0)) {
    throw ConfigError("metrics.sample_interval_s must be >= 0");
  }
}

void check_deployments(const SimulationConfig& config) {
  if (config.deployments.empty()) return;
  if (config.workload.kind != WorkloadKind::kAgent) {
    throw ConfigError(
        "deployments: only an agent workload's llm steps call another deployment (by its "
        "\"deployment\"); other workloads send every request to the scenario's own: remove "
        "\"deployments\" or simulate each deployment apart");
  }
  const nlohmann::json& agent = config.workload.agent;
  if (agent.is_object() && ((agent.contains("record_trace") && agent.at("record_trace") == true) ||
                            agent.contains("trace"))) {
    throw ConfigError(
        "deployments: a session trace has no deployment per call yet, so one run with several "
        "deployments can neither record nor replay one (drop agent.record_trace / agent.trace)");
  }
}

}  // namespace servesim
