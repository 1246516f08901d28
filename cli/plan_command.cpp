#include "cli/plan_command.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "cli/interrupt_flag.h"
#include "cli/process_work_share.h"
#include "models/config_error.h"
#include "models/json_file.h"
#include "plan/planner.h"
#include "sim/metrics/atomic_file.h"

namespace servesim {
namespace {

// The arrival JSON for --arrival: poisson, constant or gamma:CV. Its rate only sets the
// shape's scale; the planner rescales it for every load it tries.
nlohmann::json arrival_from_flag(const std::string& spec, double rate_qps) {
  nlohmann::json a = {{"type", spec}, {"rate_qps", rate_qps}};
  if (spec == "poisson" || spec == "constant") return a;
  const std::string usage =
      "--arrival '" + spec + "': use poisson, constant or gamma:CV (e.g. gamma:2)";
  if (spec.rfind("gamma:", 0) != 0) throw ConfigError(usage);
  size_t used = 0;
  double cv = 0;
  try {
    cv = std::stod(spec.substr(6), &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != spec.size() - 6 || !(cv > 0) || !std::isfinite(cv)) {
    throw ConfigError(usage);
  }
  a["type"] = "gamma";
  a["cv"] = cv;
  return a;
}

// The scenario the workload flags describe, as its file would hold it: the catalog model,
// vLLM's default engine flags, fixed prompt and answer lengths. The GPU is a placeholder
// (the first candidate): the planner replaces it per candidate.
nlohmann::json scenario_from_flags(const PlanCommandOptions& o, const Catalog& catalog) {
  if (o.model.empty()) {
    throw ConfigError(
        "plan: no workload: give a scenario file, or --model NAME --input-len N --output-len N "
        "(servesim models lists the models)");
  }
  if (!o.input_len || !o.output_len) {
    throw ConfigError(
        "plan: --model needs --input-len N and --output-len N (tokens per prompt and per "
        "answer), e.g. --input-len 512 --output-len 128");
  }
  if (*o.input_len < 1) throw ConfigError("--input-len must be >= 1 token");
  if (*o.output_len < 1) throw ConfigError("--output-len must be >= 1 token");
  if (o.arrival && o.target_concurrency) {
    throw ConfigError(
        "--arrival shapes open-loop arrivals, but --target-concurrency runs closed-loop "
        "clients; drop --arrival");
  }
  const std::string arrival = o.arrival.value_or("poisson");
  return {{"name", std::to_string(*o.input_len) + "-token prompts, " +
                       std::to_string(*o.output_len) + "-token answers, " + arrival},
          {"model", o.model},
          {"gpu", o.gpus.empty() ? catalog.gpus().front().name : o.gpus.front()},
          {"workload",
           {{"arrival", arrival_from_flag(arrival, o.target_qps.value_or(1.0))},
            {"prompt_tokens", *o.input_len},
            {"output_tokens", *o.output_len},
            {"num_requests", o.requests}}}};
}

// --pd 1:1,2:1 as instance counts; "none" alone: no disaggregated candidate.
std::vector<PdRatio> pd_ratios_from_flag(const std::vector<std::string>& items) {
  if (items.size() == 1 && items.front() == "none") return {};
  std::vector<PdRatio> ratios;
  for (const std::string& item : items) {
    const std::string usage = "--pd '" + item +
                              "': use P:D, prefill and decode instances per group (e.g. "
                              "--pd 1:1,2:1), or none alone";
    const size_t colon = item.find(':');
    if (colon == std::string::npos) throw ConfigError(usage);
    PdRatio r;
    for (const auto& [text, out] : {std::pair<std::string, int*>{item.substr(0, colon), &r.prefill},
                                    {item.substr(colon + 1), &r.decode}}) {
      size_t used = 0;
      try {
        *out = std::stoi(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != text.size() || *out < 1 || *out > 64) throw ConfigError(usage);
    }
    ratios.push_back(r);
  }
  return ratios;
}

int run_plan(const PlanCommandOptions& o, WorkShare& share) {
  if (o.target_qps.has_value() == o.target_concurrency.has_value()) {
    throw ConfigError("plan: give exactly one of --target-qps and --target-concurrency");
  }
  if (o.threads < 0) throw ConfigError("--threads must be >= 1 (or 0 for all cores)");
  if (o.rows < 1) throw ConfigError("--rows must be >= 1");
  const bool workload_flags = !o.model.empty() || o.input_len || o.output_len || o.arrival;
  if (!o.scenario.empty() && workload_flags) {
    throw ConfigError(
        "plan: --model, --input-len, --output-len and --arrival replace a scenario file; drop "
        "them, or change the scenario with --fix (e.g. --fix workload.prompt_tokens=1024)");
  }
  Catalog catalog;
  PlanOptions p;
  p.scenario_path = o.scenario;
  if (o.scenario.empty()) p.scenario = scenario_from_flags(o, catalog);
  p.fixed = o.fixed;
  if (o.target_qps) {
    p.load = PlanLoad::kQps;
    p.target_load = *o.target_qps;
  } else {
    p.load = PlanLoad::kConcurrency;
    p.target_load = *o.target_concurrency;
  }
  for (const std::string& s : o.slos) p.slos.push_back(parse_slo_target(s));
  p.max_error_rate = o.max_error_rate;
  for (const std::string& g : o.gpus) {
    if (g.empty()) throw ConfigError("--gpus: empty GPU name in the list");
  }
  p.gpus = o.gpus;
  p.tp = o.tp;
  p.pp = o.pp;
  p.max_num_seqs = o.max_num_seqs;
  for (double gib : o.kv_offloading_sizes) {
    if (!(gib >= 0 && gib <= 1e5)) {
      throw ConfigError("--kv-offloading-size: each size must be in [0, 100000] GiB (0 = none)");
    }
  }
  p.kv_offloading_sizes = o.kv_offloading_sizes;
  p.num_speculative_tokens = o.num_speculative_tokens;
  if (!o.pd.empty()) p.pd_ratios = pd_ratios_from_flag(o.pd);
  p.prefill_tp = o.prefill_tp;
  p.decode_tp = o.decode_tp;
  for (const std::vector<std::string>* list : {&o.prefill_gpus, &o.decode_gpus}) {
    for (const std::string& g : *list) {
      if (g.empty()) throw ConfigError("--prefill-gpus/--decode-gpus: empty GPU name in the list");
    }
  }
  p.prefill_gpus = o.prefill_gpus;
  p.decode_gpus = o.decode_gpus;
  p.aggregated = !o.no_aggregated;
  p.max_gpus = o.max_gpus;
  p.max_budget_per_hour = o.max_budget_per_hour;
  p.top_k = o.top;
  p.requests = o.requests;
  p.threads = o.threads;
  // The frontier needs every candidate's operating point, not only the cheapest ones.
  p.search_all = o.search_all || o.pareto;
  if (!o.out_dir.empty() && share.rank() == 0) require_writable_directory(o.out_dir, "--out");
  // Ctrl-C: candidates whose turn has not come are left unsearched, those running finish;
  // the report of what was searched is written and printed, marked interrupted. A second
  // Ctrl-C kills (InterruptFlag).
  const InterruptFlag interrupt;
  p.should_stop = [&interrupt] { return interrupt.raised(); };
  const PlanReport report = plan(p, catalog, share);
  // 128 + SIGINT, the shell's convention; else nothing feasible is an answer, not a usage
  // error: exit 1 so scripts can tell.
  const int status = report.interrupted ? 130 : report.feasible() ? 0 : 1;
  if (share.rank() != 0) return status;

  if (!o.out_dir.empty()) {
    const std::filesystem::path dir(o.out_dir);
    write_file_atomically((dir / "plan.csv").string(), report.to_csv());
    write_file_atomically((dir / "pareto.csv").string(), report.pareto_csv());
    write_file_atomically((dir / "plan.json").string(), json_text(report.to_json()) + "\n");
  }
  if (o.json) {
    nlohmann::json j = report.to_json();
    std::cout << json_text(o.pareto ? j["pareto"] : j) << "\n";
  } else if (o.pareto) {
    std::cout << report.pareto_csv();
  } else {
    std::cout << report.to_table(static_cast<size_t>(o.rows));
  }
  if (report.interrupted) {
    std::cerr << "interrupted: the plan ranks the candidates searched before Ctrl-C\n";
  }
  return status;
}

}  // namespace

CLI::App* add_plan_command(CLI::App& app, PlanCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "plan", "Find the cheapest GPUs, parallelism and flags that meet SLOs at a target load");
  cmd->add_option("scenario", o.scenario,
                  "Scenario file: model, workload shape, engine flags (and SLOs); or give "
                  "--model, --input-len and --output-len instead");
  cmd->add_option("--model", o.model,
                  "Without a scenario file: the model (catalog name or config.json)");
  cmd->add_option("--input-len", o.input_len, "Without a scenario file: tokens per prompt");
  cmd->add_option("--output-len", o.output_len, "Without a scenario file: tokens per answer");
  cmd->add_option("--arrival", o.arrival,
                  "Without a scenario file: poisson (default), constant or gamma:CV");
  cmd->add_option("--target-qps,--qps", o.target_qps,
                  "Load to serve, requests per second (a multi_turn workload: sessions "
                  "started per second)");
  cmd->add_option("--target-concurrency", o.target_concurrency,
                  "Load to serve, concurrent clients (closed loop)");
  cmd->add_option("--slo", o.slos,
                  "METRIC:PERCENTILE=SECONDS, metric ttft|tpot|itl|e2e, percentile "
                  "p50|p90|p95|p99, e.g. --slo ttft:p99=0.5 --slo tpot:p99=50ms (repeatable; "
                  "default: the scenario's slo block as p99)");
  cmd->add_option("--max-error-rate", o.max_error_rate,
                  "Largest fraction of requests rejected or timed out (default 0)");
  cmd->add_option("--gpus", o.gpus, "Candidate GPUs (default: the whole catalog)")->delimiter(',');
  cmd->add_option("--tp", o.tp, "Tensor-parallel sizes (default 1,2,4,8)")->delimiter(',');
  cmd->add_option("--pp", o.pp, "Pipeline-parallel sizes (default: the scenario's)")
      ->delimiter(',');
  cmd->add_option("--max-num-seqs", o.max_num_seqs, "max_num_seqs values (default: the scenario's)")
      ->delimiter(',');
  cmd->add_option("--kv-offloading-size", o.kv_offloading_sizes,
                  "Host KV tier sizes to search, GiB, 0 = none (vLLM --kv-offloading-size; "
                  "default: the scenario's)")
      ->delimiter(',');
  cmd->add_option("--num-speculative-tokens", o.num_speculative_tokens,
                  "Draft tokens per step to search, 0 = no speculation (vLLM "
                  "num_speculative_tokens; the method and acceptance come from the scenario's "
                  "engine.speculative; default: the scenario's)")
      ->delimiter(',');
  cmd->add_option("--pd", o.pd,
                  "Also search prefill/decode-disaggregated groups of P:D instances, e.g. "
                  "--pd 1:1,2:1; none: aggregated only (default: the scenario's "
                  "disaggregation block, else none)")
      ->delimiter(',');
  cmd->add_option("--prefill-tp", o.prefill_tp,
                  "Prefill instances' tensor-parallel sizes (default: those of --tp)")
      ->delimiter(',');
  cmd->add_option("--decode-tp", o.decode_tp,
                  "Decode instances' tensor-parallel sizes (default: those of --tp)")
      ->delimiter(',');
  cmd->add_option("--prefill-gpus", o.prefill_gpus,
                  "Prefill instances' GPUs, each paired with every decode GPU (default: each "
                  "group's roles share one GPU of --gpus)")
      ->delimiter(',');
  cmd->add_option("--decode-gpus", o.decode_gpus,
                  "Decode instances' GPUs, each paired with every prefill GPU (default: as "
                  "--prefill-gpus)")
      ->delimiter(',');
  cmd->add_flag("--no-aggregated", o.no_aggregated, "Search only the disaggregated groups of --pd");
  cmd->add_option("--max-gpus", o.max_gpus, "Most GPUs the whole deployment may use");
  cmd->add_option("--max-budget-per-hour", o.max_budget_per_hour,
                  "Most dollars per hour the whole deployment may cost");
  cmd->add_option("--fix", o.fixed,
                  "Fix a scenario key for every candidate, e.g. --fix engine.max_model_len=8192");
  cmd->add_option("--top", o.top, "Candidates verified with a full-cluster simulation (3)");
  cmd->add_option("--rows", o.rows, "Rows of the printed table (10)");
  cmd->add_option("--requests", o.requests, "Requests per single-replica simulation (2000)");
  cmd->add_option("--threads", o.threads, "Worker threads (default: all cores)");
  cmd->add_flag("--pareto", o.pareto,
                "Print the frontier of output tokens/s per GPU against tokens/s per user (CSV, "
                "or JSON with --json)");
  cmd->add_flag("--search-all", o.search_all,
                "Search every candidate, also those whose cost bound rules them out of the top "
                "K (implied by --pareto)");
  cmd->add_flag("--json", o.json, "Print JSON");
  cmd->add_option("--out", o.out_dir, "Write plan.csv, plan.json and pareto.csv here");
  return cmd;
}

int run_plan_command(const PlanCommandOptions& o) {
  return run_with_process_work_share([&o](WorkShare& share) { return run_plan(o, share); });
}

}  // namespace servesim
