#include "plan/plan_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

#include "models/speculative_config.h"
#include "plan/plan_text.h"
#include "sim/core/csv_line.h"

namespace servesim {
namespace {

nlohmann::json number(double x) {
  return std::isnan(x) ? nlohmann::json() : nlohmann::json(x);
}

nlohmann::json latency_json(const MetricsSummary& m) {
  nlohmann::json j;
  for (const auto& [name, s] : {std::pair<const char*, const LatencyStats*>{"ttft", &m.ttft},
                                {"tpot", &m.tpot},
                                {"itl", &m.itl},
                                {"e2e", &m.e2e}}) {
    j[name] = {{"p50_ms", number(s->p50_s * 1e3)}, {"p99_ms", number(s->p99_s * 1e3)}};
  }
  return j;
}

// Draft tokens per step of the candidate's (decode) engine; 0 without speculation.
int speculative_tokens(const PlanCandidate& c) {
  return c.engine.speculative ? c.engine.speculative->num_speculative_tokens : 0;
}

// The host KV tier per instance, GiB: the (decode) engine's, else a disaggregated group's
// prefill instances'.
std::optional<double> host_kv_gib(const PlanCandidate& c) {
  if (c.engine.kv_offloading_size_gib || !c.disaggregated()) return c.engine.kv_offloading_size_gib;
  return c.prefill_engine.kv_offloading_size_gib;
}

// The CSVs' last columns: the host KV tier, GiB (empty: none), and the draft tokens per step.
std::string engine_flag_columns(const PlanCandidate& c) {
  const std::optional<double> gib = host_kv_gib(c);
  return "," + (gib ? format_number("%g", *gib) : std::string()) + "," +
         std::to_string(speculative_tokens(c));
}

// Milliseconds of `seconds` in `format`; "-" when nothing was measured.
std::string ms(double seconds, const char* format) {
  return std::isnan(seconds) ? std::string("-") : format_number(format, seconds * 1e3);
}

nlohmann::json candidate_json(const PlanCandidate& c, size_t rank) {
  nlohmann::json row = {{"rank", rank},
                        {"gpu", c.gpu},
                        {"tp", c.tp},
                        {"pp", c.pp},
                        {"expert_parallel", c.expert_parallel},
                        {"dp", c.dp},
                        {"deployment", c.shape()},
                        {"max_num_seqs", c.max_num_seqs},
                        {"kv_offloading_size_gib",
                         host_kv_gib(c) ? nlohmann::json(*host_kv_gib(c)) : nlohmann::json()},
                        {"num_speculative_tokens", speculative_tokens(c)},
                        {"status", candidate_status_name(c.status)},
                        {"limit", c.limit},
                        {"reason", c.reason},
                        {"evaluations", c.evaluations}};
  const bool sized =
      c.status == CandidateStatus::kFeasible || c.status == CandidateStatus::kOverLimits;
  if (sized && c.sustained > 0) {
    row["sustained_per_replica"] = c.sustained;
    row["capacity_req_per_s"] = c.capacity;
    row["replicas"] = c.replicas;
    row["gpus"] = c.total_gpus;
    row["usd_per_hour"] = c.cost_per_hour;
    row["usd_per_million_tokens"] = c.usd_per_million_tokens;
    row["headroom"] = c.headroom;
    row["verified"] = c.verified;
    row["predicted"] = latency_json(c.predicted);
  }
  if (c.disaggregated()) {
    row["disaggregation"] = {{"prefill_instances", c.prefill_instances},
                             {"prefill_gpu", c.prefill_gpu},
                             {"prefill_tp", c.prefill_tp},
                             {"decode_instances", c.decode_instances},
                             {"decode_gpu", c.gpu},
                             {"decode_tp", c.tp}};
  }
  if (!c.suggestion.empty()) row["suggestion"] = c.suggestion;
  return row;
}

nlohmann::json pareto_json(const PlanReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ParetoPoint& p : report.pareto) {
    const PlanCandidate& c = report.candidates[p.candidate];
    rows.push_back({{"rank", p.candidate + 1},
                    {"gpu", c.gpu},
                    {"tp", c.tp},
                    {"pp", c.pp},
                    {"deployment", c.shape()},
                    {"max_num_seqs", c.max_num_seqs},
                    {"num_speculative_tokens", speculative_tokens(c)},
                    {"load", p.load},
                    {"tokens_per_s_per_user", p.tokens_per_s_per_user},
                    {"tokens_per_s_per_gpu", p.tokens_per_s_per_gpu}});
  }
  return rows;
}

// The plan's target and SLOs, and what it took to make.
std::string table_header(const PlanReport& r) {
  std::string out = "plan: " + r.model + " (" + r.scenario + "), target " +
                    load_text(r.load, r.target_load, r.sessions) + ", SLO";
  for (const SloTarget& s : r.slos) {
    out += " " + s.name() + format_number("<=%.0fms", s.limit_s * 1e3);
  }
  out += "\n  " + std::to_string(r.enumerated) + " candidates, " + std::to_string(r.simulated) +
         " probed, " + std::to_string(r.searched) + " searched (" + std::to_string(r.simulations) +
         " simulations of " + std::to_string(r.requests) + " requests)\n";
  if (r.interrupted) {
    const auto left = std::count_if(r.candidates.begin(), r.candidates.end(), [](const auto& c) {
      return c.status == CandidateStatus::kInterrupted;
    });
    out += "  interrupted (Ctrl-C): " + std::to_string(left) + " of the " +
           std::to_string(r.simulated) +
           " candidates that fit were not searched; the ranking covers the others\n";
  }
  return out + "\n";
}

// "EP8 (DP4)" for an expert-parallel candidate, else "".
std::string expert_parallel_label(const PlanCandidate& c) {
  if (!c.expert_parallel) return "";
  return "EP" + std::to_string(c.tp * c.dp) + " (DP" + std::to_string(c.dp) + ")";
}

// " +64 GiB host KV" for a candidate with a KV offload tier, " +ngram k=3" for one that
// speculates, both, or "".
std::string engine_label(const PlanCandidate& c) {
  std::string out;
  if (const std::optional<double> gib = host_kv_gib(c)) {
    out += format_number(" +%g GiB host KV", *gib);
  }
  if (c.engine.speculative) {
    out += " +" + std::string(speculative_method_name(c.engine.speculative->method)) +
           " k=" + std::to_string(speculative_tokens(c));
  }
  return out;
}

// Nothing is feasible: the closest candidates (at least one) and what each would need.
std::string closest_text(const PlanReport& r, size_t rows) {
  std::string out = "No candidate meets the SLOs within the limits. Closest candidates:\n";
  size_t shown = 0;
  for (const PlanCandidate& c : r.candidates) {
    if (shown == std::max<size_t>(rows, 1)) break;
    ++shown;
    out += "  " + c.gpu + " " + c.shape() + engine_label(c) + " max_num_seqs " +
           std::to_string(c.max_num_seqs) + ": " + c.reason + "\n";
    if (!c.suggestion.empty()) out += "      would need: " + c.suggestion + "\n";
  }
  return out;
}

// The first `rows` feasible candidates as a fixed-width table, with its heading. A
// disaggregated group's TP column is "-": its label at the end gives each role's.
std::string ranked_rows(const PlanReport& r, size_t rows) {
  char line[512];
  std::snprintf(line, sizeof line,
                "%4s  %-14s %3s %3s %5s %4s %5s %9s %8s %9s %9s %8s %8s %8s  %s\n", "rank", "gpu",
                "tp", "pp", "seqs", "rep", "gpus", "$/hour", "$/Mtok", "TTFT50ms", "TTFT99ms",
                "TPOT50ms", "TPOT99ms", "headroom", "limit");
  std::string out = line;
  size_t shown = 0;
  for (size_t k = 0; k < r.candidates.size() && shown < rows; ++k) {
    const PlanCandidate& c = r.candidates[k];
    if (c.status != CandidateStatus::kFeasible) break;
    ++shown;
    const MetricsSummary& m = c.predicted;
    const std::string tp = c.disaggregated() ? "-" : std::to_string(c.tp);
    std::string label;
    if (c.disaggregated()) {
      label = " | " + c.shape();
    } else if (c.expert_parallel) {
      label = " | " + expert_parallel_label(c);
    }
    const std::string flags = engine_label(c).empty() ? "" : " |" + engine_label(c);
    std::snprintf(line, sizeof line,
                  "%4zu  %-14s %3s %3d %5d %4d %5d %9.2f %8.4f %9s %9s %8s %8s %7.0f%%  %s%s%s%s\n",
                  k + 1, c.gpu.c_str(), tp.c_str(), c.pp, c.max_num_seqs, c.replicas, c.total_gpus,
                  c.cost_per_hour, c.usd_per_million_tokens, ms(m.ttft.p50_s, "%.1f").c_str(),
                  ms(m.ttft.p99_s, "%.1f").c_str(), ms(m.tpot.p50_s, "%.2f").c_str(),
                  ms(m.tpot.p99_s, "%.2f").c_str(), c.headroom * 100, c.limit.c_str(),
                  c.verified ? "" : " (not verified)", label.c_str(), flags.c_str());
    out += line;
  }
  return out;
}

// "3 x H100-SXM replica(s) of TP 2 = 6 GPUs" or "2 groups of 2P TP1 + 1D TP1 on H100-SXM =
// 6 GPUs".
std::string deployment_text(const PlanCandidate& c) {
  std::string out;
  if (c.disaggregated()) {
    out = std::to_string(c.replicas) + (c.replicas == 1 ? " group of " : " groups of ") +
          c.shape() + (c.mixed_gpus() ? "" : " on " + c.gpu);
  } else {
    const std::string ep = c.expert_parallel
                               ? " x DP " + std::to_string(c.dp) + ", expert parallel (EP " +
                                     std::to_string(c.tp * c.dp) + ")"
                               : "";
    out = std::to_string(c.replicas) + " x " + c.gpu + " replica(s) of TP " + std::to_string(c.tp) +
          (c.pp > 1 ? " PP " + std::to_string(c.pp) : "") + ep;
  }
  return out + " = " + std::to_string(c.total_gpus) + " GPUs";
}

// A way the searched candidates divide in two, which the winner's text compares across.
struct Family {
  const char* members;      // "disaggregated"
  const char* non_members;  // "aggregated"
  bool (*contains)(const PlanCandidate&);
};

constexpr Family kFamilies[] = {
    {"disaggregated", "aggregated", [](const PlanCandidate& c) { return c.disaggregated(); }},
    {"with speculation", "without speculation",
     [](const PlanCandidate& c) { return c.engine.speculative.has_value(); }},
};

// When both sides of `family` were searched: the best candidate on the side the winner is
// not on, against the winner, or why none there is feasible.
std::string family_comparison(const PlanReport& r, const Family& family) {
  const PlanCandidate& w = r.candidates.front();
  const bool winner_in = family.contains(w);
  const auto found =
      std::find_if(r.candidates.begin(), r.candidates.end(),
                   [&](const PlanCandidate& c) { return family.contains(c) != winner_in; });
  if (found == r.candidates.end()) return "";
  const PlanCandidate* other = &*found;
  std::string out =
      std::string("  best ") + (winner_in ? family.non_members : family.members) + ": ";
  if (other->status != CandidateStatus::kFeasible) {
    return out + other->gpu + " " + other->shape() + engine_label(*other) + " max_num_seqs " +
           std::to_string(other->max_num_seqs) + " " +
           std::string(candidate_status_name(other->status)) + ": " + other->reason + "\n";
  }
  out += deployment_text(*other) + format_number(", $%.2f/hour", other->cost_per_hour);
  const double ratio = other->cost_per_hour / w.cost_per_hour;
  const char* unverified = w.verified && !other->verified
                               ? ", not verified by a full-cluster simulation: raise --top"
                               : "";
  if (ratio > 1 + 1e-9) {
    out += format_number(" (%.0f%% more)", 100 * (ratio - 1));
  } else if (ratio < 1 - 1e-9) {
    out += format_number(" (%.0f%% less", 100 * (1 - ratio)) + unverified + ")";
  } else {
    out += std::string(" (the same cost") + (*unverified ? unverified : "; less headroom") + ")";
  }
  return out + "\n    it " + other->reason + "\n    the winner " + w.reason + "\n";
}

// The winner's deployment, cost and `vllm serve` line(s).
std::string winner_text(const PlanReport& r) {
  const PlanCandidate& w = r.candidates.front();
  std::string out = "\nwinner: " + deployment_text(w) + ", " +
                    format_number("$%.2f/hour", w.cost_per_hour) +
                    format_number(", $%.4f per 1M tokens", w.usd_per_million_tokens) + "\n";
  const std::vector<std::string> commands = r.vllm_commands();
  if (w.disaggregated()) {
    out += "  prefill: " + commands[0] + "\n  decode:  " + commands[1] + "\n";
    const std::string prefill_on = w.mixed_gpus() ? " instances on " + w.prefill_gpu : "";
    const std::string decode_on = w.mixed_gpus() ? " on " + w.gpu : "";
    const std::string ranks =
        w.dp > 1 ? ", each a server of " + std::to_string(w.dp) + " data-parallel ranks" : "";
    out += "  (" + std::to_string(w.replicas * w.prefill_instances) + " prefill" + prefill_on +
           " and " + std::to_string(w.replicas * w.decode_instances) + " decode instances" +
           decode_on + ranks + " behind a disaggregating proxy; KV over " + r.kv_link + ")\n";
  } else {
    out += "  " + commands[0] + "\n";
    if (w.replicas > 1) {
      out += "  (one such server per replica, " + std::to_string(w.replicas) +
             " replicas behind a load balancer)\n";
    }
  }
  for (const Family& family : kFamilies) out += family_comparison(r, family);
  return out;
}

}  // namespace

