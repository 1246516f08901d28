#include "sim/scenario/scenario.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "models/config_error.h"
#include "models/cuda_graph_mode.h"
#include "models/json_file.h"
#include "models/json_object_reader.h"
#include "sim/agent/agent_workload.h"
#include "sim/service/vllm_frontend.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string resolve_path(const std::string& value, const std::string& base_dir) {
  if (value.empty() || fs::path(value).is_absolute() || base_dir.empty()) return value;
  const fs::path candidate = fs::path(base_dir) / value;
  return fs::exists(candidate) ? candidate.string() : value;
}

// A catalog name, or a file path relative to the scenario.
std::string name_or_path(const std::string& value, const std::string& base_dir) {
  if (value.ends_with(".json")) return resolve_path(value, base_dir);
  return value;
}

double non_negative(JsonObjectReader& r, const std::string& key, double fallback) {
  const double v = r.optional<double>(key, fallback);
  if (!(v >= 0)) r.fail(key, "must be >= 0");
  return v;
}

std::optional<double> optional_number(JsonObjectReader& r, const std::string& key) {
  if (!r.has(key)) {
    r.raw(key);
    return std::nullopt;
  }
  const double v = r.required<double>(key);
  if (!(v >= 0)) r.fail(key, "must be >= 0");
  return v;
}

// A fraction of a peak the cost model reaches, read where the key is given.
std::optional<double> optional_fraction(JsonObjectReader& r, const std::string& key) {
  if (!r.has(key)) {
    r.raw(key);
    return std::nullopt;
  }
  const double v = r.required<double>(key);
  if (!(v > 0 && v <= 1)) r.fail(key, "must be in (0, 1]: a fraction of the peak, such as 0.8");
  return v;
}

int optional_positive(JsonObjectReader& r, const std::string& key) {
  if (r.has(key)) return r.positive_int(key);
  r.raw(key);
  return 0;
}

void read_parallel(JsonObjectReader& r, ParallelConfig& p) {
  p.tp = r.optional<int>("tensor_parallel_size", 1);
  p.pp = r.optional<int>("pipeline_parallel_size", 1);
  p.dp = r.optional<int>("data_parallel_size", 1);
  if (p.tp < 1) r.fail("tensor_parallel_size", "must be >= 1");
  if (p.pp < 1) r.fail("pipeline_parallel_size", "must be >= 1");
  if (p.dp < 1 || p.dp > 4096) r.fail("data_parallel_size", "must be in [1, 4096]");
  p.enable_expert_parallel = r.optional<bool>("enable_expert_parallel", false);
  const std::string popularity = r.optional<std::string>("expert_popularity", "uniform");
  if (popularity == "zipf") {
    p.expert_zipf_exponent = r.optional<double>("expert_zipf_exponent", 1.0);
    if (!(p.expert_zipf_exponent >= 0 && p.expert_zipf_exponent <= kMaxExpertZipfExponent)) {
      r.fail("expert_zipf_exponent", "must be in [0, 4]");
    }
  } else if (popularity != "uniform") {
    r.fail("expert_popularity", "must be \"uniform\" or \"zipf\" (got \"" + popularity + "\")");
  } else if (r.has("expert_zipf_exponent")) {
    r.fail("expert_zipf_exponent", "needs \"expert_popularity\": \"zipf\"");
  }
  r.finish();
}

// vLLM's --kv-offloading-size / --kv-offloading-backend, and servesim's link bandwidth.
void read_kv_offload(JsonObjectReader& r, EngineConfig& e) {
  const std::string backend = r.optional<std::string>("kv_offloading_backend", "native");
  if (backend != "native") {
    r.fail("kv_offloading_backend",
           "only \"native\" (vLLM's OffloadingConnector) is modelled (got \"" + backend + "\")");
  }
  if (auto v = optional_number(r, "kv_offloading_size_gib")) {
    if (!(*v > 0 && *v <= 1e5)) r.fail("kv_offloading_size_gib", "must be in (0, 100000] GiB");
    e.kv_offloading_size_gib = *v;
  }
  if (auto v = optional_number(r, "kv_offloading_bandwidth_GBps")) {
    if (!e.kv_offloading_size_gib) {
      r.fail("kv_offloading_bandwidth_GBps", "needs kv_offloading_size_gib");
    }
    if (!(*v > 0 && *v <= 1e4)) r.fail("kv_offloading_bandwidth_GBps", "must be in (0, 10000]");
    e.kv_offloading_bandwidth_Bps = *v * 1e9;
  }
}

