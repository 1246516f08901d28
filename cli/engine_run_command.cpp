#include "cli/engine_run_command.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/build_info.h"
#include "engine/realtime/engine_server.h"
#include "engine/runtime/backend.h"
#include "models/config_error.h"
#include "models/json_file.h"
#include "models/speculative_config.h"
#include "sim/metrics/diagnosis.h"
#include "sim/metrics/knee.h"
#include "sim/metrics/result_writer.h"
#include "sim/metrics/step_table.h"
#include "sim/run/run_setup.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

// With --out, hands records and samples to the ResultWriter; otherwise records nothing.
class RunObserver final : public Observer {
 public:
  explicit RunObserver(const std::string& out_dir) {
    if (!out_dir.empty()) writer_ = std::make_unique<ResultWriter>(out_dir);
  }
  void on_request_done(const RequestRecord& r) override {
    if (writer_) writer_->on_request_done(r);
  }
  void on_sample(const TimeSample& s) override {
    if (writer_) writer_->on_sample(s);
  }
  void commit() {
    if (writer_) writer_->commit();
  }

 private:
  std::unique_ptr<ResultWriter> writer_;
};

}  // namespace

CLI::App* add_engine_run_command(CLI::App& engine, EngineRunOptions& o) {
  CLI::App* run = engine.add_subcommand(
      "run", "Serve a scenario's workload on the engine in real time; report as `simulate` does");
  o.command = run;
  run->add_option("scenario", o.scenario,
                  "Scenario file, e.g. configs/scenarios/engine-cpu-smoke.json")
      ->required();
  run->add_option("--set", o.overrides,
                  "Override a scenario key, e.g. --set workload.num_requests=10 (repeatable)");
  run->add_option("--seed", o.seed,
                  "Seed of the workload and the weights (overrides the scenario's)");
  run->add_option("--backend", o.backend, "cpu or cuda")->capture_default_str();
  run->add_option("--checkpoint", o.checkpoint,
                  "Hugging Face .safetensors file(s); default: seeded random weights");
  run->add_option("--threads", o.threads, "CPU threads")->capture_default_str();
  run->add_option("--num-blocks", o.num_blocks, "KV-cache blocks (block 0 reserved)");
  run->add_option("--kv-cache-mib", o.kv_cache_mib,
                  "KV-cache budget in MiB (default: max_num_seqs x max_model_len, at most 1024)");
  run->add_option("--max-requests", o.max_requests, "Stop admitting after this many requests");
  run->add_flag("--force", o.force, "Run a model above 2 B parameters anyway");
  run->add_option("--out", o.out_dir,
                  "Write requests.csv, timeseries.csv and summary.json into this directory");
  run->add_option("--trace", o.trace_path, "Write the engine's per-step trace (JSON lines)");
  run->add_option("--speculative-config", o.speculative_config,
                  "Speculative decoding as vLLM takes it, e.g. "
                  "'{\"method\":\"ngram\",\"num_speculative_tokens\":4,\"prompt_lookup_max\":4}' "
                  "(ngram only; sets engine.speculative)");
  run->add_flag("--profile", o.profile, "Per-op times in the trace and the summary");
  run->add_flag("--json", o.json, "Print the summary as JSON");
  run->add_option("--max-error-rate", o.max_error_rate,
                  "Error rate above which a step of a stepped workload counts as broken, for the "
                  "knee")
      ->capture_default_str();
  return run;
}

