#include <string>
#include <vector>

#include "sim/core/rng.h"
#include "tests/invariants/random_scenario.h"

namespace servesim::testing {
namespace {

template <typename T>
const T& pick(Rng& rng, const std::vector<T>& options) {
  return options[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(options.size()) - 1))];
}

bool chance(Rng& rng, double p) {
  return rng.uniform() < p;
}

// Small and large models, dense, GQA, MoE, MLA and sliding-window ones.
const std::vector<std::string> kModels = {"SmolLM2-135M", "TinyLlama-1.1B",  "Llama-3.1-8B",
                                          "Qwen3-8B",     "Mistral-7B-v0.1", "Mixtral-8x7B",
                                          "Llama-2-13B",  "GPT-OSS-20B",     "Qwen2.5-7B"};
const std::vector<std::string> kGpus = {"H100", "A100-80GB-SXM", "L4", "H200", "A10", "L40S"};

nlohmann::json length(Rng& rng, int lo, int hi) {
  switch (rng.uniform_int(0, 4)) {
    case 0:
      return rng.uniform_int(lo, hi);
    case 1:
      return {{"type", "uniform"}, {"min", lo}, {"max", hi}};
    case 2:
      return {{"type", "normal"}, {"mean", (lo + hi) / 2}, {"std", (hi - lo) / 4 + 1}};
    case 3:
      return {{"type", "lognormal"},
              {"mean", (lo + hi) / 2},
              {"std", (hi - lo) / 2 + 1},
              {"max", hi * 2}};
    default:
      return {{"type", "empirical"}, {"values", {lo, (lo + hi) / 2, hi}}};
  }
}

nlohmann::json engine(Rng& rng) {
  nlohmann::json e;
  e["enable_chunked_prefill"] = chance(rng, 0.7);
  e["enable_prefix_caching"] = chance(rng, 0.6);
  if (chance(rng, 0.7)) e["max_num_seqs"] = pick<int>(rng, {1, 2, 4, 16, 64, 256});
  if (chance(rng, 0.4)) e["max_num_batched_tokens"] = pick<int>(rng, {512, 2048, 8192});
  if (chance(rng, 0.5)) e["max_model_len"] = pick<int>(rng, {1024, 2048, 4096, 8192});
  if (chance(rng, 0.3)) e["num_gpu_blocks_override"] = pick<int>(rng, {64, 256, 2048});
  e["batching"] = pick<std::string>(rng, {"continuous", "continuous", "static", "prefill_first"});
  e["scheduling_policy"] = pick<std::string>(rng, {"fcfs", "priority"});
  if (chance(rng, 0.2)) e["long_prefill_token_threshold"] = pick<int>(rng, {64, 512});
  return e;
}

void arrival(Rng& rng, nlohmann::json& w, DrawnScenario& d) {
  const std::string type =
      pick<std::string>(rng, {"poisson", "gamma", "constant", "onoff", "closed", "stepped"});
  nlohmann::json a = {{"type", type}};
  if (type == "closed") {
    a["clients"] = rng.uniform_int(1, 16);
    if (chance(rng, 0.5)) a["think_time_s"] = {{"type", "exponential"}, {"mean", 0.5}};
  } else if (type == "stepped") {
    a["steps"] = {1, rng.uniform_int(2, 4), rng.uniform_int(5, 8)};
    a["step_duration_s"] = rng.uniform_int(2, 10);
    // Always a think time: with none, a client whose every request is refused (too long for
    // max_model_len) sends again at the same instant, without end (docs/reliability.md).
    a["think_time_s"] = {{"type", "exponential"}, {"mean", 0.5}};
  } else {
    a["rate_qps"] = pick<double>(rng, {0.5, 4.0, 20.0, 200.0});
    if (type == "gamma") a["cv"] = pick<double>(rng, {0.5, 2.0, 4.0});
    if (type == "onoff") a["on_s"] = 2, a["off_s"] = 3;
  }
  w["arrival"] = a;
  d.requests_known = type != "closed" && type != "stepped";
  if (type == "stepped") {
    d.num_requests = 0;  // the schedule ends it
  } else {
    w["num_requests"] = d.num_requests;
  }
}

