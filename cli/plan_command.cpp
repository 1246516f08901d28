#include "cli/plan_command.h"

#include <filesystem>
#include <fstream>
#include <iostream>

#include "models/config_error.h"
#include "sim/planner.h"

namespace servesim {

CLI::App* add_plan_command(CLI::App& app, PlanCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "plan", "Find the cheapest GPUs, parallelism and flags that meet SLOs at a target load");
  cmd->add_option("scenario", o.scenario,
                  "Scenario file: model, workload shape, engine flags (and SLOs)")
      ->required();
  cmd->add_option("--target-qps", o.target_qps, "Load to serve, requests per second");
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
  if (o.target_qps.has_value() == o.target_concurrency.has_value()) {
    throw ConfigError("plan: give exactly one of --target-qps and --target-concurrency");
  }
  if (o.threads < 0) throw ConfigError("--threads must be >= 1 (or 0 for all cores)");
  if (o.rows < 1) throw ConfigError("--rows must be >= 1");
  PlanOptions p;
  p.scenario_path = o.scenario;
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
  p.max_gpus = o.max_gpus;
  p.max_budget_per_hour = o.max_budget_per_hour;
  p.top_k = o.top;
  p.requests = o.requests;
  p.threads = o.threads;
  // The frontier needs every candidate's operating point, not only the cheapest ones.
  p.search_all = o.search_all || o.pareto;
  Catalog catalog;
  const PlanReport report = plan(p, catalog);

  if (!o.out_dir.empty()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(o.out_dir, ec);
    if (ec) throw ConfigError("--out: cannot create '" + o.out_dir + "': " + ec.message());
    std::ofstream csv(fs::path(o.out_dir) / "plan.csv");
    std::ofstream json(fs::path(o.out_dir) / "plan.json");
    std::ofstream pareto(fs::path(o.out_dir) / "pareto.csv");
    if (!csv || !json || !pareto) throw ConfigError("--out: cannot write into '" + o.out_dir + "'");
    csv << report.to_csv();
    json << report.to_json().dump(2) << "\n";
    pareto << report.pareto_csv();
  }
  if (o.json) {
    nlohmann::json j = report.to_json();
    std::cout << (o.pareto ? j["pareto"] : j).dump(2) << "\n";
  } else if (o.pareto) {
    std::cout << report.pareto_csv();
  } else {
    std::cout << report.to_table(static_cast<size_t>(o.rows));
  }
  // Nothing feasible is an answer, not a usage error: exit 1 so scripts can tell.
  return report.feasible() ? 0 : 1;
}

}  // namespace servesim
