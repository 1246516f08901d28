#include "cli/simulate_command.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/build_info.h"
#include "calibration/measured/measured_run_reader.h"
#include "cli/interrupt_flag.h"
#include "models/config_error.h"
#include "models/json_file.h"
#include "models/speculative_config.h"
#include "sim/agent/session_report.h"
#include "sim/metrics/diagnosis.h"
#include "sim/metrics/knee.h"
#include "sim/metrics/result_writer.h"
#include "sim/metrics/step_table.h"
#include "sim/run/run_setup.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"
#include "sim/service/station.h"

namespace servesim {
namespace {

// Draws the progress bar, with --out hands records and samples to the ResultWriter, and stops
// the run on Ctrl-C.
class CliObserver final : public Observer {
 public:
  CliObserver(const std::string& out_dir, bool progress, std::vector<std::string> tenants,
              bool pool_column)
      : progress_(progress) {
    if (!out_dir.empty()) {
      writer_ = std::make_unique<ResultWriter>(out_dir, std::move(tenants), pool_column);
    }
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
    if (writer_) writer_->on_request_done(r);
  }

  void on_sample(const TimeSample& s) override {
    if (writer_) writer_->on_sample(s);
  }

  void on_session_done(const SessionRecord& r) override {
    if (writer_) writer_->on_session_done(r);
  }

  bool should_stop() override { return interrupt_.raised(); }
  bool interrupted() const { return interrupt_.raised(); }

  void finish() {
    if (progress_) std::fprintf(stderr, "\n");
    if (writer_) writer_->commit();
  }

