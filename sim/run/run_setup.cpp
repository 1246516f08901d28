#include "sim/run/run_setup.h"

#include <cstdio>
#include <filesystem>
#include <optional>

#include "models/cuda_graph_mode.h"
#include "models/json_file.h"

namespace servesim {
namespace {

std::string weights_dtype(const SimulationConfig& c) {
  return std::string(dtype_name(c.engine.dtype.value_or(c.model.native_dtype)));
}

std::string kv_dtype(const EngineConfig& e) {
  return e.kv_cache_dtype ? std::string(dtype_name(*e.kv_cache_dtype)) : "auto";
}

template <typename T>
nlohmann::json optional_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace

nlohmann::json engine_flags_json(const SimulationConfig& c, const EngineConfig& e,
                                 const SchedulerConfig& sc, int64_t kv_cache_tokens) {
  return {{"mirrors", kMirroredEngine},
          {"gpu_memory_utilization", e.gpu_memory_utilization},
          {"max_model_len", sc.max_model_len},
          {"max_num_seqs", sc.max_num_seqs},
          {"max_num_batched_tokens", sc.max_num_batched_tokens},
          {"block_size", e.block_size},
          {"dtype", weights_dtype(c)},
          {"kv_cache_dtype", kv_dtype(e)},
          {"enable_prefix_caching", e.enable_prefix_caching},
          {"enable_chunked_prefill", e.enable_chunked_prefill},
          {"non_torch_memory_bytes", optional_json(e.non_torch_memory_bytes)},
          {"cuda_graph_memory_bytes", optional_json(e.cuda_graph_memory_bytes)},
          {"vllm_version", e.vllm_version.to_string()},
          {"enforce_eager", e.enforce_eager},
          {"disable_custom_all_reduce", e.disable_custom_all_reduce},
          {"cudagraph_mode", std::string(cuda_graph_mode_name(e.cuda_graph_mode()))},
          {"async_scheduling", e.async_scheduling},
          {"async_host_overlap", e.async_host_overlap},
          {"kv_cache_memory_bytes", optional_json(e.kv_cache_memory_bytes)},
          {"num_gpu_blocks_override", optional_json(e.num_gpu_blocks_override)},
          {"allow_long_max_model_len", e.allow_long_max_model_len},
          {"batching", std::string(scheduling_policy_name(c.batching))},
          {"queue_order", std::string(queue_order_name(c.queue_order))},
          {"long_prefill_token_threshold", c.long_prefill_token_threshold},
          {"static_batch_size", c.static_batch_size},
          {"static_batch_timeout_s", c.static_batch_timeout_s},
          {"router", std::string(router_policy_name(c.router))},
          {"kv_cache_tokens", kv_cache_tokens}};
}

namespace {

// The scenario's block `key` as given after --set; null when absent.
nlohmann::json block(const RunSetup& setup, const char* key) {
  const nlohmann::json& j = setup.scenario_json;
  return j.is_object() && j.contains(key) ? j.at(key) : nlohmann::json();
}

// The workload as given; a workload file is read in, its path kept under "file".
nlohmann::json workload_block(const RunSetup& setup) {
  const nlohmann::json given = block(setup, "workload");
  if (!given.is_string()) return given;
  std::filesystem::path path = given.get<std::string>();
  if (path.is_relative()) path = std::filesystem::path(setup.base_dir) / path;
  nlohmann::json workload = load_json_file(path.string());
  workload["file"] = given;
  return workload;
}

// A calibrated profile by what it profiled; a roofline with the options the scenario gives it
// (efficiencies, overheads), so a what-if run says which.
nlohmann::json cost_model_json(const SimulationConfig& c, const RunSetup& setup) {
  if (c.profile) {
    return {{"type", "calibrated"},
            {"profiled_model", c.profile->model},
            {"device", c.profile->device},
            {"backend", c.profile->backend}};
  }
  nlohmann::json j = block(setup, "cost_model");
  if (!j.is_object()) j = nlohmann::json::object();
  j["type"] = "roofline";
  return j;
}

// A scenario without a service block is served through vLLM's API server (vllm_frontend.h).
bool default_service(const ServiceSpec& s, const RunSetup& setup) {
  return s.enabled && block(setup, "service").is_null();
}

nlohmann::json service_json(const ServiceSpec& s, const RunSetup& setup) {
  if (!s.enabled) return "none";
  if (!default_service(s, setup)) return block(setup, "service");
  return {{"default", "vLLM API server"},
          {"frontend",
           {{"workers", s.frontend.station.workers},
            {"request_s", s.frontend.station.request_s.mean()},
            {"per_prompt_token_s", s.frontend.station.per_prompt_token_s},
            {"step_s", s.frontend.step_s.mean()},
            {"per_output_token_s", s.frontend.per_output_token_s},
            {"cv", s.frontend.station.cv}}}};
}

std::string service_text(const ServiceSpec& s, const RunSetup& setup) {
  if (!s.enabled) return "none";
  if (default_service(s, setup)) return "vLLM API server (default)";
  std::string text = "network";
  if (s.gateway) text += " + gateway";
  text += " + frontend";
  if (!s.stages.empty()) text += " + " + std::to_string(s.stages.size()) + " stages";
  if (s.rate_limit) text += ", rate-limited";
  return text;
}

nlohmann::json role_json(const DisaggregatedRole& role, const SimulationConfig& c,
                         const MemoryPlan& plan, const SchedulerConfig& scheduler) {
  return {{"instances", role.instances},
          {"gpu", role.gpu.name},
          {"tensor_parallel_size", role.parallel.tp},
          {"pipeline_parallel_size", role.parallel.pp},
          {"data_parallel_size", role.parallel.dp},
          {"enable_expert_parallel", role.parallel.enable_expert_parallel},
          {"engine", engine_flags_json(c, plan.engine, scheduler, plan.kv_cache_tokens)}};
}

nlohmann::json disaggregation_json(const Simulation& sim) {
  const SimulationConfig& c = sim.config();
  const DisaggregationSpec& d = c.disaggregation;
  const KvTransferSpec& kv = d.kv_transfer;
  return {{"prefill",
           role_json(d.prefill, c, sim.prefill_memory_plan(), sim.prefill_scheduler_config())},
          {"decode", role_json(d.decode, c, sim.memory_plan(), sim.scheduler_config())},
          {"kv_transfer",
           {{"connector", kv.connector},
            {"link", kv.link},
            {"bandwidth_GBps", kv.bandwidth_Bps / 1e9},
            {"latency_us", kv.latency_s * 1e6},
            {"handoff_ms", kv.handoff_s * 1e3},
            {"overlap", std::string(kv_transfer_overlap_name(kv.overlap))}}},
          {"prefill_router", std::string(router_policy_name(d.prefill_router))},
          {"decode_router", std::string(router_policy_name(d.decode_router))}};
}

// Which of a disaggregated deployment's roles schedule asynchronously, as the first line says.
const char* async_roles(const DisaggregationSpec& d) {
  const bool prefill = d.prefill.engine.async_scheduling;
  const bool decode = d.decode.engine.async_scheduling;
  if (prefill && decode) return " with async scheduling";
  if (prefill) return " (async scheduling on the prefill instances)";
  return decode ? " (async scheduling on the decode instances)" : "";
}

}  // namespace

nlohmann::json setup_json(const Simulation& sim, const RunSetup& setup) {
  const SimulationConfig& c = sim.config();
  const MemoryPlan& plan = sim.memory_plan();
  nlohmann::json j = {
      {"servesim_version", setup.servesim_version},
      {"git_revision", setup.git_revision},
      {"scenario", setup.scenario},
      {"model",
       {{"name", c.model.name},
        {"dtype", weights_dtype(c)},
        {"kv_cache_dtype", kv_dtype(plan.engine)},
        {"params_total", plan.params_total},
        {"params_active", plan.params_active}}},
      {"gpu", {{"name", c.gpu.name}, {"memory_total_bytes", c.gpu.memory_total_bytes}}},
      {"parallel",
       {{"tensor_parallel_size", c.parallel.tp},
        {"pipeline_parallel_size", c.parallel.pp},
        {"data_parallel_size", c.parallel.dp},
        {"gpus", c.parallel.total_gpus()}}},
      {"engine", engine_flags_json(c, plan.engine, sim.scheduler_config(), plan.kv_cache_tokens)},
      {"cost_model", cost_model_json(c, setup)},
      {"service", service_json(c.service, setup)},
      {"workload", workload_block(setup)},
      {"slo", block(setup, "slo")},
      {"metrics", block(setup, "metrics")},
      {"max_error_rate", setup.max_error_rate},
      {"seed", c.seed}};
  if (c.disaggregation.enabled) {
    // The decode instances' engine stays under "engine"; each role's is in here.
    j["disaggregation"] = disaggregation_json(sim);
    j["parallel"]["gpus"] = c.disaggregation.total_gpus();
  }
  return j;
}

nlohmann::json engine_run_setup_json(const EngineRunFacts& run, const RunSetup& setup) {
  const SimulationConfig& c = run.config;
  return {{"servesim_version", setup.servesim_version},
          {"git_revision", setup.git_revision},
          {"scenario", setup.scenario},
          {"model",
           {{"name", c.model.name}, {"dtype", weights_dtype(c)}, {"params_total", run.params}}},
          {"backend", {{"name", run.backend}, {"threads", run.threads}}},
          {"engine", engine_flags_json(c, c.engine, run.scheduler, run.kv_cache_tokens)},
          {"workload", workload_block(setup)},
          {"slo", block(setup, "slo")},
          {"metrics", block(setup, "metrics")},
          {"max_error_rate", setup.max_error_rate},
          {"seed", c.seed}};
}

std::string setup_line(const Simulation& sim, const RunSetup& setup) {
  const SimulationConfig& c = sim.config();
  char text[640];
  if (c.disaggregation.enabled) {
    std::snprintf(text, sizeof text,
                  "%s: %s (%s) on %d GPUs disaggregated: %s, %s engine%s, service %s, seed %llu, "
                  "servesim %s",
                  setup.scenario.c_str(), c.model.name.c_str(), weights_dtype(c).c_str(),
                  c.disaggregation.total_gpus(), c.disaggregation.describe().c_str(),
                  kMirroredEngine, async_roles(c.disaggregation),
                  service_text(c.service, setup).c_str(), static_cast<unsigned long long>(c.seed),
                  setup.servesim_version.c_str());
    return text;
  }
  std::snprintf(text, sizeof text,
                "%s: %s (%s) on %d x %s (TP %d, PP %d, DP %d), %s engine, %s batching%s, "
                "service %s, seed %llu, servesim %s",
                setup.scenario.c_str(), c.model.name.c_str(), weights_dtype(c).c_str(),
                c.parallel.total_gpus(), c.gpu.name.c_str(), c.parallel.tp, c.parallel.pp,
                c.parallel.dp, kMirroredEngine,
                std::string(scheduling_policy_name(c.batching)).c_str(),
                c.engine.async_scheduling ? " with async scheduling" : "",
                service_text(c.service, setup).c_str(), static_cast<unsigned long long>(c.seed),
                setup.servesim_version.c_str());
  return text;
}

}  // namespace servesim