namespace {

RunSetup run_setup(const EngineRunOptions& o, const Scenario& scenario) {
  return RunSetup{scenario.name,
                  scenario.json,
                  std::filesystem::path(o.scenario).parent_path().string(),
                  servesim_version(),
                  servesim_git_revision(),
                  o.max_error_rate};
}

// The scenario's speculation with the acceptance this run measured (nullopt without
// speculation or without a single draft): what `simulate` needs to predict the run.
std::optional<SpeculativeConfig> measured_speculation(const SimulationConfig& c,
                                                      const EngineServeResult& r) {
  if (!c.engine.speculative || r.spec_counters.num_drafts == 0) return std::nullopt;
  SpeculativeConfig s = *c.engine.speculative;
  const SpecDecodeCounters& n = r.spec_counters;
  s.set_measured_acceptance(n.num_decodes, n.num_drafts, n.num_accepted_per_position);
  return s;
}

// vLLM's spec-decode log line (drafts, acceptance, mean acceptance length, per position), plus
// the block that makes `simulate` draft and accept as this run did.
void print_speculation(const SpeculativeConfig& config, const EngineServeResult& r,
                       const std::optional<SpeculativeConfig>& measured) {
  const SpecDecodeCounters& n = r.spec_counters;
  std::printf("  speculative decoding (%s): %lld of %lld drafts accepted (%.1f%%)\n",
              config.vllm_json().dump().c_str(), static_cast<long long>(r.num_accepted_tokens),
              static_cast<long long>(r.num_draft_tokens),
              r.num_draft_tokens > 0 ? 100.0 * static_cast<double>(r.num_accepted_tokens) /
                                           static_cast<double>(r.num_draft_tokens)
                                     : 0.0);
  if (!measured) {
    std::printf("    no decode step had drafts (%lld decodes): nothing to gain here\n",
                static_cast<long long>(n.num_decodes));
    return;
  }
  const auto per_step = [](double a, int64_t b) { return a / static_cast<double>(b); };
  std::printf("    drafts on %lld of %lld decode steps; mean acceptance length %.3f; per position:",
              static_cast<long long>(n.num_drafts), static_cast<long long>(n.num_decodes),
              1 + per_step(static_cast<double>(r.num_accepted_tokens), n.num_drafts));
  for (int64_t a : n.num_accepted_per_position) {
    std::printf(" %.3f", per_step(static_cast<double>(a), n.num_drafts));
  }
  std::printf("\n    for simulate: engine.speculative=%s\n",
              measured->simulator_json().dump().c_str());
}

}  // namespace

