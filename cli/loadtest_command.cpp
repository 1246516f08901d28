#include "cli/loadtest_command.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/build_info.h"
#include "models/config_error.h"
#include "models/json_file.h"
#include "serve/loadtest/load_generator.h"
#include "serve/loadtest/loadtest_report.h"
#include "sim/core/csv_line.h"
#include "sim/metrics/atomic_file.h"
#include "sim/metrics/diagnosis.h"
#include "sim/metrics/result_writer.h"
#include "sim/metrics/step_table.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

std::atomic<bool> g_interrupted{false};

// The first Ctrl-C asks the run to stop and write what it has; a second one kills it.
extern "C" void on_sigint(int) {
  g_interrupted.store(true);
  std::signal(SIGINT, SIG_DFL);
}

// Writes the result files as the run goes and prints the progress line.
class CliLoadtestObserver final : public LoadtestObserver {
 public:
  CliLoadtestObserver(const std::string& out_dir, bool progress) : progress_(progress) {
    if (out_dir.empty()) return;
    writer_ = std::make_unique<ResultWriter>(out_dir);
    errors_.open(std::filesystem::path(out_dir) / "errors.csv");
    server_.open(std::filesystem::path(out_dir) / "server_metrics.csv");
    if (!errors_ || !server_) throw ConfigError("--out: cannot write into '" + out_dir + "'");
    errors_ << "id,step_index,arrival_s,http_status,cause,detail\n";
    server_ << "time_s,name,labels,value\n";
  }

  bool should_stop() override { return g_interrupted.load(std::memory_order_relaxed); }
  void on_request_done(const RequestRecord& r) override {
    if (writer_) writer_->on_request_done(r);
  }
  void on_sample(const TimeSample& s) override {
    if (writer_) writer_->on_sample(s);
  }
  void on_call(const CallResult& c) override {
    if (!writer_ || c.ok()) return;
    errors_ << c.spec.id << ',' << c.spec.step_index << ',' << format_number(c.spec.arrival_s)
            << ',' << c.http_status << ',' << to_string(c.cause) << ',' << csv_escape(c.detail)
            << '\n';
  }
  void on_server_metrics(double time_s, const std::vector<PromSample>& samples) override {
    if (!writer_) return;
    const std::string t = format_number(time_s);
    for (const PromSample& s : samples) {
      server_ << t << ',' << csv_escape(s.name) << ',' << csv_escape(s.labels) << ','
              << format_number(s.value) << '\n';
    }
  }
  void on_status(const LiveStatus& s) override {
    if (!progress_) return;
    std::fprintf(stderr, "[%5.0f s]", s.elapsed_s);
    if (s.step >= 0)
      std::fprintf(stderr, " step %d/%d (%d clients)", s.step + 1, s.steps, s.clients);
    else
      std::fprintf(stderr, " %d clients", s.clients);
    std::fprintf(stderr, "  %llu done, %llu errors, %zu in flight",
                 static_cast<unsigned long long>(s.done), static_cast<unsigned long long>(s.errors),
                 s.in_flight);
    if (!std::isnan(s.p50_ttft_s)) std::fprintf(stderr, "  p50 TTFT %.1f ms", s.p50_ttft_s * 1e3);
    std::fprintf(stderr, "\n");
  }

 private:
  bool progress_;
  std::unique_ptr<ResultWriter> writer_;  // with --out only
  std::ofstream errors_;
  std::ofstream server_;
};

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

LoadtestOptions generator_options(const LoadtestCommandOptions& o) {
  LoadtestOptions g;
  g.url = EndpointUrl::parse(o.url);
  g.api = parse_api_kind(o.endpoint);
  g.model = o.model;
  g.max_connections = o.max_connections;
  g.timeout_s = o.timeout_s;
  g.max_requests = o.max_requests;
  g.max_duration_s = o.max_duration_s;
  g.scrape_interval_s = o.scrape_interval_s;
  return g;
}

void print_report(const Scenario& scenario, const std::string& url, const LoadtestResult& r,
                  const Knee& knee, const std::vector<Finding>& why) {
  std::printf("%s: %s at %s (model %s), %llu requests sent, at most %zu connections\n",
              scenario.name.c_str(), r.stop_reason.c_str(), url.c_str(), r.model.c_str(),
              static_cast<unsigned long long>(r.sent), r.max_connections);
  print_summary(stdout, r.summary, "wall clock");
  print_diagnosis(stdout, why);
  const SimulationConfig& c = scenario.config;
  if (!r.by_step.empty()) {
    print_step_table(stdout, r.by_step,
                     {c.workload.steps, c.workload.step_duration_s, c.step_warmup_s});
  }
  print_loadtest_notes(stdout, r, knee, c.workload.steps);
}

}  // namespace