std::string_view candidate_status_name(CandidateStatus status) {
  switch (status) {
    case CandidateStatus::kFeasible:
      return "feasible";
    case CandidateStatus::kDominated:
      return "not searched";
    case CandidateStatus::kOverLimits:
      return "over limits";
    case CandidateStatus::kSloUnreachable:
      return "misses SLO";
    case CandidateStatus::kDoesNotFit:
      return "does not fit";
    case CandidateStatus::kInterrupted:
      return "interrupted";
    case CandidateStatus::kInvalid:
      break;
  }
  return "invalid";
}

std::string PlanCandidate::shape() const {
  const std::string pp_text = " PP" + std::to_string(pp);
  if (disaggregated()) {
    const std::string prefill_on = mixed_gpus() ? prefill_gpu + " " : "";
    const std::string decode_on = mixed_gpus() ? gpu + " " : "";
    // Each role's instance: "TP1 EP8 (DP8)" with expert parallelism.
    const auto ranks = [&](int role_tp) {
      std::string text = "TP" + std::to_string(role_tp);
      if (!expert_parallel) return text;
      return text + " EP" + std::to_string(role_tp * dp) + " (DP" + std::to_string(dp) + ")";
    };
    return std::to_string(prefill_instances) + "P " + prefill_on + ranks(prefill_tp) + " + " +
           std::to_string(decode_instances) + "D " + decode_on + ranks(tp) +
           (pp > 1 ? pp_text : "");
  }
  const std::string ep = expert_parallel_label(*this);
  return "TP" + std::to_string(tp) + pp_text + (ep.empty() ? "" : " " + ep);
}