void read_engine(JsonObjectReader& r, SimulationConfig& c, const Catalog& catalog) {
  EngineConfig& e = c.engine;
  e.gpu_memory_utilization = r.optional<double>("gpu_memory_utilization", 0.9);
  // Absent means vLLM's default for the GPU; a value given must be a real size.
  e.max_model_len = optional_positive(r, "max_model_len");
  e.max_num_seqs = optional_positive(r, "max_num_seqs");
  e.max_num_batched_tokens = optional_positive(r, "max_num_batched_tokens");
  e.block_size = r.optional<int>("block_size", 16);
  const std::string dtype = r.optional<std::string>("dtype", "auto");
  if (dtype != "auto") e.dtype = parse_dtype(dtype, r.context() + ": dtype");
  const std::string kv = r.optional<std::string>("kv_cache_dtype", "auto");
  if (kv != "auto") e.kv_cache_dtype = parse_dtype(kv, r.context() + ": kv_cache_dtype");
  e.enable_prefix_caching = r.optional<bool>("enable_prefix_caching", true);
  e.enable_chunked_prefill = r.optional<bool>("enable_chunked_prefill", true);
  e.allow_long_max_model_len = r.optional<bool>("allow_long_max_model_len", false);
  if (auto v = optional_number(r, "non_torch_memory_gib")) {
    e.non_torch_memory_bytes = static_cast<int64_t>(*v * kGiB);
  }
  if (auto v = optional_number(r, "cuda_graph_memory_gib")) {
    e.cuda_graph_memory_bytes = static_cast<int64_t>(*v * kGiB);
  }
  if (auto v = optional_number(r, "kv_cache_memory_gib")) {
    e.kv_cache_memory_bytes = static_cast<int64_t>(*v * kGiB);
  }
  if (auto v = optional_number(r, "activation_memory_gib")) {
    e.activation_memory_bytes = static_cast<int64_t>(*v * kGiB);
  }
  if (r.has("gpu_memory_bytes")) {
    const double bytes = r.required<double>("gpu_memory_bytes");
    if (!(bytes >= 1 && bytes < 1e15)) r.fail("gpu_memory_bytes", "must be a byte count > 0");
    e.gpu_memory_bytes = static_cast<int64_t>(bytes);
  } else {
    r.raw("gpu_memory_bytes");
  }
  e.enforce_eager = r.optional<bool>("enforce_eager", false);
  e.disable_custom_all_reduce = r.optional<bool>("disable_custom_all_reduce", false);
  if (r.has("cudagraph_mode")) {
    e.cudagraph_mode = parse_cuda_graph_mode(r.required<std::string>("cudagraph_mode"),
                                             r.context() + ".cudagraph_mode");
  } else {
    r.raw("cudagraph_mode");
  }
  e.async_scheduling = r.optional<bool>("async_scheduling", false);
  if (r.has("async_host_overlap")) {
    const double overlap = r.required<double>("async_host_overlap");
    if (!(overlap >= 0 && overlap <= 1)) {
      r.fail("async_host_overlap", "must be a fraction in [0, 1] (1: all host work hides)");
    }
    if (!e.async_scheduling) {
      r.fail("async_host_overlap", "applies only with async_scheduling true; set both or neither");
    }
    e.async_host_overlap = overlap;
  }
  e.vllm_version =
      VllmVersion::parse(r.optional<std::string>("vllm_version", kNewestModelledVllm.to_string()),
                         r.context() + ": vllm_version");
  if (r.has("num_gpu_blocks_override")) {
    e.num_gpu_blocks_override = r.positive_int("num_gpu_blocks_override");
  } else {
    r.raw("num_gpu_blocks_override");
  }
  read_kv_offload(r, e);
  if (r.has("speculative")) {
    e.speculative =
        SpeculativeConfig::from_json(r.raw("speculative"), r.context() + ".speculative", &catalog);
  } else {
    r.raw("speculative");
  }
  c.long_prefill_token_threshold = r.non_negative_int("long_prefill_token_threshold", 0);
  c.batching = parse_scheduling_policy(r.optional<std::string>("batching", "continuous"),
                                       r.context() + ": batching");
  c.queue_order = parse_queue_order(r.optional<std::string>("scheduling_policy", "fcfs"),
                                    r.context() + ": scheduling_policy");
  c.static_batch_size = r.non_negative_int("static_batch_size", 0);
  c.static_batch_timeout_s = non_negative(r, "static_batch_timeout_s", 0.1);
  r.finish();
}

