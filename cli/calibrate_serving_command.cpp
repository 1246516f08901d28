#include "cli/calibrate_serving_command.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "calibration/measured/measured_run_reader.h"
#include "calibration/measured/memory_log_comparison.h"
#include "calibration/measured/published_serving_rows.h"
#include "calibration/measured/run_provenance.h"
#include "calibration/serving/prefill_demand.h"
#include "calibration/serving/serving_case_builder.h"
#include "calibration/serving/serving_report.h"
#include "models/config_error.h"
#include "models/json_file.h"
#include "plan/parallel_for.h"
#include "sim/metrics/atomic_file.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

struct Base {
  nlohmann::json json;  // the scenario as simulated (overrides applied)
  std::string dir;      // resolves its relative paths
  std::string origin;
};

Base base_scenario(const CalibrateServingOptions& o) {
  if (!o.scenario.empty()) {
    if (!o.model.empty() || !o.gpu.empty())
      throw ConfigError(
          "calibrate serving: give the deployment either as a scenario or as --model/--gpu, not "
          "both (use --set model=... to change the scenario's)");
    Base b{load_json_file(o.scenario), std::filesystem::path(o.scenario).parent_path().string(),
           o.scenario};
    apply_overrides(b.json, o.overrides);
    return b;
  }
  if (o.model.empty() || o.gpu.empty())
    throw ConfigError(
        "calibrate serving: name the deployment: a scenario file, or --model and --gpu");
  nlohmann::json j = {{"name", "calibrate-serving"},
                      {"model", o.model},
                      {"gpu", o.gpu},
                      {"parallel", {{"tensor_parallel_size", o.tp}}},
                      {"workload",
                       {{"arrival", {{"type", "closed"}, {"clients", 1}}},
                        {"prompt_tokens", 1},
                        {"output_tokens", 1},
                        {"num_requests", 1}}}};
  if (o.max_model_len > 0) j["engine"] = {{"max_model_len", o.max_model_len}};
  Base b{j, ".", "calibrate serving"};
  apply_overrides(b.json, o.overrides);
  return b;
}

// The log's vLLM version and the memory terms that make servesim's KV capacity the log's,
// written into the base scenario's engine block; prints what the fit changed.
void fit_memory_to_log(const std::string& path, const Catalog& catalog, Base& base) {
  const VllmStartupLog log = VllmStartupLog::read_file(path);
  SimulationConfig c = parse_scenario(base.json, base.dir, base.origin, catalog).config;
  // The scenario states the deployment; the log adds only the release it ran.
  GivenSettings given{.tp = true,
                      .pp = true,
                      .dtype = true,
                      .kv_cache_dtype = true,
                      .max_model_len = true,
                      .gpu_memory_utilization = true,
                      .max_num_seqs = true,
                      .max_num_batched_tokens = true,
                      .block_size = true,
                      .enforce_eager = true,
                      .enable_chunked_prefill = true,
                      .vllm_version = false,
                      .gpu_memory_bytes = true};
  deployment_from_log(log, given, c.parallel, c.engine);
  const MemoryPlan before = MemoryPlan::compute_unchecked(c.model, c.gpu, c.parallel, c.engine);
  const MemoryLogFit fit = MemoryLogFit::fit(log, c.model, c.gpu, c.parallel, c.engine);
  nlohmann::json& engine = base.json["engine"];
  if (!engine.is_object()) engine = nlohmann::json::object();
  engine["vllm_version"] = c.engine.vllm_version.to_string();
  engine.update(fit.engine_keys());
  std::printf("memory from %s: KV cache %lld tokens with servesim's terms, %lld fitted (%s)\n\n",
              path.c_str(), static_cast<long long>(before.kv_cache_tokens),
              static_cast<long long>(fit.plan.kv_cache_tokens), fit.engine_keys().dump().c_str());
}

std::vector<MeasuredRun> read_runs(const std::vector<std::string>& paths,
                                   const BenchmarkProtocol& published) {
  std::vector<MeasuredRun> runs;
  for (const std::string& path : paths) {
    if (std::filesystem::is_regular_file(path) && is_published_serving_rows(path)) {
      for (MeasuredRun& r : read_published_serving_rows(path, published))
        runs.push_back(std::move(r));
    } else {
      for (MeasuredRun& r : read_measured_runs(path)) runs.push_back(std::move(r));
    }
  }
  return runs;
}