nlohmann::json workload(Rng& rng, DrawnScenario& d) {
  nlohmann::json w;
  d.num_requests = static_cast<uint64_t>(rng.uniform_int(1, 120));
  if (chance(rng, 0.15)) {
    const std::string trace = pick<std::string>(rng, {"splitwise_conv.csv", "splitwise_code.csv"});
    w["trace"] = {{"path", SERVESIM_SOURCE_DIR "/configs/workloads/traces/" + trace},
                  {"time_scale", pick<double>(rng, {0.05, 1.0})}};
    w["num_requests"] = d.num_requests;
    d.requests_known = true;
    return w;
  }
  arrival(rng, w, d);
  w["prompt_tokens"] = length(rng, 1, pick<int>(rng, {16, 512, 3000, 12000}));
  w["output_tokens"] = length(rng, 1, pick<int>(rng, {1, 8, 200, 1500}));
  if (chance(rng, 0.3)) {
    w["shared_prefix"] = {{"groups", rng.uniform_int(1, 4)}, {"tokens", rng.uniform_int(1, 2000)}};
  }
  if (chance(rng, 0.25)) {
    w["multi_turn"] = {{"turns", length(rng, 1, 4)}, {"user_tokens", length(rng, 1, 100)}};
    if (chance(rng, 0.5)) w["multi_turn"]["think_time_s"] = {{"type", "exponential"}, {"mean", 1}};
    d.requests_known = false;  // later turns leave when earlier ones are answered
  }
  return w;
}

nlohmann::json station(Rng& rng, int max_workers) {
  nlohmann::json st = {{"workers", rng.uniform_int(1, max_workers)},
                       {"request_s", pick<double>(rng, {0.0005, 0.002, 0.02})},
                       {"cv", pick<double>(rng, {0.0, 0.3, 1.0})}};
  if (chance(rng, 0.3)) st["queue_capacity"] = rng.uniform_int(1, 32);
  if (chance(rng, 0.3)) st["per_prompt_token_s"] = 1e-6;
  return st;
}

nlohmann::json client(Rng& rng) {
  nlohmann::json c;
  if (chance(rng, 0.5)) c["timeout_s"] = pick<double>(rng, {0.5, 5.0, 60.0});
  if (chance(rng, 0.3)) {
    c["machine"] = {{"threads", rng.uniform_int(1, 4)},
                    {"chunk_s", pick<double>(rng, {1e-5, 1e-3})},
                    {"cv", pick<double>(rng, {0.1, 1.0})}};
  }
  if (chance(rng, 0.5)) {
    c["retry"] = {{"max_attempts", rng.uniform_int(1, 5)},
                  {"initial_backoff_s", pick<double>(rng, {0.01, 0.5})},
                  {"jitter", pick<std::string>(rng, {"full", "equal", "none"})}};
  }
  return c;
}

// Two or three tenants with shares summing to 1, priorities, and sometimes their own quotas.
nlohmann::json tenants(Rng& rng) {
  const std::vector<std::vector<double>> splits = {{0.5, 0.5}, {0.25, 0.75}, {0.2, 0.3, 0.5}};
  nlohmann::json list = nlohmann::json::array();
  const std::vector<double>& shares = pick(rng, splits);
  for (size_t i = 0; i < shares.size(); ++i) {
    nlohmann::json t = {{"name", "t" + std::to_string(i)},
                        {"share", shares[i]},
                        {"priority", rng.uniform_int(0, 2)}};
    if (chance(rng, 0.3)) t["rate_limit"] = {{"requests_per_s", pick<double>(rng, {1.0, 20.0})}};
    if (chance(rng, 0.3)) t["max_in_flight"] = rng.uniform_int(1, 16);
    list.push_back(t);
  }
  return list;
}

// The path above the engine: none (the engine alone), vLLM's API server by default (no key), or
// a drawn network, gateway with rate limits and a timeout, API server, stages, client timeouts
// and retries, a client machine, tenants with quotas — so the checks cover refusals, aborts and
// retried attempts.
void service(Rng& rng, nlohmann::json& s) {
  const int kind = static_cast<int>(rng.uniform_int(0, 4));
  if (kind == 0) s["service"] = "none";
  if (kind <= 1) return;
  nlohmann::json svc;
  if (chance(rng, 0.6)) {
    svc["network"] = {
        {"rtt_s", {{"type", "exponential"}, {"mean", pick<double>(rng, {0.001, 0.05})}}}};
  }
  if (chance(rng, 0.6)) {
    nlohmann::json gw = station(rng, 4);
    if (chance(rng, 0.5)) {
      gw["rate_limit"] = {{"requests_per_s", pick<double>(rng, {2.0, 50.0})},
                          {"burst", rng.uniform_int(1, 20)}};
      if (chance(rng, 0.3)) gw["rate_limit"]["tokens_per_min"] = 200000;
    }
    if (chance(rng, 0.3)) gw["timeout_s"] = pick<double>(rng, {0.2, 5.0});
    svc["gateway"] = gw;
  }
  if (chance(rng, 0.5)) svc["frontend"] = station(rng, 2);
  if (chance(rng, 0.3)) {
    nlohmann::json stage = station(rng, 8);
    stage["name"] = "retrieval";
    svc["stages"] = nlohmann::json::array({stage});
  }
  if (nlohmann::json c = client(rng); !c.empty()) svc["client"] = c;
  if (chance(rng, 0.4)) svc["tenants"] = tenants(rng);
  s["service"] = svc;
}