int run_engine_run(const EngineRunOptions& o) {
  const Backend backend = parse_backend(o.backend);
  if (!(o.max_error_rate >= 0 && o.max_error_rate <= 1)) {
    throw ConfigError("--max-error-rate must be in [0, 1]");
  }
  std::vector<std::string> overrides = o.overrides;
  if (o.seed) overrides.push_back("seed=" + std::to_string(*o.seed));
  if (!o.speculative_config.empty()) {
    SpeculativeConfig::from_text(o.speculative_config, "--speculative-config", nullptr);
    overrides.push_back("engine.speculative=" + o.speculative_config);
  }
  Catalog catalog;
  const Scenario scenario = load_scenario(o.scenario, overrides, catalog);

  EngineServeOptions options;
  options.backend = backend;
  options.num_threads = o.threads;
  options.num_gpu_blocks = o.num_blocks;
  options.kv_cache_mib = o.kv_cache_mib;
  options.max_requests = o.max_requests;
  options.checkpoint = o.checkpoint;
  options.force = o.force;
  options.profile = o.profile;
  std::ofstream trace;
  if (!o.trace_path.empty()) {
    trace.open(o.trace_path);
    if (!trace) throw ConfigError("--trace: cannot write '" + o.trace_path + "'");
    options.trace = &trace;
  }
  const EngineServer server(scenario.config, options);
  RunObserver observer(o.out_dir);
  const EngineServeResult result = server.run(observer);

  const SimulationConfig& c = server.config();
  const SchedulerConfig& sc = server.scheduler_config();
  const int64_t kv_tokens = (sc.num_gpu_blocks - 1) * sc.block_size;
  const double kv_mib = static_cast<double>(server.kv_cache_bytes()) / (1 << 20);
  nlohmann::json j;
  j["scenario"] = scenario.name;
  j["model"] = c.model.name;
  j["backend"] = o.backend;
  j["threads"] = o.threads;
  j["params"] = server.weights().num_params();
  j["batching"] = std::string(scheduling_policy_name(c.batching));
  j["max_num_seqs"] = sc.max_num_seqs;
  j["max_num_batched_tokens"] = sc.max_num_batched_tokens;
  j["max_model_len"] = sc.max_model_len;
  j["kv_cache_blocks"] = sc.num_gpu_blocks;
  j["kv_cache_tokens"] = kv_tokens;
  j["kv_cache_mib"] = kv_mib;
  j["seed"] = c.seed;
  j["wall_s"] = result.wall_s;
  j["stopped"] = result.stopped;
  j["setup"] =
      engine_run_setup_json({c, sc, kv_tokens, server.weights().num_params(), o.backend, o.threads},
                            run_setup(o, scenario));
  j["summary"] = summary_json(result.summary);
  const Knee knee = find_knee(result.by_step, c.metrics.slo, o.max_error_rate);
  if (const nlohmann::json steps = steps_json(result.by_step, c.workload.steps); !steps.empty()) {
    j["steps"] = steps;
    j["knee"] = knee_json(knee, c.workload.steps);
  }
  j["replicas"] = nlohmann::json::array({replica_json(result.engine)});
  const std::optional<SpeculativeConfig> measured = measured_speculation(c, result);
  if (c.engine.speculative) {
    const SpecDecodeCounters& n = result.spec_counters;
    j["speculative"] = {{"config", c.engine.speculative->vllm_json()},
                        {"num_draft_tokens", result.num_draft_tokens},
                        {"num_accepted_tokens", result.num_accepted_tokens},
                        {"num_decodes", n.num_decodes},
                        {"num_drafts", n.num_drafts},
                        {"num_accepted_tokens_per_pos", n.num_accepted_per_position}};
    if (measured) j["speculative"]["measured"] = measured->simulator_json();
  }
  const std::vector<Finding> why = diagnose({result.summary, {result.engine}, {}, result.wall_s});
  j["diagnosis"] = diagnosis_json(why);

  if (!o.out_dir.empty()) {
    observer.commit();
    write_file_atomically((std::filesystem::path(o.out_dir) / "summary.json").string(),
                          json_text(j) + "\n");
  }
  if (o.json) {
    std::cout << json_text(j) << "\n";
    return 0;
  }
  std::printf("%s: %s (%.1f M params) on the %s engine, %d thread%s, %s batching\n",
              scenario.name.c_str(), c.model.name.c_str(), server.weights().num_params() / 1e6,
              o.backend.c_str(), o.threads, o.threads == 1 ? "" : "s",
              std::string(scheduling_policy_name(c.batching)).c_str());
  std::printf(
      "  KV cache %lld tokens (%lld blocks, %.1f MiB fp32); max_num_seqs %d, "
      "max_num_batched_tokens %d, max_model_len %d\n",
      static_cast<long long>(kv_tokens), static_cast<long long>(sc.num_gpu_blocks), kv_mib,
      sc.max_num_seqs, sc.max_num_batched_tokens, sc.max_model_len);
  print_summary(stdout, result.summary, "wall clock");
  print_diagnosis(stdout, why);
  if (!result.by_step.empty()) {
    print_step_table(stdout, result.by_step,
                     {c.workload.steps, c.workload.step_duration_s, c.step_warmup_s});
    print_knee(stdout, knee, c.workload.steps);
  }
  if (c.engine.speculative) print_speculation(*c.engine.speculative, result, measured);
  std::printf("  %lld engine steps, %.1f s busy of %.1f s%s\n",
              static_cast<long long>(result.engine.steps), result.engine.busy_s, result.wall_s,
              result.stopped ? " — stopped early" : "");
  return 0;
}

}  // namespace servesim