// The base scenario with the fitted values in it: simulate, sweep and plan run it as fitted.
nlohmann::json fitted_scenario(nlohmann::json j, const ServingFit& fit, const SimulationConfig& c) {
  const ServingParameters& p = fit.fitted;
  nlohmann::json& m = j["cost_model"];
  if (!m.is_object() || m.value("type", "roofline") != "roofline") m = nlohmann::json::object();
  m["type"] = "roofline";
  m["compute_efficiency"] = p.compute_efficiency;
  m["memory_efficiency"] = p.memory_efficiency;
  m["step_overhead_ms"] = p.step_overhead_s * 1e3;
  m["seq_overhead_us"] = p.seq_overhead_s * 1e6;
  if (c.service.enabled && p.frontend_scale != 1) {
    const FrontendSpec f = with_serving_parameters(c, p).service.frontend;
    nlohmann::json& service = j["service"];
    if (!service.is_object()) service = nlohmann::json::object();
    nlohmann::json& frontend = service["frontend"];
    if (!frontend.is_object()) frontend = nlohmann::json::object();
    frontend["request_s"] = f.station.request_s.mean();
    frontend["per_prompt_token_s"] = f.station.per_prompt_token_s;
    frontend["step_s"] = f.step_s.mean();
    frontend["per_output_token_s"] = f.per_output_token_s;
  }
  if (c.service.enabled && p.rtt_s != c.service.rtt_s.mean()) {
    nlohmann::json& service = j["service"];
    if (!service.is_object()) service = nlohmann::json::object();
    nlohmann::json& network = service["network"];
    if (!network.is_object()) network = nlohmann::json::object();
    network["rtt_s"] = p.rtt_s;
  }
  return j;
}

nlohmann::json profile_json(const ServingReport& report, const SimulationConfig& c,
                            const std::vector<MeasuredRun>& runs) {
  nlohmann::json used = nlohmann::json::array(), held = nlohmann::json::array();
  for (const ServingRunReport& r : report.runs) (r.held_out ? held : used).push_back(r.name);
  nlohmann::json values = nlohmann::json::object();
  for (std::string_view name : serving_parameter_names())
    values[std::string(name)] = serving_parameter_value(report.fit.fitted, name);
  nlohmann::json profile = {{"format", "servesim-serving-profile"},
                            {"version", 1},
                            {"model", c.model.name},
                            {"gpu", c.gpu.name},
                            {"engine_version", runs.empty() ? "" : runs.front().engine_version},
                            {"parameters", values},
                            {"fitted", report.fit.parameters},
                            {"runs_fitted", used},
                            {"runs_held_out", held}};
  // The fit holds only for the protocol the published rows were simulated with.
  for (const MeasuredRun& r : runs) {
    if (r.format == "published") {
      profile["published_protocol"] = r.protocol.name;
      break;
    }
  }
  return profile;
}

void write_outputs(const std::string& dir, const ServingReport& report, const Base& base,
                   const SimulationConfig& c, const std::vector<MeasuredRun>& runs) {
  std::filesystem::create_directories(dir);
  write_file_atomically(dir + "/report.json", json_text(serving_report_json(report)) + "\n");
  write_file_atomically(dir + "/profile.json", json_text(profile_json(report, c, runs)) + "\n");
  write_file_atomically(dir + "/scenario.json",
                        json_text(fitted_scenario(base.json, report.fit, c)) + "\n");
}

// Runs whose measured means ask more prefill than the GPUs' peak gives cannot have sent new
// prompts; unless the base scenario already says its benchmark repeated them, say which.
std::vector<std::string> impossible_runs(const std::vector<MeasuredRun>& runs,
                                         const std::vector<ServingFitCase>& cases,
                                         const SimulationConfig& base) {
  std::vector<std::string> out;
  if (base.workload.distinct_prompts > 0) return out;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::optional<PrefillDemand> d = prefill_demand(runs[i], cases[i].config);
    if (!d || !(d->busy > 1)) continue;
    // The numbers are bounded; the run's name (a path) is not, so it goes outside the buffer.
    char numbers[160];
    std::snprintf(numbers, sizeof numbers,
                  "its means imply %.1f requests/s, %.2f s of prefill per second even with every "
                  "kernel at the GPU's peak (%.1f ms a prompt)",
                  d->requests_per_s, d->busy, d->prefill_at_peak_s * 1e3);
    out.push_back(runs[i].source + ": " + numbers +
                  ": it cannot have sent new prompts as recorded; if its benchmark reused a "
                  "dataset of prompts (aiperf's --num-dataset-entries, 100 by default), --set "
                  "workload.distinct_prompts=N");
  }
  return out;
}