// Prefill/decode disaggregation for a quarter of the deployments, drawn from a stream of its
// own so that the rest of each draw stays what it was before disaggregation existed.
void disaggregation(uint64_t seed, nlohmann::json& s) {
  Rng rng(seed ^ 0x646973616767ULL);
  if (!chance(rng, 0.25)) return;
  const bool moe = s["model"] == "Mixtral-8x7B";
  auto role = [&rng, moe](const std::vector<int>& instances) {
    nlohmann::json r = {{"instances", pick<int>(rng, instances)}};
    if (chance(rng, 0.3)) r["tensor_parallel_size"] = pick<int>(rng, {1, 2});
    // Wide expert parallelism in the role: each instance a server of 2 lock-stepped ranks
    // (EP 2 or 4 divides Mixtral's 8 experts).
    if (moe && chance(rng, 0.5)) {
      r["data_parallel_size"] = 2;
      r["enable_expert_parallel"] = true;
    }
    return r;
  };
  s["disaggregation"] = {
      {"prefill", role({1, 1, 2, 3})},
      {"decode", role({1, 1, 2})},
      {"kv_transfer",
       {{"link", pick<std::string>(rng, {"infiniband", "ethernet", "nvlink", "pcie"})},
        {"overlap", pick<std::string>(rng, {"after_prefill", "layerwise"})}}},
      {"prefill_router", pick<std::string>(rng, {"least_outstanding", "round_robin", "random"})},
      {"decode_router", pick<std::string>(rng, {"least_kv", "least_outstanding"})}};
  s.erase("cluster");
  s["parallel"]["data_parallel_size"] = 1;
  if (s["engine"]["batching"] == "static") s["engine"]["batching"] = "continuous";
}

// KV-cache offload for a quarter of the deployments that can take it (prefix caching on, not
// static), small tiers included so that the host tier evicts; a disaggregated one's tier on
// both roles, the prefill instances or the decode instances. A stream of its own keeps the
// other draws as they were.
void kv_offload(uint64_t seed, nlohmann::json& s) {
  Rng rng(seed ^ 0x6f66666c6f6164ULL);
  if (!chance(rng, 0.25)) return;
  if (!s["engine"]["enable_prefix_caching"].get<bool>() || s["engine"]["batching"] == "static") {
    return;
  }
  nlohmann::json* e = &s["engine"];
  if (s.contains("disaggregation")) {
    const std::string where = pick<std::string>(rng, {"both", "prefill", "decode"});
    if (where != "both") e = &s["disaggregation"][where]["engine"];
  }
  (*e)["kv_offloading_size_gib"] = pick<double>(rng, {0.25, 2.0, 32.0});
  if (chance(rng, 0.3)) (*e)["kv_offloading_bandwidth_GBps"] = pick<double>(rng, {1.0, 25.0});
}

// vLLM's --async-scheduling for a third of the deployments that can take it (continuous
// batching, no pipeline parallelism): arrivals held for a step, host work overlapped. A stream
// of its own keeps the other draws as they were.
void async_scheduling(uint64_t seed, nlohmann::json& s) {
  Rng rng(seed ^ 0x6173796e63ULL);
  if (!chance(rng, 0.33)) return;
  if (s["parallel"]["pipeline_parallel_size"] != 1 || s["engine"]["batching"] == "static") return;
  s["engine"]["async_scheduling"] = true;
}

// One step of a drawn agent workflow: llm and tool steps, and up to two levels of parallel,
// branch, loop and sequence groups. ids numbers the steps so that each id is unique.
nlohmann::json agent_step(Rng& rng, int depth, int& ids, const std::string& own);