std::vector<std::string> PlanReport::vllm_commands() const {
  if (!feasible()) return {};
  const PlanCandidate& c = candidates.front();
  auto command = [&](const EngineConfig& e, int tp) {
    std::string cmd = "vllm serve " + (model_repo.empty() ? model : model_repo);
    cmd += " --tensor-parallel-size " + std::to_string(tp);
    if (c.pp > 1) cmd += " --pipeline-parallel-size " + std::to_string(c.pp);
    if (c.expert_parallel) {
      if (c.dp > 1) cmd += " --data-parallel-size " + std::to_string(c.dp);
      cmd += " --enable-expert-parallel";
    }
    cmd += " --max-num-seqs " + std::to_string(e.max_num_seqs);
    cmd += " --max-num-batched-tokens " + std::to_string(e.max_num_batched_tokens);
    cmd += format_number(" --gpu-memory-utilization %g", e.gpu_memory_utilization);
    cmd += " --max-model-len " + std::to_string(e.max_model_len);
    cmd += e.enable_prefix_caching ? " --enable-prefix-caching" : " --no-enable-prefix-caching";
    if (!e.enable_chunked_prefill) cmd += " --no-enable-chunked-prefill";
    if (e.disable_custom_all_reduce) cmd += " --disable-custom-all-reduce";
    if (e.dtype) cmd += " --dtype " + std::string(dtype_name(*e.dtype));
    if (e.kv_cache_dtype) cmd += " --kv-cache-dtype " + std::string(dtype_name(*e.kv_cache_dtype));
    if (e.speculative) cmd += " --speculative-config '" + e.speculative->vllm_json().dump() + "'";
    if (e.kv_offloading_size_gib && !c.disaggregated()) {
      cmd += format_number(" --kv-offloading-size %g", *e.kv_offloading_size_gib) +
             " --kv-offloading-backend native";
    }
    if (c.disaggregated()) {
      // vLLM's disaggregated examples start both roles as kv_both; the proxy assigns them.
      nlohmann::json config = {{"kv_connector", kv_connector}, {"kv_role", "kv_both"}};
      if (e.kv_offloading_size_gib) {
        // --kv-offloading-size would replace the transfer connector with its own
        // OffloadingConnector (vLLM 0.12's NativeOffloadingParser); both go through a
        // MultiConnector, the transfer first, with the host tier's total bytes.
        const nlohmann::json offload = {
            {"kv_connector", "OffloadingConnector"},
            {"kv_role", "kv_both"},
            {"kv_connector_extra_config",
             {{"cpu_bytes_to_use",
               static_cast<int64_t>(std::llround(*e.kv_offloading_size_gib * (1 << 30)))}}}};
        config = {{"kv_connector", "MultiConnector"},
                  {"kv_role", "kv_both"},
                  {"kv_connector_extra_config", {{"connectors", {config, offload}}}}};
      }
      cmd += " --kv-transfer-config '" + config.dump() + "'";
    }
    return cmd;
  };
  if (c.disaggregated()) return {command(c.prefill_engine, c.prefill_tp), command(c.engine, c.tp)};
  return {command(c.engine, c.tp)};
}

