#include "sim/run/built_deployment.h"

#include <algorithm>
#include <string>

#include "models/config_error.h"
#include "models/cost_model_factory.h"
#include "models/speculative_cost_model.h"
#include "sim/serving/cluster.h"

namespace servesim {
namespace {

// KV offload: seconds a host-tier transfer costs beside its bytes: submitting the DMA copy
// and the worker's seeing it complete. An estimate, the same as the "pcie" KV-transfer
// preset's (docs/kv-offload.md); no measurement at hand.
constexpr double kHostKvLatency_s = 10e-6;

// KV offload: bytes/s per direction of each GPU's host link (engine.kv_offloading_bandwidth_GBps,
// else the GPU's PCIe figure).
double host_bandwidth_Bps(const MemoryPlan& plan, const HardwareSpec& gpu) {
  return plan.engine.kv_offloading_bandwidth_Bps.value_or(gpu.pcie_Bps);
}

// A host tier needs a link to move blocks over.
void check_host_link(const MemoryPlan& plan, const HardwareSpec& gpu) {
  if (plan.num_host_kv_blocks > 0 && !(host_bandwidth_Bps(plan, gpu) > 0)) {
    throw ConfigError("engine.kv_offloading_size_gib: GPU " + gpu.name +
                      " has no PCIe bandwidth (pcie_gbs 0); set "
                      "engine.kv_offloading_bandwidth_GBps");
  }
}

// What servesim models of vLLM's --async-scheduling: one engine core overlapping its host
// work with a single GPU step at a time, as continuous batching runs it.
void check_async_scheduling(const EngineConfig& engine, const ParallelConfig& parallel,
                            SchedulingPolicy batching) {
  if (!engine.async_scheduling) return;
  if (parallel.pp > 1) {
    throw ConfigError(
        "engine.async_scheduling with pipeline parallelism is not modelled (vLLM 0.14 turns it "
        "off there): set it false or parallel.pipeline_parallel_size 1");
  }
  if (batching == SchedulingPolicy::kStatic) {
    throw ConfigError(
        "engine.async_scheduling needs continuous batching: set engine.batching "
        "\"continuous\" or async_scheduling false");
  }
}

// The replica's share of an engine's --async-scheduling settings.
void apply_async_scheduling(const EngineConfig& engine, ReplicaOptions& options) {
  options.async_scheduling = engine.async_scheduling;
  options.async_host_overlap = engine.async_host_overlap;
}

BuiltRole build_role(const DeploymentSpec& spec, const HardwareSpec& gpu,
                     const ParallelConfig& parallel, const EngineConfig& engine,
                     const SimulationConfig& run) {
  check_async_scheduling(engine, parallel, run.batching);
  BuiltRole role;
  role.plan = MemoryPlan::compute(spec.model, gpu, parallel, engine);
  role.scheduler = scheduler_config_for(run, role.plan);
  const DeploymentCostModel& m = spec.cost_model ? *spec.cost_model : DeploymentCostModel{};
  const CostModelChoice choice{m.profile.get(), m.calibrated,
                               spec.cost_model ? m.roofline : run.roofline};
  role.cost_model = make_cost_model(choice, spec.model, gpu, parallel, role.plan.engine);
  check_host_link(role.plan, gpu);
  return role;
}

// One role's instances as its cluster makes them.
ClusterRole cluster_role(int servers, const ParallelConfig& parallel, const BuiltRole& built,
                         const ReplicaOptions& options, const HardwareSpec& gpu) {
  ClusterRole r;
  r.servers = servers;
  r.parallel = parallel;
  r.scheduler = &built.scheduler;
  r.cost_model = built.cost_model.get();
  r.options = options;
  r.kv_bytes_per_token = built.plan.kv_bytes_per_token;
  r.host_kv_bandwidth_Bps = host_bandwidth_Bps(built.plan, gpu);
  return r;
}

}  // namespace

BuiltDeployment BuiltDeployment::build(const DeploymentSpec& spec, const SimulationConfig& run) {
  const bool price_given = run.metrics.price_per_gpu_hour != 0;
  BuiltDeployment b;
  b.spec = spec;
  b.metrics = run.metrics;
  const DisaggregationSpec& d = spec.disaggregation;
  if (!d.enabled) {
    b.serving = build_role(spec, spec.gpu, spec.parallel, spec.engine, run);
    b.metrics.num_gpus = spec.parallel.total_gpus();
    if (!price_given) b.metrics.price_per_gpu_hour = spec.gpu.price_per_hour_usd;
    return b;
  }
  if (spec.parallel.dp != 1) {
    throw ConfigError(
        "parallel.data_parallel_size must be 1 with disaggregation: set "
        "disaggregation.prefill.instances and disaggregation.decode.instances instead");
  }
  if (run.batching == SchedulingPolicy::kStatic) {
    throw ConfigError(
        "engine.batching \"static\" cannot be disaggregated (a prefill instance runs each "
        "request for one token): use \"continuous\"");
  }
  try {
    b.prefill = build_role(spec, d.prefill.gpu, d.prefill.parallel, d.prefill.engine, run);
    // A prefill instance answers with the first token, which no draft precedes; its
    // speculative config only sizes its memory (a draft model's weights).
    b.prefill->scheduler.num_speculative_tokens = 0;
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("disaggregation.prefill: ") + e.what());
  }
  try {
    b.serving = build_role(spec, d.decode.gpu, d.decode.parallel, d.decode.engine, run);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("disaggregation.decode: ") + e.what());
  }
  b.metrics.num_gpus = d.total_gpus();
  if (!price_given) {
    // The deployment's hourly price spread over its GPUs.
    const double prefill_gpus = d.prefill.instances * d.prefill.parallel.total_gpus();
    const double decode_gpus = d.decode.instances * d.decode.parallel.total_gpus();
    b.metrics.price_per_gpu_hour = (prefill_gpus * d.prefill.gpu.price_per_hour_usd +
                                    decode_gpus * d.decode.gpu.price_per_hour_usd) /
                                   (prefill_gpus + decode_gpus);
  }
  return b;
}