nlohmann::json agent_steps(Rng& rng, int depth, int& ids, const std::string& own, int most) {
  nlohmann::json list = nlohmann::json::array();
  const int n = static_cast<int>(rng.uniform_int(1, most));
  for (int i = 0; i < n; ++i) list.push_back(agent_step(rng, depth, ids, own));
  return list;
}

nlohmann::json tool_step(Rng& rng, const std::string& id) {
  nlohmann::json t = {
      {"type", "tool"},
      {"id", id},
      {"latency_s", {{"type", "exponential"}, {"mean", pick<double>(rng, {0.05, 1.0})}}},
      {"result_tokens", length(rng, 1, pick<int>(rng, {20, 300}))}};
  if (chance(rng, 0.4)) t["failure_probability"] = pick<double>(rng, {0.3, 1.0});
  if (chance(rng, 0.3)) t["retries"] = rng.uniform_int(1, 2);
  if (chance(rng, 0.2)) {
    t["cache"] = {{"ttl_s", pick<double>(rng, {1.0, 60.0})},
                  {"keys", rng.uniform_int(1, 20)},
                  {"lookup_s", 0.002}};
  }
  return t;
}

nlohmann::json llm_step(Rng& rng, const std::string& id, const std::string& own) {
  nlohmann::json l = {{"type", "llm"},
                      {"id", id},
                      {"new_tokens", length(rng, 1, pick<int>(rng, {16, 200}))},
                      {"output_tokens", length(rng, 1, pick<int>(rng, {8, 100}))},
                      {"stream", chance(rng, 0.7)}};
  if (chance(rng, 0.2)) l["optional"] = true;
  if (!own.empty()) {
    const bool small = chance(rng, 0.4);
    if (small) l["deployment"] = "small";
    if (chance(rng, 0.5)) l["fallback"] = small ? own : "small";
  }
  if (chance(rng, 0.15)) {
    l["cache"] = {{"exact_hit_probability", pick<double>(rng, {0.1, 0.5})}, {"lookup_s", 0.001}};
  }
  return l;
}

nlohmann::json agent_step(Rng& rng, int depth, int& ids, const std::string& own) {
  const std::string id = "s" + std::to_string(ids++);
  const int kind = static_cast<int>(rng.uniform_int(0, depth < 2 ? 8 : 4));
  if (kind <= 2) return llm_step(rng, id, own);
  if (kind <= 4) return tool_step(rng, id);
  switch (kind) {
    case 5:
      return {{"type", "parallel"},
              {"id", id},
              {"max_concurrency", rng.uniform_int(0, 2)},
              {"steps", agent_steps(rng, depth + 1, ids, own, 3)}};
    case 6:
      return {
          {"type", "branch"},
          {"id", id},
          {"arms", {{{"probability", 0.5}, {"steps", agent_steps(rng, depth + 1, ids, own, 2)}}}}};
    case 7: {
      // A loop until its own tool succeeds, or a fixed number of times.
      nlohmann::json steps = agent_steps(rng, depth + 1, ids, own, 2);
      const std::string tool = "s" + std::to_string(ids++);
      steps.push_back(tool_step(rng, tool));
      nlohmann::json loop = {{"type", "loop"},
                             {"id", id},
                             {"max_iterations", rng.uniform_int(1, 3)},
                             {"steps", steps}};
      if (chance(rng, 0.5)) loop["until_succeeds"] = tool;
      return loop;
    }
    default:
      return {{"type", "sequence"},
              {"id", id},
              {"subtask", true},
              {"steps", agent_steps(rng, depth + 1, ids, own, 3)}};
  }
}

nlohmann::json workflow(Rng& rng, int index, const std::string& own) {
  int ids = 0;
  nlohmann::json w = {{"name", "w" + std::to_string(index)},
                      {"weight", pick<double>(rng, {1.0, 3.0})},
                      {"system_prompt_tokens", pick<int>(rng, {0, 16, 300})},
                      {"steps", agent_steps(rng, 0, ids, own, 4)}};
  nlohmann::json context;
  if (chance(rng, 0.3)) context["max_tool_result_tokens"] = pick<int>(rng, {0, 32});
  if (chance(rng, 0.2)) {
    context["summarize"] = {{"every_llm_calls", rng.uniform_int(2, 4)}, {"summary_tokens", 1}};
  }
  // Steps marked as subtasks need to know what their end keeps.
  if (w["steps"].dump().find("\"subtask\"") != std::string::npos)
    context["subtask_summary_tokens"] = pick<int>(rng, {1, 50});
  if (!context.empty()) w["context"] = context;
  return w;
}