void read_roofline(JsonObjectReader& r, RooflineOptions& o) {
  o.compute_efficiency = optional_fraction(r, "compute_efficiency");
  o.memory_efficiency = optional_fraction(r, "memory_efficiency");
  o.attention_compute_efficiency = optional_fraction(r, "attention_compute_efficiency");
  o.attention_memory_efficiency = optional_fraction(r, "attention_memory_efficiency");
  o.expert_compute_efficiency = optional_fraction(r, "expert_compute_efficiency");
  o.expert_memory_efficiency = optional_fraction(r, "expert_memory_efficiency");
  if (auto v = optional_number(r, "kernel_launch_us")) o.kernel_launch_s = *v * 1e-6;
  if (auto v = optional_number(r, "step_overhead_ms")) o.step_overhead_s = *v * 1e-3;
  if (auto v = optional_number(r, "seq_overhead_us")) o.seq_overhead_s = *v * 1e-6;
  o.cuda_graphs = r.optional<bool>("cuda_graphs", true);
}

// "calibrated": steps priced by a profile from `servesim calibrate fit` (path relative to the
// scenario's folder).
void read_calibrated(JsonObjectReader& r, SimulationConfig& c, const std::string& base_dir) {
  const std::string path = resolve_path(r.required<std::string>("profile"), base_dir);
  try {
    c.profile = std::make_shared<const CalibrationProfile>(load_profile(path));
  } catch (const ConfigError& e) {
    throw ConfigError(r.context() + ".profile: " + e.what());
  }
  c.calibrated.extrapolate = r.optional<bool>("extrapolate", false);
  c.calibrated.transfer = r.optional<bool>("transfer", false);
}

void read_cost_model(JsonObjectReader& r, SimulationConfig& c, const std::string& base_dir) {
  const std::string type = r.optional<std::string>("type", "roofline");
  if (type == "roofline") {
    read_roofline(r, c.roofline);
  } else if (type == "calibrated") {
    read_calibrated(r, c, base_dir);
  } else {
    r.fail("type", "must be \"roofline\" or \"calibrated\" (got \"" + type + "\")");
  }
  r.finish();
}

void read_slo(JsonObjectReader& r, SloSpec& slo) {
  slo.ttft_s = optional_number(r, "ttft_s");
  slo.tpot_s = optional_number(r, "tpot_s");
  slo.e2e_s = optional_number(r, "e2e_s");
  r.finish();
}

void read_metrics(JsonObjectReader& r, SimulationConfig& c) {
  c.metrics.warmup_s = non_negative(r, "warmup_s", 0);
  c.metrics.warmup_requests = static_cast<uint64_t>(r.non_negative_int("warmup_requests", 0));
  c.sample_interval_s = non_negative(r, "sample_interval_s", 1.0);
  c.step_warmup_s = non_negative(r, "step_warmup_s", 0);
  r.finish();
}

// Keys of the top-level engine block that apply to the whole deployment, not to one role.
constexpr const char* kDeploymentWideEngineKeys[] = {"batching", "scheduling_policy",
                                                     "static_batch_size", "static_batch_timeout_s",
                                                     "long_prefill_token_threshold"};