 private:
  bool progress_;
  std::unique_ptr<ResultWriter> writer_;  // with --out only
  InterruptFlag interrupt_;
};

// The measured run's requests in place of the scenario's workload (its seed kept for the
// open-loop gaps); the setup's workload then names the run.
nlohmann::json replay_into(SimulationConfig& config, nlohmann::json& scenario_json,
                           const std::string& path) {
  const MeasuredRun run = read_measured_run(path);
  WorkloadSpec replay;
  replay.seed = config.workload.seed;
  replay.replay = std::make_shared<const ReplaySpec>(replay_spec_from(run));
  const ReplaySpec& spec = *replay.replay;
  nlohmann::json j = {{"source", run.source},
                      {"format", run.format},
                      {"requests", spec.requests.size()},
                      {"arrivals", spec.recorded_arrivals ? "recorded" : "by the recorded load"}};
  if (spec.max_concurrency) j["max_concurrency"] = *spec.max_concurrency;
  config.workload = std::move(replay);
  scenario_json["workload"] = {{"replay", j}};
  return j;
}

// One side of a disaggregated deployment: its engines' sizes and how busy they were (each
// data-parallel rank of an instance is an engine with its own KV cache).
void print_role(const MemoryPlan& plan, const SchedulerConfig& sc, const DisaggregatedRole& spec,
                ReplicaRole role, const SimulationResult& result) {
  int instances = 0;
  double busy_s = 0;
  for (const ReplicaSummary& r : result.replicas) {
    if (r.role != role) continue;
    ++instances;
    busy_s += r.busy_s;
  }
  const double busy = result.simulated_s > 0 ? busy_s / (instances * result.simulated_s) : 0;
  std::printf(
      "  %s: KV cache %lld tokens per %s; max_num_seqs %d, max_num_batched_tokens %d, "
      "max_model_len %d; busy %.0f%%\n",
      role == ReplicaRole::kPrefill ? "prefill" : "decode",
      static_cast<long long>(plan.kv_cache_tokens),
      spec.parallel.dp > 1 ? "data-parallel rank" : "instance", sc.max_num_seqs,
      sc.max_num_batched_tokens, sc.max_model_len, 100 * busy);
}

// One deployment of a run with several: what it is, its engines' sizes and how busy they were
// (JSON, and the lines the text output prints from it). A disaggregated deployment is described
// by its decode instances, its prefill instances under "prefill".
nlohmann::json deployment_json(const BuiltDeployment& b, const DeploymentResult& d,
                               const SimulationResult& result, uint32_t k) {
  double busy_s = 0;
  int replicas = 0;
  for (const ReplicaSummary& r : result.replicas) {
    if (r.deployment != k) continue;
    busy_s += r.busy_s;
    ++replicas;
  }
  const DisaggregationSpec& disaggregation = b.spec.disaggregation;
  const bool split = disaggregation.enabled;
  const HardwareSpec& gpu = split ? disaggregation.decode.gpu : b.spec.gpu;
  const ParallelConfig& parallel = split ? disaggregation.decode.parallel : b.spec.parallel;
  const SchedulerConfig& sc = b.serving.scheduler;
  const double replica_s = replicas * result.simulated_s;
  nlohmann::json j = {{"name", d.name},
                      {"model", b.spec.model.name},
                      {"gpu", gpu.name},
                      {"tensor_parallel_size", parallel.tp},
                      {"pipeline_parallel_size", parallel.pp},
                      {"data_parallel_size", parallel.dp},
                      {"gpus", b.metrics.num_gpus},
                      {"kv_cache_tokens", b.serving.plan.kv_cache_tokens},
                      {"max_num_seqs", sc.max_num_seqs},
                      {"max_num_batched_tokens", sc.max_num_batched_tokens},
                      {"max_model_len", sc.max_model_len},
                      {"busy", replica_s > 0 ? busy_s / replica_s : 0.0},
                      {"summary", summary_json(d.summary)}};
  if (split) {
    const DisaggregatedRole& p = disaggregation.prefill;
    j["decode_instances"] = disaggregation.decode.instances;
    j["prefill"] = {{"instances", p.instances},
                    {"gpu", p.gpu.name},
                    {"tensor_parallel_size", p.parallel.tp},
                    {"pipeline_parallel_size", p.parallel.pp},
                    {"data_parallel_size", p.parallel.dp},
                    {"kv_cache_tokens", b.prefill->plan.kv_cache_tokens},
                    {"max_num_batched_tokens", b.prefill->scheduler.max_num_batched_tokens}};
  }
  return j;
}

nlohmann::json deployments_json(const Simulation& simulation, const SimulationResult& result) {
  nlohmann::json list = nlohmann::json::array();
  for (uint32_t k = 0; k < result.deployments.size(); ++k) {
    list.push_back(deployment_json(simulation.deployments()[k], result.deployments[k], result, k));
  }
  return list;
}

void print_deployments(const nlohmann::json& deployments) {
  for (const nlohmann::json& d : deployments) {
    const nlohmann::json& s = d["summary"];
    std::printf(
        "  deployment %s: %s on %d x %s (TP %d, PP %d, DP %d); KV cache %lld tokens per "
        "replica; max_num_seqs %d, max_model_len %d; busy %.0f%%\n",
        d["name"].get<std::string>().c_str(), d["model"].get<std::string>().c_str(),
        d["gpus"].get<int>(), d["gpu"].get<std::string>().c_str(),
        d["tensor_parallel_size"].get<int>(), d["pipeline_parallel_size"].get<int>(),
        d["data_parallel_size"].get<int>(), d["kv_cache_tokens"].get<long long>(),
        d["max_num_seqs"].get<int>(), d["max_model_len"].get<int>(), 100 * d["busy"].get<double>());
    if (d.contains("prefill")) {
      const nlohmann::json& p = d["prefill"];
      std::printf(
          "    disaggregated: %d prefill instances on %s (TP %d, PP %d, DP %d; KV cache %lld "
          "tokens, max_num_batched_tokens %d) and %d decode instances as above\n",
          p["instances"].get<int>(), p["gpu"].get<std::string>().c_str(),
          p["tensor_parallel_size"].get<int>(), p["pipeline_parallel_size"].get<int>(),
          p["data_parallel_size"].get<int>(), p["kv_cache_tokens"].get<long long>(),
          p["max_num_batched_tokens"].get<int>(), d["decode_instances"].get<int>());
    }
    auto p50 = [&s](const char* metric) {
      return s.contains(metric) && s[metric].contains("p50_ms") && s[metric]["p50_ms"].is_number()
                 ? s[metric]["p50_ms"].get<double>()
                 : 0.0;
    };
    std::printf(
        "    calls %llu (%llu completed); TTFT p50 %.1f ms, TPOT p50 %.2f ms, E2E p50 %.1f ms\n",
        s["requests"].get<unsigned long long>(), s["completed"].get<unsigned long long>(),
        p50("ttft"), p50("tpot"), p50("e2e"));
  }
}

// KV offload: the host tier's size and what it did, over the own deployment's replicas of
// `role` (a disaggregated deployment's roles each have their own tier, or none).
void print_kv_offload(const MemoryPlan& plan, ReplicaRole role, const SimulationResult& result) {
  HostKvSummary all;
  size_t replicas = 0;
  for (const ReplicaSummary& r : result.replicas) {
    if (r.role != role || r.deployment != 0) continue;
    ++replicas;
    all.hit_tokens += r.host_kv.hit_tokens;
    all.queried_tokens += r.host_kv.queried_tokens;
    all.stored_blocks += r.host_kv.stored_blocks;
    all.evicted_blocks += r.host_kv.evicted_blocks;
    all.load_busy_s += r.host_kv.load_busy_s;
    all.store_busy_s += r.host_kv.store_busy_s;
    all.bandwidth_Bps = r.host_kv.bandwidth_Bps;
  }
  const double link_s = result.simulated_s * static_cast<double>(replicas);
  const char* who = role == ReplicaRole::kPrefill  ? "prefill "
                    : role == ReplicaRole::kDecode ? "decode "
                                                   : "";
  std::printf(
      "  %sKV offload: host tier %.1f GiB per GPU, %lld tokens per replica, PCIe %.0f GB/s; "
      "%.1f%% of the tokens looked up loaded from it, %lld blocks stored, %lld evicted; link busy "
      "%.1f%% loading, %.1f%% storing\n",
      who, static_cast<double>(plan.host_kv_bytes_per_gpu) / (1024.0 * 1024.0 * 1024.0),
      static_cast<long long>(plan.num_host_kv_blocks * plan.engine.block_size),
      all.bandwidth_Bps / 1e9, 100.0 * all.hit_rate(), static_cast<long long>(all.stored_blocks),
      static_cast<long long>(all.evicted_blocks), link_s > 0 ? 100 * all.load_busy_s / link_s : 0,
      link_s > 0 ? 100 * all.store_busy_s / link_s : 0);
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
                  "Write requests.csv, timeseries.csv, summary.json (and sessions.csv for agent "
                  "workloads) into this directory");
  cmd->add_flag("--json", options.json, "Print the summary as JSON");
  cmd->add_option("--max-error-rate", options.max_error_rate,
                  "Error rate above which a step of a stepped workload counts as broken, for the "
                  "knee")
      ->capture_default_str();
  cmd->add_option(
      "--replay", options.replay,
      "Replay a measured run's requests (vllm bench serve --save-result --save-detailed "
      "JSON, loadtest --out folder, or timing trace .jsonl/.csv) on the scenario's "
      "deployment instead of its workload");
  cmd->add_option("--speculative-config", options.speculative_config,
                  "Speculative decoding as vLLM takes it plus an acceptance key, e.g. "
                  "'{\"method\":\"ngram\",\"num_speculative_tokens\":4,\"acceptance_rate\":0.6}' "
                  "(sets engine.speculative)");
  return cmd;
}

int run_simulate(const SimulateOptions& options) {
  std::vector<std::string> overrides = options.overrides;
  if (options.seed) overrides.push_back("seed=" + std::to_string(*options.seed));
  if (!options.speculative_config.empty()) {
    // Checked here so a malformed flag is named as the flag, then applied as the scenario key.
    SpeculativeConfig::from_text(options.speculative_config, "--speculative-config", nullptr);
    overrides.push_back("engine.speculative=" + options.speculative_config);
  }
  if (!(options.max_error_rate >= 0 && options.max_error_rate <= 1)) {
    throw ConfigError("--max-error-rate must be in [0, 1]");
  }
  Catalog catalog;
  Scenario scenario = load_scenario(options.scenario, overrides, catalog);
  RunSetup setup{scenario.name,
                 scenario.json,
                 std::filesystem::path(options.scenario).parent_path().string(),
                 servesim_version(),
                 servesim_git_revision(),
                 options.max_error_rate};
  nlohmann::json replay;
  if (!options.replay.empty()) {
    replay = replay_into(scenario.config, setup.scenario_json, options.replay);
  }
  Simulation simulation(scenario.config);
  std::vector<std::string> tenants;
  for (const TenantSpec& t : scenario.config.service.tenants) tenants.push_back(t.name);
  CliObserver observer(options.out_dir, isatty(STDERR_FILENO) == 1, std::move(tenants),
                       !scenario.config.service.pools.empty());
  const SimulationResult result = simulation.run(observer);
  observer.finish();

  const SimulationConfig& c = simulation.config();
  const MemoryPlan& plan = simulation.memory_plan();
  const SchedulerConfig& sc = simulation.scheduler_config();
  nlohmann::json j;
  j["scenario"] = scenario.name;
  j["setup"] = setup_json(simulation, setup);
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
  if (c.profile) {
    j["cost_model"] = {{"type", "calibrated"},
                       {"profiled_model", c.profile->model},
                       {"device", c.profile->device},
                       {"backend", c.profile->backend},
                       {"extrapolated_steps", result.extrapolated_steps}};
  } else {
    j["cost_model"] = {{"type", "roofline"}};
  }
  if (!replay.is_null()) j["replay"] = replay;
  j["summary"] = summary_json(result.summary);
  const Knee knee = find_knee(result.by_step, c.metrics.slo, options.max_error_rate);
  if (const nlohmann::json steps = steps_json(result.by_step, c.workload.steps); !steps.empty()) {
    j["steps"] = steps;
    j["knee"] = knee_json(knee, c.workload.steps);
  }
  nlohmann::json replicas = nlohmann::json::array();
  for (const ReplicaSummary& r : result.replicas) {
    replicas.push_back(replica_json(r));
    if (r.deployment > 0) replicas.back()["deployment"] = c.deployments[r.deployment - 1].name;
  }
  j["replicas"] = replicas;
  if (!result.stations.empty()) {
    nlohmann::json stations = nlohmann::json::array();
    for (const StationStats& s : result.stations) stations.push_back(station_json(s));
    j["service"] = {{"stations", stations}};
  }
  if (!result.tenants.empty()) j["tenants"] = tenants_json(result.tenants);
  const std::vector<Finding> why =
      diagnose({result.summary, result.replicas, result.stations, result.simulated_s,
                simulation.config().queue_order == QueueOrder::kPriority,
                simulation.config().workload.distinct_prompts},
               result.tenants);
  j["diagnosis"] = diagnosis_json(why);
  if (result.sessions) j["sessions"] = session_summary_json(*result.sessions);
  if (!result.deployments.empty()) j["deployments"] = deployments_json(simulation, result);

  if (!options.out_dir.empty()) {
    // Last and atomic: a summary.json under its name means the folder is whole ("stopped"
    // says whether the run was).
    write_file_atomically((std::filesystem::path(options.out_dir) / "summary.json").string(),
                          json_text(j) + "\n");
  }
  // A run cut short by Ctrl-C printed and wrote what finished ("stopped": true); 130 is the
  // shell's status for an interrupted command.
  const int status = observer.interrupted() ? 130 : 0;
  if (observer.interrupted()) {
    std::fprintf(stderr, "interrupted: the results are those of the requests that finished\n");
  }
  if (options.json) {
    std::cout << json_text(j) << "\n";
    return status;
  }
  std::printf("%s\n", setup_line(simulation, setup).c_str());
  if (c.disaggregation.enabled) {
    print_role(simulation.prefill_memory_plan(), simulation.prefill_scheduler_config(),
               c.disaggregation.prefill, ReplicaRole::kPrefill, result);
    print_role(plan, sc, c.disaggregation.decode, ReplicaRole::kDecode, result);
  } else {
    std::printf(
        "  KV cache %lld tokens per replica; max_num_seqs %d, max_num_batched_tokens %d, "
        "max_model_len %d\n",
        static_cast<long long>(plan.kv_cache_tokens), sc.max_num_seqs, sc.max_num_batched_tokens,
        sc.max_model_len);
  }
  if (c.disaggregation.enabled) {
    const MemoryPlan& prefill = simulation.prefill_memory_plan();
    if (prefill.num_host_kv_blocks > 0) print_kv_offload(prefill, ReplicaRole::kPrefill, result);
    if (plan.num_host_kv_blocks > 0) print_kv_offload(plan, ReplicaRole::kDecode, result);
  } else if (plan.num_host_kv_blocks > 0) {
    print_kv_offload(plan, ReplicaRole::kAggregated, result);
  }
  if (j.contains("deployments")) print_deployments(j["deployments"]);
  if (c.profile) {
    std::printf("  cost model: calibrated profile of %s on %s (%s)%s\n", c.profile->model.c_str(),
                c.profile->device.c_str(), c.profile->backend.c_str(),
                c.profile->model != c.model.name ? ", transferred" : "");
  }
  print_summary(stdout, result.summary, "simulated");
  print_stations(stdout, result.stations);
  print_tenants(stdout, result.tenants);
  if (result.sessions) print_session_summary(stdout, *result.sessions);
  print_diagnosis(stdout, why);
  if (!result.by_step.empty()) {
    print_step_table(stdout, result.by_step,
                     {c.workload.steps, c.workload.step_duration_s, c.step_warmup_s});
    print_knee(stdout, knee, c.workload.steps);
  }
  std::printf("  fingerprint %s (%llu events)%s\n", result.fingerprint.c_str(),
              static_cast<unsigned long long>(result.events),
              result.stopped ? " — stopped early" : "");
  if (result.extrapolated_steps > 0) {
    std::printf(
        "  note: %lld steps lay beyond the calibrated profile's range and were "
        "extrapolated (cost_model.extrapolate)\n",
        static_cast<long long>(result.extrapolated_steps));
  }
  return status;
}

}  // namespace servesim
