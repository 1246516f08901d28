#include "plan/plan_state.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>

#include "models/config_error.h"
#include "models/json_file.h"
#include "plan/candidate_outcome.h"
#include "plan/slo_check.h"

namespace servesim {
namespace {

void check_numbers(const PlanOptions& o) {
  const char* target = o.load == PlanLoad::kQps ? "--target-qps" : "--target-concurrency";
  if (!(o.target_load > 0) || !std::isfinite(o.target_load)) {
    throw ConfigError(std::string(target) + " must be > 0");
  }
  if (o.load == PlanLoad::kConcurrency && o.target_load != std::floor(o.target_load)) {
    throw ConfigError("--target-concurrency must be a whole number of clients");
  }
  if (!(o.max_error_rate >= 0 && o.max_error_rate < 1)) {
    throw ConfigError("--max-error-rate must be in [0, 1), e.g. 0.01");
  }
  if (o.top_k < 1) throw ConfigError("--top must be >= 1");
  if (o.requests < 20 || o.requests > 10000000) {
    throw ConfigError("--requests must be in [20, 10000000]");
  }
  for (const auto& [name, list] : {std::pair<const char*, const std::vector<int>*>{"--tp", &o.tp},
                                   {"--pp", &o.pp},
                                   {"--max-num-seqs", &o.max_num_seqs},
                                   {"--prefill-tp", &o.prefill_tp},
                                   {"--decode-tp", &o.decode_tp}}) {
    for (int v : *list) {
      if (v < 1)
        throw ConfigError(std::string(name) + " values must be >= 1, got " + std::to_string(v));
    }
  }
  for (const PdRatio& r : o.pd_ratios.value_or(std::vector<PdRatio>{})) {
    if (r.prefill < 1 || r.decode < 1) {
      throw ConfigError("--pd: each group needs >= 1 prefill and >= 1 decode instance, got " +
                        std::to_string(r.prefill) + ":" + std::to_string(r.decode));
    }
  }
  for (int k : o.num_speculative_tokens) {
    if (k < 0 || k > kMaxSpeculativeDraftTokens) {
      throw ConfigError("--num-speculative-tokens values must be in [0, " +
                        std::to_string(kMaxSpeculativeDraftTokens) +
                        "] (0 = no speculation), got " + std::to_string(k));
    }
  }
  if (o.max_gpus && *o.max_gpus < 1) throw ConfigError("--max-gpus must be >= 1");
  if (o.max_budget_per_hour && !(*o.max_budget_per_hour > 0)) {
    throw ConfigError("--max-budget-per-hour must be > 0 dollars");
  }
}

// A candidate list and a --fix of the same key would each claim to decide it.
void check_fixed_keys(const PlanOptions& o) {
  for (const auto& [key, listed] :
       {std::pair<const char*, bool>{"gpu", !o.gpus.empty()},
        {"parallel.tensor_parallel_size", !o.tp.empty()},
        {"parallel.pipeline_parallel_size", !o.pp.empty()},
        {"engine.max_num_seqs", !o.max_num_seqs.empty()},
        {"engine.speculative.num_speculative_tokens", !o.num_speculative_tokens.empty()}}) {
    if (listed && is_fixed(o, key)) {
      throw ConfigError(std::string("--fix ") + key +
                        " contradicts the candidate list given for it; drop one");
    }
  }
}

std::string resolve_workload_path(const std::string& path, const std::string& base_dir) {
  const std::filesystem::path candidate = std::filesystem::path(base_dir) / path;
  if (base_dir.empty() || std::filesystem::path(path).is_absolute() ||
      !std::filesystem::exists(candidate)) {
    return path;
  }
  return candidate.string();
}

// The scenario's open-loop arrival JSON, which each evaluation scales to keep its shape;
// null for a closed loop or a workload without one.
nlohmann::json open_arrival_of(const nlohmann::json& scenario_json, WorkloadKind kind,
                               const std::string& base_dir) {
  if (kind != WorkloadKind::kOpenLoop) return nlohmann::json();
  nlohmann::json w = scenario_json.at("workload");
  if (w.is_string()) w = load_json_file(resolve_workload_path(w.get<std::string>(), base_dir));
  return w.contains("arrival") ? w["arrival"] : nlohmann::json();
}

}  // namespace

bool is_fixed(const PlanOptions& options, const std::string& key) {
  return std::any_of(options.fixed.begin(), options.fixed.end(),
                     [&](const std::string& f) { return f.rfind(key + "=", 0) == 0; });
}

const std::optional<SpeculativeConfig>& speculation_of(const SimulationConfig& config) {
  const DisaggregationSpec& d = config.disaggregation;
  if (config.engine.speculative || !d.enabled) return config.engine.speculative;
  return d.decode.engine.speculative;
}

struct PlanState::Inputs {
  PlanOptions options;
  Scenario scenario;
  nlohmann::json open_arrival;
  nlohmann::json kv_transfer;
};

PlanState::Inputs PlanState::read_inputs(const PlanOptions& options, const Catalog& catalog) {
  Inputs in{options, Scenario(), nlohmann::json(), nlohmann::json()};
  PlanOptions& o = in.options;
  check_numbers(o);
  check_unique_slos(o.slos);
  check_fixed_keys(o);
  const bool from_file = !o.scenario_path.empty();
  if (!from_file && !o.scenario.is_object()) {
    throw ConfigError(
        "plan: no workload: give a scenario file, or --model NAME --input-len N --output-len N");
  }
  const std::string origin = from_file ? o.scenario_path : "command line";
  nlohmann::json scenario_json = from_file ? load_json_file(o.scenario_path) : o.scenario;
  apply_overrides(scenario_json, o.fixed);
  const std::string base_dir = std::filesystem::path(o.scenario_path).parent_path().string();
  in.scenario = parse_scenario(scenario_json, base_dir, origin, catalog);
  const SimulationConfig& base = in.scenario.config;
  if (base.workload.kind == WorkloadKind::kTrace) {
    throw ConfigError(origin +
                      ": workload: plan scales a synthetic workload; a trace has fixed arrivals "
                      "(use a poisson/gamma/closed workload with the trace's lengths)");
  }
  if (base.workload.kind == WorkloadKind::kAgent) {
    throw ConfigError(origin +
                      ": workload.agent: plan sizes for requests per second, not agent "
                      "sessions yet; compare deployments with servesim sweep (docs/agents.md)");
  }
  if (o.slos.empty()) o.slos = slos_from_scenario(base.metrics.slo);
  if (o.slos.empty()) {
    throw ConfigError("plan: no SLO given; add --slo ttft:p99=0.5" +
                      (from_file ? " (or an slo block to " + o.scenario_path + ")" : ""));
  }
  const bool speculates = std::any_of(o.num_speculative_tokens.begin(),
                                      o.num_speculative_tokens.end(), [](int k) { return k > 0; });
  if (speculates && !speculation_of(base)) {
    throw ConfigError(
        "--num-speculative-tokens: " + origin +
        " has no engine.speculative block to take the method and acceptance from; add one, "
        "e.g. \"speculative\": {\"method\": \"ngram\", \"num_speculative_tokens\": 4, "
        "\"acceptance_rate\": 0.6} (docs/speculative-decoding.md)");
  }
  in.open_arrival = open_arrival_of(scenario_json, base.workload.kind, base_dir);
  if (base.disaggregation.enabled) {
    const nlohmann::json& d = scenario_json.at("disaggregation");
    if (d.contains("kv_transfer")) in.kv_transfer = d["kv_transfer"];
    if (!o.pd_ratios) {
      o.pd_ratios = {{base.disaggregation.prefill.instances, base.disaggregation.decode.instances}};
    }
  }
  const bool disaggregated = o.pd_ratios && !o.pd_ratios->empty();
  if (!o.aggregated && !disaggregated) {
    throw ConfigError(
        "plan: --no-aggregated leaves no candidate: give the disaggregated groups to search, "
        "e.g. --pd 1:1,2:1 (or a scenario with a disaggregation block)");
  }
  if (!disaggregated && (!o.prefill_tp.empty() || !o.decode_tp.empty() || !o.prefill_gpus.empty() ||
                         !o.decode_gpus.empty())) {
    throw ConfigError(
        "--prefill-tp, --decode-tp, --prefill-gpus and --decode-gpus shape disaggregated "
        "candidates: add --pd P:D (e.g. --pd 1:1,2:1)");
  }
  return in;
}

PlanState::PlanState(const PlanOptions& options, const Catalog& catalog, WorkShare& share)
    : PlanState(read_inputs(options, catalog), catalog, share) {}

PlanState::PlanState(Inputs inputs, const Catalog& catalog_in, WorkShare& share_in)
    : catalog(catalog_in),
      share(share_in),
      options(std::move(inputs.options)),
      scenario(std::move(inputs.scenario)),
      evaluator(options, scenario.config, std::move(inputs.open_arrival),
                std::move(inputs.kv_transfer)) {
  const ModelSpec& model = scenario.config.model;
  report.model = model.name;
  report.model_repo = model.hf_repo;
  report.scenario = scenario.name;
  report.load = options.load;
  report.target_load = options.target_load;
  report.sessions =
      options.load == PlanLoad::kQps && scenario.config.workload.multi_turn.has_value();
  report.slos = options.slos;
  report.max_error_rate = options.max_error_rate;
  report.requests = options.requests;
  const KvTransferSpec link = scenario.config.disaggregation.enabled
                                  ? scenario.config.disaggregation.kv_transfer
                                  : KvTransferSpec();
  report.kv_connector = link.connector;
  report.kv_link = link.link;
}

SimulationConfig PlanState::config(size_t i, int replicas, PlanLoad load, double value,
                                   uint64_t requests) const {
  return evaluator.config(gpus[gpu_of[i]], gpus[prefill_gpu_of[i]], candidates[i], replicas, load,
                          value, requests);
}

bool PlanState::stop_requested() {
  if (stopped_.load(std::memory_order_relaxed)) return true;
  if (!options.should_stop || !options.should_stop()) return false;
  stopped_ = true;
  return true;
}

void PlanState::share_for_candidates(const std::vector<size_t>& items,
                                     const std::function<void(size_t)>& body, SharedOutcome shared,
                                     WhenStopped when_stopped) {
  const bool with_probe = shared == SharedOutcome::kCandidateAndProbe;
  auto run_item = [&](size_t k) {
    if (!stop_requested()) {
      body(items[k]);
    } else if (when_stopped == WhenStopped::kMarkInterrupted) {
      mark_interrupted(candidates[items[k]]);
    }
  };
  share_for(
      share, items.size(), options.threads, run_item,
      [&](size_t k, ByteWriter& out) {
        auto write = [&](const auto& v) { out.write(v); };
        outcome_fields(candidates[items[k]], write);
        if (with_probe) evaluation_fields(probes[items[k]], write);
      },
      [&](size_t k, ByteReader& in) {
        auto read = [&](auto& v) { in.read(v); };
        outcome_fields(candidates[items[k]], read);
        if (with_probe) evaluation_fields(probes[items[k]], read);
      });
}

}  // namespace servesim