CLI::App* add_loadtest_command(CLI::App& app, LoadtestCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "loadtest", "Measure an OpenAI-compatible endpoint under a scenario's workload (HTTP)");
  cmd->add_option("url", o.url, "The server, e.g. http://127.0.0.1:8000 (http only)")->required();
  cmd->add_option("--scenario", o.scenario,
                  "Scenario file whose workload to play, e.g. configs/scenarios/loadtest-tiny.json")
      ->required();
  cmd->add_option("--set", o.overrides,
                  "Override a scenario key, e.g. --set workload.seed=3 (repeatable)");
  cmd->add_option("--seed", o.seed, "Seed for every random draw (overrides the scenario's)");
  cmd->add_option("--endpoint", o.endpoint, "/v1/completions (token ids) or /v1/chat/completions")
      ->capture_default_str();
  cmd->add_option("--model", o.model,
                  "The request's model name (default: GET /v1/models' first id)");
  cmd->add_option("--out", o.out_dir,
                  "Write requests.csv, timeseries.csv, summary.json, errors.csv and "
                  "server_metrics.csv into this directory");
  cmd->add_option("--max-connections", o.max_connections,
                  "Connections open at once (default: the workload's clients, else 256)");
  cmd->add_option("--timeout-s", o.timeout_s, "Seconds a request may take, from when it was due")
      ->capture_default_str();
  cmd->add_option("--max-requests", o.max_requests,
                  "Issue at most this many requests (default: the workload's)");
  cmd->add_option(
      "--max-duration-s", o.max_duration_s,
      "Stop after this many seconds (default: the workload's end + --timeout-s, else 3600)");
  cmd->add_option(
      "--warmup-s", o.warmup_s,
      "Leave requests due in the first seconds out (default: the scenario's metrics.warmup_s)");
  cmd->add_option("--max-error-rate", o.max_error_rate,
                  "Error rate above which a step counts as broken, for the knee")
      ->capture_default_str();
  cmd->add_option("--scrape-interval-s", o.scrape_interval_s,
                  "Seconds between GET /metrics scrapes; 0: none")
      ->capture_default_str();
  cmd->add_flag("--quiet", o.quiet, "No progress lines on stderr");
  cmd->add_flag("--json", o.json, "Print summary.json instead of the table");
  return cmd;
}

int run_loadtest_command(const LoadtestCommandOptions& o) {
  std::vector<std::string> overrides = o.overrides;
  if (o.seed) overrides.push_back("seed=" + std::to_string(*o.seed));
  if (o.warmup_s) overrides.push_back("metrics.warmup_s=" + format_number(*o.warmup_s));
  if (!(o.max_error_rate >= 0 && o.max_error_rate <= 1)) {
    throw ConfigError("--max-error-rate must be in [0, 1]");
  }
  Catalog catalog;
  const Scenario scenario = load_scenario(o.scenario, overrides, catalog);
  const nlohmann::json& scenario_json = scenario.json;
  LoadtestSetup setup{
      o.endpoint,  host_name(),     utc_now_iso8601(), servesim_version(), servesim_git_revision(),
      o.timeout_s, o.max_error_rate};

  LoadGenerator generator(generator_options(o), scenario.config);
  CliLoadtestObserver observer(o.out_dir, !o.quiet);
  g_interrupted = false;
  std::signal(SIGINT, on_sigint);
  const LoadtestResult r = generator.run(observer);
  std::signal(SIGINT, SIG_DFL);

  const std::vector<int>& clients = scenario.config.workload.steps;
  const Knee knee = find_knee(r.by_step, scenario.config.metrics.slo, o.max_error_rate);
  nlohmann::json j;
  j["scenario"] = scenario.name;
  j["model"] = r.model;
  j["scenario_model"] = scenario.config.model.name;
  j["seed"] = scenario.config.seed;
  j["partial"] = r.partial;
  j["stopped"] = r.partial;
  j["summary"] = summary_json(r.summary);
  // The client sees no replicas or stations: the diagnosis reads the summary alone.
  const std::vector<Finding> why =
      diagnose({r.summary, {}, {}, 0, false, scenario.config.workload.distinct_prompts});
  j["diagnosis"] = diagnosis_json(why);
  if (const nlohmann::json steps = steps_json(r.by_step, clients); !steps.empty())
    j["steps"] = steps;
  j["loadtest"] = loadtest_json(r, setup, generator.options().url, knee, clients);
  j["setup"] = loadtest_setup_json(r, setup, generator.options().url, scenario.name, scenario_json,
                                   scenario.config.seed);
  j["scenario_config"] = scenario_json;
  const std::string text = json_text(j);
  if (!o.out_dir.empty()) {
    AtomicFile summary((std::filesystem::path(o.out_dir) / "summary.json").string());
    summary.stream() << text << "\n";
    summary.commit();
  }
  if (o.json)
    std::cout << text << "\n";
  else
    print_report(scenario, o.url, r, knee, why);
  return r.stop_reason == "interrupted" ? 130 : 0;
}

}  // namespace servesim