// A role's or deployment's own "engine" block (REQUIRES: present): an object without the
// keys that apply to `scope` as a whole ("the whole deployment", "every deployment ...").
const nlohmann::json& own_engine_block(JsonObjectReader& r, const std::string& scope) {
  const nlohmann::json& own = r.raw("engine");
  if (!own.is_object()) r.fail("engine", "must be an object of engine flags");
  for (const char* key : kDeploymentWideEngineKeys) {
    if (own.contains(key)) {
      r.fail(std::string("engine.") + key,
             "applies to " + scope + ": set it in the top-level engine block");
    }
  }
  return own;
}

// One role of "disaggregation": {"instances", "gpu", "tensor_parallel_size",
// "pipeline_parallel_size", "data_parallel_size", "enable_expert_parallel", "engine"}, each
// defaulting to the scenario's own (data_parallel_size to 1: the top level's must be 1); the
// role's engine keys override the top-level engine block's. An instance of a role with
// data_parallel_size D is one vLLM server of D ranks (wide expert parallelism: EP = TP x D).
DisaggregatedRole read_role(JsonObjectReader& r, const SimulationConfig& c,
                            const nlohmann::json& engine, const std::string& base_dir,
                            const Catalog& catalog, const std::string& scope) {
  DisaggregatedRole role;
  role.instances = r.has("instances") ? r.positive_int("instances") : 1;
  if (role.instances > 4096) r.fail("instances", "must be at most 4096");
  role.gpu = r.has("gpu")
                 ? catalog.resolve_gpu(name_or_path(r.required<std::string>("gpu"), base_dir))
                 : c.gpu;
  role.parallel.tp = r.optional<int>("tensor_parallel_size", c.parallel.tp);
  role.parallel.pp = r.optional<int>("pipeline_parallel_size", c.parallel.pp);
  role.parallel.dp = r.optional<int>("data_parallel_size", 1);
  role.parallel.enable_expert_parallel =
      r.optional<bool>("enable_expert_parallel", c.parallel.enable_expert_parallel);
  role.parallel.expert_zipf_exponent = c.parallel.expert_zipf_exponent;
  if (role.parallel.tp < 1) r.fail("tensor_parallel_size", "must be >= 1");
  if (role.parallel.pp < 1) r.fail("pipeline_parallel_size", "must be >= 1");
  if (role.parallel.dp < 1 || role.parallel.dp > 4096) {
    r.fail("data_parallel_size", "must be in [1, 4096]");
  }
  if (static_cast<long long>(role.instances) * role.parallel.dp > 4096) {
    r.fail("data_parallel_size", "instances x data_parallel_size must be at most 4096 ranks");
  }
  nlohmann::json merged = engine.is_object() ? engine : nlohmann::json::object();
  if (r.has("engine")) {
    merged.merge_patch(own_engine_block(r, scope));
  } else {
    r.raw("engine");
  }
  SimulationConfig role_config = c;
  JsonObjectReader e(merged, r.context() + ".engine");
  read_engine(e, role_config, catalog);
  role.engine = role_config.engine;
  r.finish();
  return role;
}

// `base` gives each role's defaults: its GPU, parallelism and (with `engine`, the block its
// engine keys override) flags; `scope` names what the deployment-wide engine keys apply to.
DisaggregationSpec read_disaggregation(JsonObjectReader& r, const SimulationConfig& base,
                                       const nlohmann::json& engine, const std::string& base_dir,
                                       const Catalog& catalog, const std::string& scope) {
  DisaggregationSpec d;
  d.enabled = true;
  for (const char* name : {"prefill", "decode"}) {
    if (!r.has(name)) {
      r.fail(name,
             std::string("is required: a disaggregated deployment needs its ") + name +
                 " instances ({\"instances\": 1} takes the deployment's GPU and parallelism)");
    }
    const nlohmann::json& block = r.raw(name);
    if (!block.is_object()) r.fail(name, "must be an object");
    JsonObjectReader role(block, r.context() + "." + name);
    (std::string_view(name) == "prefill" ? d.prefill : d.decode) =
        read_role(role, base, engine, base_dir, catalog, scope);
  }
  if (r.has("kv_transfer")) {
    d.kv_transfer = KvTransferSpec::from_json(r.raw("kv_transfer"), r.context() + ".kv_transfer",
                                              d.prefill.gpu, d.decode.gpu);
  } else {
    r.raw("kv_transfer");
  }
  d.prefill_router =
      parse_router_policy(r.optional<std::string>("prefill_router", "least_outstanding"),
                          r.context() + ".prefill_router");
  d.decode_router = parse_router_policy(r.optional<std::string>("decode_router", "least_kv"),
                                        r.context() + ".decode_router");
  r.finish();
  return d;
}

