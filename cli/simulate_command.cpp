#include "cli/simulate_command.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "models/config_error.h"
#include "sim/scenario.h"

namespace servesim {
namespace {

// Writes per-request and time-series CSVs while the run goes, and draws the progress bar.
class CliObserver final : public Observer {
 public:
  CliObserver(const std::string& out_dir, bool progress) : progress_(progress) {
    if (out_dir.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) throw ConfigError("--out: cannot create directory '" + out_dir + "': " + ec.message());
    requests_.open(std::filesystem::path(out_dir) / "requests.csv");
    samples_.open(std::filesystem::path(out_dir) / "timeseries.csv");
    if (!requests_ || !samples_) throw ConfigError("--out: cannot write into '" + out_dir + "'");
    requests_ << "id,replica,status,arrival_s,first_scheduled_s,first_token_s,finish_s,"
                 "prompt_tokens,output_tokens,cached_prompt_tokens,preemptions,queueing_s,"
                 "ttft_s,tpot_s,e2e_s,step_index\n";
    samples_ << "time_s,replica,running,waiting,kv_usage,tokens_in_step,preemptions_total\n";
  }

  void on_progress(double sim_time_s, uint64_t done, uint64_t total) override {
    if (!progress_) return;
    if (total > 0) {
      const int width = 40;
      const double frac = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
      const int filled = static_cast<int>(frac * width);
      std::fprintf(stderr, "\r[%.*s%*s] %3.0f%%  %llu/%llu requests  %.0f s simulated", filled,
                   "########################################", width - filled, "", frac * 100,
                   static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                   sim_time_s);
    } else {
      std::fprintf(stderr, "\r%llu requests  %.0f s simulated",
                   static_cast<unsigned long long>(done), sim_time_s);
    }
    std::fflush(stderr);
  }

  void on_request_done(const RequestRecord& r) override {
    if (!requests_.is_open()) return;
    auto num = [](double v) { return std::isnan(v) ? std::string() : std::to_string(v); };
    requests_ << r.id << ',' << r.replica << ',' << to_string(r.status) << ',' << num(r.arrival_s)
              << ',' << num(r.first_scheduled_s) << ',' << num(r.first_token_s) << ','
              << num(r.finish_s) << ',' << r.prompt_tokens << ',' << r.output_tokens << ','
              << r.cached_prompt_tokens << ',' << r.preemptions << ',' << num(r.queueing_s()) << ','
              << num(r.ttft_s()) << ',' << num(r.tpot_s()) << ',' << num(r.e2e_s()) << ','
              << r.step_index << '\n';
  }

  void on_sample(const TimeSample& s) override {
    if (!samples_.is_open()) return;
    samples_ << s.time_s << ',' << s.replica << ',' << s.running << ',' << s.waiting << ','
             << s.kv_usage << ',' << s.tokens_in_step << ',' << s.preemptions_total << '\n';
  }

  void finish() {
    if (progress_) std::fprintf(stderr, "\n");
  }