// Keeps the runs measured at the load they name; a published row whose source records no
// concurrency goes to `left_out`, named, since no replay of it can be held to its means.
std::vector<MeasuredRun> runs_at_named_load(std::vector<MeasuredRun> runs,
                                            const std::string& provenance_path,
                                            std::vector<std::string>& left_out) {
  if (provenance_path.empty()) return runs;
  const RunProvenance provenance = RunProvenance::read_file(provenance_path);
  std::vector<MeasuredRun> kept;
  for (MeasuredRun& run : runs) {
    if (run.format != "published" || provenance.measured_at_named_load(run)) {
      kept.push_back(std::move(run));
      continue;
    }
    left_out.push_back(run.source + " (" + provenance.upstream_id(run) + "): its source records " +
                       "no concurrency, so its " + std::to_string(*run.load.max_concurrency) +
                       " clients are not the load it ran at (" + provenance.path() + ")");
  }
  if (kept.empty())
    throw ConfigError("calibrate serving: every run is left out by --provenance " +
                      provenance.path() + ": none records the load it ran at");
  return kept;
}

}  // namespace

void add_calibrate_serving_command(CLI::App& calibrate, CalibrateServingOptions& o,
                                   CLI::App*& subcommand) {
  CLI::App* c = calibrate.add_subcommand(
      "serving", "Fit the simulator to serving runs measured on a real deployment");
  subcommand = c;
  c->add_option("scenario", o.scenario, "Base scenario JSON (the deployment); or --model/--gpu");
  c->add_option("--measured", o.measured,
                "vllm bench serve result JSON, loadtest folder, timing trace or published rows CSV")
      ->required()
      ->expected(1, -1);
  c->add_option(
       "--published-protocol", o.published_protocol,
       "How published rows were benchmarked: steady, inferencex, aiconfigurator or inferencemax")
      ->capture_default_str();
  c->add_option("--model", o.model, "Without a scenario: catalog name or model JSON");
  c->add_option("--gpu", o.gpu, "Without a scenario: catalog GPU name or JSON");
  c->add_option("--tp", o.tp, "Without a scenario: tensor parallel size")->capture_default_str();
  c->add_option("--max-model-len", o.max_model_len, "Without a scenario: vLLM's --max-model-len");
  c->add_option("--set", o.overrides, "Override a key of the base scenario (key=value)");
  c->add_option("--log", o.log, "vLLM start-up log of the deployment: fit its memory terms first");
  c->add_option("--provenance", o.provenance,
                "What the published rows' source records of each run (CSV): rows whose load it "
                "does not record are left out");
  c->add_option("--holdout", o.holdout, "Fraction of the runs held out of the fit, for the report")
      ->capture_default_str();
  c->add_option("--fit", o.fit, "Parameters to fit (comma list; default: all that apply but rtt_s)")
      ->delimiter(',');
  c->add_option("--max-iterations", o.max_iterations, "Levenberg-Marquardt steps at most")
      ->capture_default_str();
  c->add_option("--threads", o.threads, "Simulations in parallel (0: every core)")
      ->capture_default_str();
  c->add_option("--out", o.out_dir, "Write report.json, profile.json and scenario.json here");
  c->add_flag("--json", o.json, "Print the report as JSON");
}

int run_calibrate_serving_command(const CalibrateServingOptions& o) {
  const Catalog catalog;
  const BenchmarkProtocol published =
      BenchmarkProtocol::named(o.published_protocol, "--published-protocol");
  Base base = base_scenario(o);
  if (!o.log.empty()) fit_memory_to_log(o.log, catalog, base);
  const SimulationConfig config = parse_scenario(base.json, base.dir, base.origin, catalog).config;
  std::vector<std::string> left_out;
  const std::vector<MeasuredRun> runs =
      runs_at_named_load(read_runs(o.measured, published), o.provenance, left_out);
  const std::vector<bool> held_out = held_out_runs(runs.size(), o.holdout);
  std::vector<ServingFitCase> all, train;
  for (size_t i = 0; i < runs.size(); ++i) {
    all.push_back(make_serving_case(runs[i], config, catalog));
    if (!held_out[i]) train.push_back(all.back());
  }
  ServingFitOptions options;
  options.parameters = o.fit;
  options.solver.max_iterations = o.max_iterations;
  const int threads = o.threads;
  options.for_each = [threads](size_t n, const std::function<void(size_t)>& body) {
    parallel_for(n, threads, body);
  };
  const ServingFit fit = fit_serving(train, options);
  ServingReport report = make_serving_report(all, held_out, fit, o.holdout, options.for_each);
  report.warnings = impossible_runs(runs, all, config);
  report.left_out = std::move(left_out);
  if (!o.out_dir.empty()) write_outputs(o.out_dir, report, base, config, runs);
  if (o.json) {
    std::printf("%s\n", json_text(serving_report_json(report)).c_str());
  } else {
    std::printf("%s", serving_report_text(report).c_str());
    if (!o.out_dir.empty())
      std::printf(
          "\nwrote %s/{report,profile,scenario}.json; simulate with: servesim simulate "
          "%s/scenario.json\n",
          o.out_dir.c_str(), o.out_dir.c_str());
  }
  return 0;
}

}  // namespace servesim