// A deployment's "disaggregation" block (REQUIRES: present), read at `context`; it replaces the
// deployment's routing key `router_key` ("cluster" at the top level, "router" in deployments[]).
DisaggregationSpec read_disaggregation_block(JsonObjectReader& r, const char* router_key,
                                             const std::string& context,
                                             const SimulationConfig& base,
                                             const nlohmann::json& engine,
                                             const std::string& base_dir, const Catalog& catalog,
                                             const std::string& scope) {
  if (r.has(router_key)) {
    r.fail(router_key,
           "does not apply to a disaggregated deployment: set "
           "disaggregation.prefill_router and disaggregation.decode_router");
  }
  const nlohmann::json& block = r.raw("disaggregation");
  if (!block.is_object()) r.fail("disaggregation", "must be an object");
  JsonObjectReader d(block, context);
  return read_disaggregation(d, base, engine, base_dir, catalog, scope);
}

// One entry of "deployments": {"name", "model", "gpu", "parallel", "engine", "router",
// "disaggregation", "cost_model"}; its engine block is its own vLLM flags (a separate `vllm
// serve`), the deployment-wide keys stay in the top-level engine block. Its disaggregation
// block is the top-level one's, with this deployment's GPU, parallelism and flags as the roles'
// defaults; its cost_model block the top-level one's (without one, the scenario's roofline).
DeploymentSpec read_deployment(JsonObjectReader& r, const std::string& base_dir,
                               const Catalog& catalog) {
  const std::string scope = "every deployment of the scenario";
  DeploymentSpec d;
  d.name = r.required<std::string>("name");
  if (d.name.empty()) r.fail("name", "must not be empty (llm steps call the deployment by it)");
  d.model = catalog.resolve_model(name_or_path(r.required<std::string>("model"), base_dir));
  d.gpu = catalog.resolve_gpu(name_or_path(r.required<std::string>("gpu"), base_dir));
  if (r.has("parallel")) {
    JsonObjectReader p(r.raw("parallel"), r.context() + ".parallel");
    read_parallel(p, d.parallel);
  } else {
    r.raw("parallel");
  }
  nlohmann::json engine = nlohmann::json::object();
  if (r.has("engine")) {
    engine = own_engine_block(r, scope);
    SimulationConfig own_config;
    JsonObjectReader e(engine, r.context() + ".engine");
    read_engine(e, own_config, catalog);
    d.engine = own_config.engine;
  } else {
    r.raw("engine");
  }
  if (r.has("cost_model")) {
    SimulationConfig own_config;
    JsonObjectReader m(r.raw("cost_model"), r.context() + ".cost_model");
    read_cost_model(m, own_config, base_dir);
    d.cost_model =
        DeploymentCostModel{own_config.profile, own_config.calibrated, own_config.roofline};
  } else {
    r.raw("cost_model");
  }
  if (r.has("disaggregation")) {
    SimulationConfig base;
    base.gpu = d.gpu;
    base.parallel = d.parallel;
    base.engine = d.engine;
    d.disaggregation = read_disaggregation_block(r, "router", r.context() + ".disaggregation", base,
                                                 engine, base_dir, catalog, scope);
  } else {
    r.raw("disaggregation");
  }
  d.router = parse_router_policy(r.optional<std::string>("router", "round_robin"),
                                 r.context() + ".router");
  r.finish();
  return d;
}