 private:
  bool progress_;
  std::ofstream requests_;
  std::ofstream samples_;
};

nlohmann::json stats_json(const LatencyStats& s) {
  auto v = [](double x) { return std::isnan(x) ? nlohmann::json() : nlohmann::json(x * 1e3); };
  return {{"count", s.count},     {"mean_ms", v(s.mean_s)}, {"p50_ms", v(s.p50_s)},
          {"p90_ms", v(s.p90_s)}, {"p95_ms", v(s.p95_s)},   {"p99_ms", v(s.p99_s)},
          {"max_ms", v(s.max_s)}};
}

nlohmann::json number(double x) {
  return std::isnan(x) ? nlohmann::json() : nlohmann::json(x);
}

nlohmann::json summary_json(const MetricsSummary& m) {
  return {{"requests", m.requests},
          {"completed", m.completed},
          {"rejected", m.rejected},
          {"timed_out", m.timed_out},
          {"excluded_warmup", m.excluded_warmup},
          {"input_tokens", m.input_tokens},
          {"output_tokens", m.output_tokens},
          {"preemptions", m.preemptions},
          {"duration_s", number(m.duration_s)},
          {"request_throughput_per_s", number(m.request_throughput)},
          {"input_tokens_per_s", number(m.input_throughput)},
          {"output_tokens_per_s", number(m.output_throughput)},
          {"total_tokens_per_s", number(m.total_token_throughput)},
          {"output_tokens_per_s_per_gpu", number(m.output_throughput_per_gpu)},
          {"goodput_requests_per_s", number(m.goodput)},
          {"slo_attainment", number(m.slo_attainment)},
          {"error_rate", number(m.error_rate)},
          {"prefix_cache_hit_rate", number(m.prefix_cache_hit_rate)},
          {"cost_per_million_output_tokens_usd", number(m.cost_per_million_output_tokens)},
          {"cost_per_million_tokens_usd", number(m.cost_per_million_tokens)},
          {"ttft", stats_json(m.ttft)},
          {"tpot", stats_json(m.tpot)},
          {"itl", stats_json(m.itl)},
          {"e2e", stats_json(m.e2e)},
          {"queueing", stats_json(m.queueing)}};
}

void print_latency_row(const char* name, const LatencyStats& s) {
  if (s.count == 0) {
    std::printf("  %-14s %9s\n", name, "-");
    return;
  }
  std::printf("  %-14s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", name, s.mean_s * 1e3, s.p50_s * 1e3,
              s.p90_s * 1e3, s.p95_s * 1e3, s.p99_s * 1e3, s.max_s * 1e3);
}

void print_summary(const MetricsSummary& m) {
  std::printf("  requests: %llu completed, %llu rejected, %llu timed out",
              static_cast<unsigned long long>(m.completed),
              static_cast<unsigned long long>(m.rejected),
              static_cast<unsigned long long>(m.timed_out));
  if (m.excluded_warmup > 0) {
    std::printf(" (%llu in warm-up left out)", static_cast<unsigned long long>(m.excluded_warmup));
  }
  std::printf("; %.1f s simulated\n", m.duration_s);
  std::printf(
      "  throughput: %.2f req/s, %.1f input tok/s, %.1f output tok/s (%.1f output tok/s per GPU)\n",
      m.request_throughput, m.input_throughput, m.output_throughput, m.output_throughput_per_gpu);
  std::printf("  %-14s %9s %9s %9s %9s %9s %9s\n", "latency (ms)", "mean", "p50", "p90", "p95",
              "p99", "max");
  print_latency_row("TTFT", m.ttft);
  print_latency_row("TPOT", m.tpot);
  print_latency_row("ITL", m.itl);
  print_latency_row("E2E", m.e2e);
  print_latency_row("queueing", m.queueing);
  if (!std::isnan(m.goodput)) {
    std::printf("  goodput: %.2f req/s meeting the SLOs (%.1f%% of requests)\n", m.goodput,
                m.slo_attainment * 100);
  }
  std::printf("  prefix cache hit rate %.1f%%, preemptions %llu, error rate %.2f%%",
              std::isnan(m.prefix_cache_hit_rate) ? 0.0 : m.prefix_cache_hit_rate * 100,
              static_cast<unsigned long long>(m.preemptions),
              std::isnan(m.error_rate) ? 0.0 : m.error_rate * 100);
  if (!std::isnan(m.cost_per_million_output_tokens)) {
    std::printf(", $%.3f per 1M output tokens", m.cost_per_million_output_tokens);
  }
  std::printf("\n");
}

}  // namespace

CLI::App* add_simulate_command(CLI::App& app, SimulateOptions& options) {
  CLI::App* cmd = app.add_subcommand("simulate", "Simulate a serving scenario (JSON)");
  cmd->add_option("scenario", options.scenario,
                  "Scenario file, e.g. configs/scenarios/quickstart.json")
      ->required();
  cmd->add_option("--set", options.overrides,
                  "Override a scenario key, e.g. --set engine.max_num_seqs=128 (repeatable)");
  cmd->add_option("--seed", options.seed, "Seed for every random draw (overrides the scenario's)");
  cmd->add_option("--out", options.out_dir,
                  "Write requests.csv, timeseries.csv and summary.json into this directory");
  cmd->add_flag("--json", options.json, "Print the summary as JSON");
  return cmd;
}

int run_simulate(const SimulateOptions& options) {
  std::vector<std::string> overrides = options.overrides;
  if (options.seed) overrides.push_back("seed=" + std::to_string(*options.seed));
  Catalog catalog;
  const Scenario scenario = load_scenario(options.scenario, overrides, catalog);
  Simulation simulation(scenario.config);
  CliObserver observer(options.out_dir, isatty(STDERR_FILENO) == 1);
  const SimulationResult result = simulation.run(observer);
  observer.finish();

  const SimulationConfig& c = simulation.config();
  const MemoryPlan& plan = simulation.memory_plan();
  const SchedulerConfig& sc = simulation.scheduler_config();
  nlohmann::json j;
  j["scenario"] = scenario.name;
  j["model"] = c.model.name;
  j["gpu"] = c.gpu.name;
  j["tensor_parallel_size"] = c.parallel.tp;
  j["pipeline_parallel_size"] = c.parallel.pp;
  j["data_parallel_size"] = c.parallel.dp;
  j["batching"] = std::string(scheduling_policy_name(c.batching));
  j["max_num_seqs"] = sc.max_num_seqs;
  j["max_num_batched_tokens"] = sc.max_num_batched_tokens;
  j["max_model_len"] = sc.max_model_len;
  j["kv_cache_tokens"] = plan.kv_cache_tokens;
  j["seed"] = c.seed;
  j["fingerprint"] = result.fingerprint;
  j["events"] = result.events;
  j["simulated_s"] = result.simulated_s;
  j["stopped"] = result.stopped;
  j["summary"] = summary_json(result.summary);
  nlohmann::json steps = nlohmann::json::array();
  for (size_t i = 0; i < result.by_step.size(); ++i) {
    nlohmann::json s = summary_json(result.by_step[i]);
    s["clients"] = c.workload.steps[i];
    steps.push_back(s);
  }
  if (!steps.empty()) j["steps"] = steps;
  nlohmann::json replicas = nlohmann::json::array();
  for (const ReplicaSummary& r : result.replicas) {
    nlohmann::json ops;
    for (size_t op = 0; op < kNumOps; ++op)
      ops[std::string(op_name(static_cast<Op>(op)))] = r.op_totals.op_s[op];
    replicas.push_back({{"steps", r.steps},
                        {"busy_s", r.busy_s},
                        {"preemptions", r.preemptions},
                        {"prefix_cache_hit_rate", r.prefix_cache_hit_rate},
                        {"evicted_blocks", r.evicted_blocks},
                        {"op_seconds", ops}});
  }
  j["replicas"] = replicas;

  if (!options.out_dir.empty()) {
    std::ofstream(std::filesystem::path(options.out_dir) / "summary.json") << j.dump(2) << "\n";
  }
  if (options.json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("%s: %s on %d x %s (TP %d, PP %d, DP %d), %s batching\n", scenario.name.c_str(),
              c.model.name.c_str(), c.parallel.total_gpus(), c.gpu.name.c_str(), c.parallel.tp,
              c.parallel.pp, c.parallel.dp,
              std::string(scheduling_policy_name(c.batching)).c_str());
  std::printf(
      "  KV cache %lld tokens per replica; max_num_seqs %d, max_num_batched_tokens %d, "
      "max_model_len %d\n",
      static_cast<long long>(plan.kv_cache_tokens), sc.max_num_seqs, sc.max_num_batched_tokens,
      sc.max_model_len);
  print_summary(result.summary);
  for (size_t i = 0; i < result.by_step.size(); ++i) {
    std::printf("\n step %zu: %d clients\n", i + 1, c.workload.steps[i]);
    print_summary(result.by_step[i]);
  }
  std::printf("  fingerprint %s (%llu events)%s\n", result.fingerprint.c_str(),
              static_cast<unsigned long long>(result.events),
              result.stopped ? " — stopped early" : "");
  return 0;
}

}  // namespace servesim