nlohmann::json PlanReport::to_json() const {
  nlohmann::json j;
  j["model"] = model;
  j["scenario"] = scenario;
  const char* target = load == PlanLoad::kConcurrency ? "concurrency"
                       : sessions                     ? "sessions_per_s"
                                                      : "qps";
  j["target"] = {{target, target_load}};
  nlohmann::json slo = nlohmann::json::object();
  for (const SloTarget& s : slos) slo[s.name() + "_ms"] = s.limit_s * 1e3;
  j["slo"] = slo;
  j["max_error_rate"] = max_error_rate;
  j["requests_per_evaluation"] = requests;
  j["candidates_enumerated"] = enumerated;
  j["candidates_probed"] = simulated;
  j["candidates_searched"] = searched;
  j["simulations"] = simulations;
  if (interrupted) j["interrupted"] = true;
  j["feasible"] = feasible();
  if (feasible()) {
    const std::vector<std::string> commands = vllm_commands();
    if (candidates.front().disaggregated()) {
      j["vllm_prefill_command"] = commands[0];
      j["vllm_decode_command"] = commands[1];
      j["kv_transfer"] = {{"connector", kv_connector}, {"link", kv_link}};
    } else {
      j["vllm_command"] = commands[0];
    }
    j["replicas"] = candidates.front().replicas;
  }
  nlohmann::json rows = nlohmann::json::array();
  for (size_t r = 0; r < candidates.size(); ++r)
    rows.push_back(candidate_json(candidates[r], r + 1));
  j["candidates"] = rows;
  j["pareto"] = pareto_json(*this);
  return j;
}