void read_deployments(const nlohmann::json& list, SimulationConfig& c, const std::string& origin,
                      const std::string& base_dir, const Catalog& catalog) {
  if (!list.is_array() || list.empty()) {
    throw ConfigError(origin +
                      ": deployments: must be a non-empty array of deployments "
                      "({\"name\", \"model\", \"gpu\", ...}) that llm steps call by name");
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = origin + ": deployments[" + std::to_string(i) + "]";
    if (!list[i].is_object()) throw ConfigError(path + ": must be an object");
    JsonObjectReader r(list[i], path);
    DeploymentSpec d = read_deployment(r, base_dir, catalog);
    if (d.name == c.model.name) {
      r.fail("name", "\"" + d.name + "\" is the scenario's own deployment (named after its " +
                         "model); give this one another name");
    }
    for (const DeploymentSpec& other : c.deployments) {
      if (other.name == d.name) r.fail("name", "\"" + d.name + "\" is used twice");
    }
    c.deployments.push_back(std::move(d));
  }
}

// An agent workload's workflows are checked here as well as when the Simulation is built, so
// the commands that parse scenarios before (or without) simulating them (plan, sweep) refuse a
// bad workflow with the same one-line error. max_model_len is the engine's, resolved as the
// memory plan resolves it.
// A deployment's name and its max_model_len as the memory plan will resolve it (a disaggregated
// one's: the shorter of its roles'), without sizing its memory.
DeploymentLimit resolved_limit(const DeploymentSpec& d) {
  if (!d.disaggregation.enabled)
    return {d.name, d.engine.resolved_for(d.model, d.gpu).max_model_len};
  const DisaggregatedRole& p = d.disaggregation.prefill;
  const DisaggregatedRole& q = d.disaggregation.decode;
  return {d.name, std::min(p.engine.resolved_for(d.model, p.gpu).max_model_len,
                           q.engine.resolved_for(d.model, q.gpu).max_model_len)};
}

void check_agent_workload(const SimulationConfig& c) {
  if (c.workload.kind != WorkloadKind::kAgent) return;
  AgentLimits limits;
  limits.deployments.push_back(resolved_limit(own_deployment(c)));
  for (const DeploymentSpec& d : c.deployments) limits.deployments.push_back(resolved_limit(d));
  for (const TenantSpec& t : c.service.tenants) limits.tenants.push_back(t.name);
  parse_agent_workload(c.workload, limits);
}

}  // namespace

void apply_overrides(nlohmann::json& scenario, const std::vector<std::string>& overrides) {
  for (const std::string& item : overrides) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw ConfigError("--set '" + item + "': expected path.to.key=value");
    }
    // A command line can carry any bytes, a JSON file only UTF-8 (its parser checks): an
    // invalid byte kept in the scenario would throw later, wherever the value is printed.
    try {
      (void)nlohmann::json(item).dump();
    } catch (const nlohmann::json::type_error&) {
      const std::string shown = json_text(item, -1);
      throw ConfigError("--set " + shown + ": not valid UTF-8 (shown as U+FFFD); retype it");
    }
    const std::string path = item.substr(0, eq);
    const std::string text = item.substr(eq + 1);
    nlohmann::json value;
    try {
      value = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
      // Not JSON (parse_error), or a number beyond a double (out_of_range): a string.
      value = text;
    }
    nlohmann::json* node = &scenario;
    size_t start = 0;
    while (true) {
      const size_t dot = path.find('.', start);
      const std::string key =
          path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (key.empty()) throw ConfigError("--set '" + item + "': empty key in the path");
      if (!node->is_object()) {
        throw ConfigError("--set '" + item + "': '" + path.substr(0, start - 1) +
                          "' is not an object");
      }
      if (dot == std::string::npos) {
        (*node)[key] = value;
        break;
      }
      node = &(*node)[key];
      if (node->is_null()) *node = nlohmann::json::object();
      start = dot + 1;
    }
  }
}