int BuiltDeployment::max_model_len() const {
  const int serving_len = serving.scheduler.max_model_len;
  return prefill ? std::min(serving_len, prefill->scheduler.max_model_len) : serving_len;
}

double BuiltDeployment::host_kv_bandwidth_Bps(bool of_prefill) const {
  const DisaggregationSpec& d = spec.disaggregation;
  if (!d.enabled) return host_bandwidth_Bps(serving.plan, spec.gpu);
  return of_prefill ? host_bandwidth_Bps(prefill->plan, d.prefill.gpu)
                    : host_bandwidth_Bps(serving.plan, d.decode.gpu);
}

// The seeds are those runs have always used (the own deployment's routers', then each more
// one's), so fingerprints hold.
ClusterSpec BuiltDeployment::cluster_spec(uint32_t index, const SimulationConfig& run) const {
  const DisaggregationSpec& d = spec.disaggregation;
  const RooflineOptions& roofline = spec.cost_model ? spec.cost_model->roofline : run.roofline;
  ReplicaOptions options;
  options.vocab_size = spec.model.vocab_size;
  options.sliding_window = spec.model.sliding_window;
  // Only decode steps speculate: a disaggregated deployment's are its decode instances'.
  options.speculative = make_speculative_cost_model(spec.model, d.enabled ? d.decode.gpu : spec.gpu,
                                                    d.enabled ? d.decode.parallel : spec.parallel,
                                                    serving.plan.engine, roofline);
  options.seed = run.seed;
  apply_async_scheduling(serving.plan.engine, options);
  ClusterSpec c;
  c.index = index;
  c.num_layers = spec.model.num_layers;
  c.static_batch_timeout_s = run.static_batch_timeout_s;
  c.host_kv_latency_s = kHostKvLatency_s;
  c.router = d.enabled ? d.prefill_router : spec.router;
  c.router_seed = run.seed ^ (index == 0 ? 0x726f75746572ULL : 0x6465706c6f79ULL + (index - 1));
  c.decode_router = d.decode_router;
  c.decode_router_seed = run.seed ^ (0x6465636f6465ULL + index);
  c.kv_transfer = d.kv_transfer;
  if (!d.enabled) {
    c.roles.push_back(
        cluster_role(spec.parallel.servers, spec.parallel, serving, options, spec.gpu));
    return c;
  }
  ReplicaOptions prefill_options = options;
  prefill_options.speculative = nullptr;
  apply_async_scheduling(prefill->plan.engine, prefill_options);
  c.roles.push_back(cluster_role(d.prefill.instances, d.prefill.parallel, *prefill, prefill_options,
                                 d.prefill.gpu));
  c.roles.push_back(
      cluster_role(d.decode.instances, d.decode.parallel, serving, options, d.decode.gpu));
  return c;
}

}  // namespace servesim