std::string PlanReport::to_csv() const {
  std::string out =
      "rank,gpu,tp,pp,max_num_seqs,status,replicas,gpus,usd_per_hour,usd_per_million_tokens,"
      "sustained_per_replica,headroom,verified,ttft_p50_ms,ttft_p99_ms,tpot_p50_ms,tpot_p99_ms,"
      "itl_p99_ms,e2e_p99_ms,limit,reason,deployment,kv_offloading_size_gib,"
      "num_speculative_tokens\n";
  for (size_t r = 0; r < candidates.size(); ++r) {
    const PlanCandidate& c = candidates[r];
    const bool sized = c.sustained > 0;
    const MetricsSummary& m = c.predicted;
    out += std::to_string(r + 1) + "," + csv_escape(c.gpu) + "," + std::to_string(c.tp) + "," +
           std::to_string(c.pp) + "," + std::to_string(c.max_num_seqs) + "," +
           std::string(candidate_status_name(c.status)) + ",";
    if (sized) {
      out += std::to_string(c.replicas) + "," + std::to_string(c.total_gpus) + "," +
             format_number("%.2f", c.cost_per_hour) + "," +
             format_number("%.4f", c.usd_per_million_tokens) + "," +
             format_number("%.4g", c.sustained) + "," + format_number("%.3f", c.headroom) + "," +
             (c.verified ? "yes" : "no") + "," + ms(m.ttft.p50_s, "%.1f") + "," +
             ms(m.ttft.p99_s, "%.1f") + "," + ms(m.tpot.p50_s, "%.2f") + "," +
             ms(m.tpot.p99_s, "%.2f") + "," + ms(m.itl.p99_s, "%.2f") + "," +
             ms(m.e2e.p99_s, "%.0f") + ",";
    } else {
      out += ",,,,,,,,,,,,,";
    }
    out += csv_escape(c.limit) + "," + csv_escape(c.reason) + "," + csv_escape(c.shape()) +
           engine_flag_columns(c) + "\n";
  }
  return out;
}

std::string PlanReport::pareto_csv() const {
  std::string out =
      "rank,gpu,tp,pp,max_num_seqs,load,tokens_per_s_per_user,"
      "tokens_per_s_per_gpu,deployment,kv_offloading_size_gib,num_speculative_tokens\n";
  for (const ParetoPoint& p : pareto) {
    const PlanCandidate& c = candidates[p.candidate];
    out += std::to_string(p.candidate + 1) + "," + csv_escape(c.gpu) + "," + std::to_string(c.tp) +
           "," + std::to_string(c.pp) + "," + std::to_string(c.max_num_seqs) + "," + p.load + "," +
           format_number("%.2f", p.tokens_per_s_per_user) + "," +
           format_number("%.2f", p.tokens_per_s_per_gpu) + "," + csv_escape(c.shape()) +
           engine_flag_columns(c) + "\n";
  }
  return out;
}

std::string PlanReport::to_table(size_t rows) const {
  const std::string header = table_header(*this);
  if (!feasible()) return header + closest_text(*this, rows);
  return header + ranked_rows(*this, rows) + winner_text(*this);
}

}  // namespace servesim