Scenario parse_scenario(const nlohmann::json& j, const std::string& base_dir,
                        const std::string& origin, const Catalog& catalog) {
  JsonObjectReader r(j, origin);
  Scenario s;
  s.name = r.optional<std::string>("name", fs::path(origin).stem().string());
  s.description = r.optional<std::string>("description", "");
  SimulationConfig& c = s.config;
  c.model = catalog.resolve_model(name_or_path(r.required<std::string>("model"), base_dir));
  c.gpu = catalog.resolve_gpu(name_or_path(r.required<std::string>("gpu"), base_dir));
  if (r.has("parallel")) {
    JsonObjectReader p(r.raw("parallel"), origin + ": parallel");
    read_parallel(p, c.parallel);
  } else {
    r.raw("parallel");
  }
  if (r.has("engine")) {
    JsonObjectReader e(r.raw("engine"), origin + ": engine");
    read_engine(e, c, catalog);
  } else {
    r.raw("engine");
  }
  if (r.has("cost_model")) {
    JsonObjectReader m(r.raw("cost_model"), origin + ": cost_model");
    read_cost_model(m, c, base_dir);
  } else {
    r.raw("cost_model");
  }
  if (r.has("cluster")) {
    JsonObjectReader cl(r.raw("cluster"), origin + ": cluster");
    c.router = parse_router_policy(cl.optional<std::string>("router", "round_robin"),
                                   origin + ": cluster.router");
    cl.finish();
  } else {
    r.raw("cluster");
  }
  if (r.has("disaggregation")) {
    c.disaggregation =
        read_disaggregation_block(r, "cluster", origin + ": disaggregation", c,
                                  j.contains("engine") ? j.at("engine") : nlohmann::json(),
                                  base_dir, catalog, "the whole deployment");
  } else {
    r.raw("disaggregation");
  }
  if (r.has("deployments")) {
    read_deployments(r.raw("deployments"), c, origin, base_dir, catalog);
  } else {
    r.raw("deployments");
  }
  if (r.has("slo")) {
    JsonObjectReader sl(r.raw("slo"), origin + ": slo");
    read_slo(sl, c.metrics.slo);
  } else {
    r.raw("slo");
  }
  if (r.has("metrics")) {
    JsonObjectReader m(r.raw("metrics"), origin + ": metrics");
    read_metrics(m, c);
  } else {
    r.raw("metrics");
  }
  if (r.has("service")) {
    c.service = ServiceSpec::from_json(r.raw("service"), origin + ": service", base_dir);
  } else {
    r.raw("service");
    c.service = vllm_service();
  }
  if (r.has("price_per_gpu_hour")) {
    c.metrics.price_per_gpu_hour = r.required<double>("price_per_gpu_hour");
    if (!(c.metrics.price_per_gpu_hour >= 0)) r.fail("price_per_gpu_hour", "must be >= 0");
  } else {
    r.raw("price_per_gpu_hour");
  }
  const nlohmann::json& workload = r.raw("workload");
  if (workload.is_string()) {
    const std::string path = resolve_path(workload.get<std::string>(), base_dir);
    c.workload = WorkloadSpec::load(path);
  } else if (workload.is_object()) {
    c.workload = WorkloadSpec::from_json(workload, base_dir, origin + ": workload");
  } else {
    r.fail("workload", "is required: an object or the path of a workload file");
  }
  if (r.has("seed")) {
    const int64_t seed = r.required<int64_t>("seed");
    if (seed < 0) r.fail("seed", "must be >= 0");
    c.seed = static_cast<uint64_t>(seed);
    c.workload.seed = c.seed;
  } else {
    r.raw("seed");
    c.seed = c.workload.seed;
  }
  r.finish();
  check_deployments(c);
  check_agent_workload(c);
  return s;
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       const Catalog& catalog) {
  nlohmann::json j = load_json_file(path);
  apply_overrides(j, overrides);
  Scenario s = parse_scenario(j, fs::path(path).parent_path().string(), path, catalog);
  s.json = std::move(j);
  const SimulationConfig& c = s.config;
  const std::string warning =
      tenant_priority_warning(c.service.tenants, c.queue_order == QueueOrder::kPriority);
  if (!warning.empty()) std::fprintf(stderr, "%s\n", warning.c_str());
  return s;
}

}  // namespace servesim