// An agent workload for a quarter of the deployments, sometimes with a second deployment (a
// small model its llm steps may call or fall back to); a stream of its own keeps the other
// draws as they were. Both deployments get a max_model_len of 1024 or 2048, so that a context
// that outgrows one may fit the other; the small one is sometimes a data-parallel pair or has
// a host KV tier.
void agent(uint64_t seed, nlohmann::json& s, DrawnScenario& d) {
  Rng rng(seed ^ 0x6167656e74ULL);
  if (!chance(rng, 0.25)) return;
  const bool two_deployments = chance(rng, 0.5);
  const std::string own = two_deployments ? s["model"].get<std::string>() : "";
  nlohmann::json a;
  const int workflows = static_cast<int>(rng.uniform_int(1, 2));
  for (int i = 0; i < workflows; ++i) a["workflows"].push_back(workflow(rng, i, own));
  nlohmann::json arrival;
  const int kind = static_cast<int>(rng.uniform_int(0, 3));
  if (kind <= 1) {
    arrival = {{"type", kind == 0 ? "poisson" : "constant"},
               {"rate_qps", pick<double>(rng, {0.2, 2.0, 20.0})}};
  } else if (kind == 2) {
    arrival = {{"type", "closed"}, {"clients", rng.uniform_int(1, 6)}};
  } else {
    arrival = {{"type", "stepped"},
               {"steps", {1, rng.uniform_int(2, 4)}},
               {"step_duration_s", rng.uniform_int(2, 6)},
               {"think_time_s", {{"type", "exponential"}, {"mean", 0.5}}}};
  }
  d.sessions = static_cast<uint64_t>(rng.uniform_int(1, 30));
  a["sessions"] = d.sessions;
  d.stepped_sessions = kind == 3;
  d.agent = true;
  d.requests_known = false;
  d.num_requests = 0;
  s["workload"] = {{"arrival", arrival}, {"agent", a}};
  if (!two_deployments) return;
  // Limits that differ let a call too long for one deployment succeed on its fallback.
  s["engine"]["max_model_len"] = pick<int>(rng, {1024, 2048});
  const int max_model_len = pick<int>(rng, {1024, 2048});
  nlohmann::json small = {{"name", "small"},
                          {"model", pick<std::string>(rng, {"SmolLM2-135M", "Qwen3-8B"})},
                          {"gpu", pick(rng, kGpus)},
                          {"engine", {{"max_model_len", max_model_len}}}};
  if (chance(rng, 0.3)) small["parallel"] = {{"data_parallel_size", 2}};
  if (s["engine"]["batching"] != "static" && chance(rng, 0.3)) {
    small["engine"]["kv_offloading_size_gib"] = pick<double>(rng, {0.25, 2.0});
  }
  s["deployments"] = nlohmann::json::array({small});
}

}  // namespace

DrawnScenario random_scenario(uint64_t seed) {
  Rng rng(seed);
  DrawnScenario d;
  nlohmann::json& s = d.scenario;
  s["name"] = "random-" + std::to_string(seed);
  s["model"] = pick(rng, kModels);
  s["gpu"] = pick(rng, kGpus);
  s["parallel"] = {{"tensor_parallel_size", pick<int>(rng, {1, 1, 2, 4, 8})},
                   {"pipeline_parallel_size", pick<int>(rng, {1, 1, 2})},
                   {"data_parallel_size", pick<int>(rng, {1, 1, 2, 3})}};
  s["engine"] = engine(rng);
  s["cluster"] = {
      {"router", pick<std::string>(rng, {"round_robin", "random", "least_outstanding", "least_kv",
                                         "power_of_two", "prefix_affinity"})}};
  s["workload"] = workload(rng, d);
  service(rng, s);
  d.client_machine = s.contains("service") && s["service"].is_object() &&
                     s["service"].contains("client") && s["service"]["client"].contains("machine");
  s["seed"] = static_cast<int64_t>(rng.uniform_int(0, 1 << 30));
  s["metrics"] = {{"sample_interval_s", pick<double>(rng, {0.0, 0.5, 5.0})}};
  disaggregation(seed, s);
  kv_offload(seed, s);
  agent(seed, s, d);
  async_scheduling(seed, s);
  return d;
}

}  // namespace servesim::testing
