#include "cli/calibrate_command.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "calibration/profile/profile_fitter.h"
#include "calibration/profile/profile_run.h"
#include "calibration/profile/validator.h"
#include "models/catalog.h"
#include "models/config_error.h"
#include "models/cost_features.h"
#include "models/cost_model.h"
#include "models/json_file.h"
#include "sim/metrics/atomic_file.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

ProfileProgress progress_printer(bool enabled) {
  if (!enabled || isatty(STDERR_FILENO) == 0) return {};
  return [](int done, int total) {
    std::fprintf(stderr, "\rprofile: %d/%d steps", done, total);
    if (done == total) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  };
}

int run_profile_step(const CalibrateCommandOptions& o, const Catalog& catalog) {
  const ProfilerSummary s = run_profile(o.profiler, catalog, progress_printer(!o.no_progress));
  std::printf(
      "calibrate profile: %s on %s, %d shapes: %d steps measured, %d already there, "
      "%.1f s -> %s\n",
      o.profiler.model.c_str(), o.profiler.backend.c_str(), s.shapes, s.samples_written,
      s.samples_resumed, s.wall_s, o.profiler.out_dir.c_str());
  return 0;
}

void print_fit(const CalibrationProfile& p, const std::string& out) {
  std::printf("calibrate fit: %s on %s (%s, %d threads): %d steps, %d shapes, %d-fold\n",
              p.model.c_str(), p.backend.c_str(), p.device.c_str(), p.threads, p.fit.samples,
              p.fit.shapes, p.fit.folds);
  std::printf("held-out step time: MAPE %.1f%%, R² %.4f\n", 100 * p.fit.step.mape, p.fit.step.r2);
  std::printf("%-18s %9s %8s  %s\n", "op", "MAPE_%", "R²", "row scale (GEMMs)");
  for (Op op : kAllOps) {
    if (op_feature_names(op).empty()) continue;  // comm: a profile covers one device
    const OpFitQuality& q = p.fit.ops[static_cast<size_t>(op)];
    std::string scale;
    if (const RowScale& rs = p.row_scales[static_cast<size_t>(op)]; !rs.empty()) {
      double lo = rs.points().front().factor, hi = lo;
      for (const RowFactor& f : rs.points()) {
        lo = std::min(lo, f.factor);
        hi = std::max(hi, f.factor);
      }
      char buf[64];
      std::snprintf(buf, sizeof buf, "x%.2f-%.2f over %zu row counts", lo, hi, rs.points().size());
      scale = buf;
    } else if (is_gemm_op(op)) {
      scale = "linear";
    }
    std::printf("%-18s %9.1f %8.4f  %s\n", std::string(op_name(op)).c_str(), 100 * q.mape, q.r2,
                scale.c_str());
  }
  auto pct = [](double fitted, double measured) {
    return measured > 0 ? 100 * fitted / measured : 0.0;
  };
  std::printf(
      "fitted rates: GEMM %.1f GFLOP/s (%.0f%% of the %.1f measured), weight stream "
      "%.2f GB/s (%.0f%% of the %.2f measured read bandwidth), KV read %.2f GB/s\n",
      p.rates.gemm_flops_per_s / 1e9,
      pct(p.rates.gemm_flops_per_s, p.rates.measured_gemm_flops_per_s),
      p.rates.measured_gemm_flops_per_s / 1e9, p.rates.weight_bytes_per_s / 1e9,
      pct(p.rates.weight_bytes_per_s, p.rates.measured_bytes_per_s),
      p.rates.measured_bytes_per_s / 1e9, p.rates.kv_bytes_per_s / 1e9);
  std::printf("range: <= %lld tokens, <= %lld sequences, <= %lld context per step -> %s\n",
              static_cast<long long>(p.range.max_tokens), static_cast<long long>(p.range.max_seqs),
              static_cast<long long>(p.range.max_context), out.c_str());
}

int run_fit_step(const CalibrateCommandOptions& o, const std::string& run_dir,
                 const std::string& out) {
  if (out.empty()) throw ConfigError("calibrate fit: --out FILE is required");
  const ProfileRun run = load_profile_run(run_dir);
  FitOptions fo;
  fo.folds = o.folds;
  fo.expect_model = o.fit_model;
  fo.expect_backend = o.fit_backend;
  const FitResult r = fit_profile(run, fo);
  for (const std::string& w : r.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  save_profile(r.profile, out);
  print_fit(r.profile, out);
  return 0;
}

// The metrics --max-error holds the simulator to: what capacity decisions rest on.
bool is_headline(const std::string& metric) {
  return metric == "output_throughput" || metric == "tpot_p50" || metric == "ttft_p50" ||
         metric == "ttft_p99";
}

int run_validate_step(const CalibrateCommandOptions& o, const Catalog& catalog,
                      const std::string& profile_path, const std::string& report_path) {
  std::vector<std::string> overrides = o.overrides;
  if (o.seed) overrides.push_back("seed=" + std::to_string(*o.seed));
  const Scenario scenario = load_scenario(o.scenario, overrides, catalog);
  ValidationOptions vo;
  vo.profile_path = profile_path;
  vo.transfer = o.transfer;
  vo.extrapolate = o.extrapolate;
  vo.runs = o.runs;
  vo.speed_probe = !o.no_speed_probe;
  vo.engine.num_threads = o.profiler.threads;
  vo.engine.num_gpu_blocks = o.num_blocks;
  if (!o.json && isatty(STDERR_FILENO) != 0) {
    std::fprintf(stderr, "calibrate validate: serving %s on the engine in real time...\n",
                 scenario.name.c_str());
  }
  const ValidationReport r = validate_profile(scenario, vo);
  const nlohmann::json j = r.to_json();
  if (!report_path.empty()) {
    write_file_atomically(report_path, json_text(j) + "\n");
  }
  int exit_code = 0;
  if (o.json) {
    std::cout << json_text(j) << "\n";
  } else {
    std::printf(
        "calibrate validate: %s, %s served on the %s engine (%d thread%s), profile %s "
        "(%s%s), %lld KV blocks both sides\n",
        r.scenario.c_str(), r.served_model.c_str(), r.backend.c_str(), o.profiler.threads,
        o.profiler.threads == 1 ? "" : "s", r.profile.c_str(), r.profiled_model.c_str(),
        r.transferred ? ", transferred" : "", static_cast<long long>(r.kv_blocks));
    const bool several = r.engine_runs.size() > 1;
    std::printf("%-24s %12s %12s %9s%s\n", "metric", several ? "engine(med)" : "engine",
                "simulated", "error_%", several ? "  engine_spread_%" : "");
    auto percent = [](double e) {
      return std::isfinite(e) ? std::to_string(std::lround(100 * e)) : std::string("n/a");
    };
    for (const MetricComparison& m : r.rows) {
      const std::string name = m.metric + " (" + m.unit + ")";
      const std::string spread = several ? "  " + percent(m.engine_spread) : "";
      std::printf("%-24s %12.2f %12.2f %9s%s\n", name.c_str(), m.engine, m.simulated,
                  percent(m.error).c_str(), spread.c_str());
    }
    double wall_s = 0;
    for (const EngineServeResult& run : r.engine_runs) wall_s += run.wall_s;
    std::printf(
        "completed: engine %llu, simulated %llu of %llu requests; engine wall %.1f s (%zu "
        "run%s)\n",
        static_cast<unsigned long long>(r.engine_runs.back().summary.completed),
        static_cast<unsigned long long>(r.simulated.summary.completed),
        static_cast<unsigned long long>(r.engine_runs.back().summary.requests), wall_s,
        r.engine_runs.size(), several ? "s" : "");
    const StepCheck& c = r.step_check;
    std::printf(
        "profile on the engine's %lld steps: measured/predicted median %.3f, mean error %.1f%%, "
        "p90 %.1f%%\n",
        static_cast<long long>(c.steps), c.median_ratio, 100 * c.mean_error, 100 * c.p90_error);
    if (r.speed_probed) {
      std::string speeds;
      for (double v : r.probes) speeds += (speeds.empty() ? "" : " ") + fixed(v, 3);
      std::printf(
          "machine speed vs the profile's (its reference steps, time now/then), before the runs "
          "and after each: %s\n",
          speeds.c_str());
    }
    if (r.extrapolated_steps > 0) {
      std::printf("note: %lld simulated steps lay beyond the profile's range (extrapolated)\n",
                  static_cast<long long>(r.extrapolated_steps));
    }
  }
  if (o.max_error > 0) {
    for (const MetricComparison& m : r.rows) {
      if (is_headline(m.metric) && !(std::abs(m.error) <= o.max_error)) {
        std::fprintf(
            stderr, "calibrate validate: %s is off by %s (limit %.0f%%)\n", m.metric.c_str(),
            std::isfinite(m.error) ? (std::to_string(std::lround(100 * m.error)) + "%").c_str()
                                   : "an unmeasurable amount",
            100 * o.max_error);
        exit_code = 1;
      }
    }
  }
  return exit_code;
}

int run_all(const CalibrateCommandOptions& o, const Catalog& catalog) {
  if (o.all_out.empty()) throw ConfigError("calibrate all: --out DIR is required");
  CalibrateCommandOptions step = o;
  std::vector<std::string> overrides = o.overrides;
  const Scenario scenario = load_scenario(o.scenario, overrides, catalog);
  if (o.profiler.model.empty()) {
    step.profiler.model = scenario.config.model.name;
    step.profiler.model_spec = scenario.config.model;
  }
  step.profiler.out_dir = (std::filesystem::path(o.all_out) / "run").string();
  const std::string profile = (std::filesystem::path(o.all_out) / "profile.json").string();
  const std::string report = (std::filesystem::path(o.all_out) / "validation.json").string();
  run_profile_step(step, catalog);
  run_fit_step(step, step.profiler.out_dir, profile);
  return run_validate_step(step, catalog, profile, report);
}

void add_validate_options(CLI::App* c, CalibrateCommandOptions& o) {
  c->add_option("--set", o.overrides, "Override a scenario key (key=value), repeatable");
  c->add_option("--seed", o.seed, "Seed of the workload (default: the scenario's)");
  c->add_option("--num-blocks", o.num_blocks, "Engine KV-cache blocks (default: its budget)");
  c->add_flag("--transfer", o.transfer, "Accept a profile of another model (transfer validation)");
  c->add_flag("--extrapolate", o.extrapolate, "Accept steps beyond the profile's range");
  c->add_option("--runs", o.runs,
                "Serve the workload this many times; the engine's figures are their medians")
      ->check(CLI::Range(1, 100));
  c->add_flag("--no-speed-probe", o.no_speed_probe,
              "Do not re-measure the profile's reference steps (machine drift)");
  c->add_option("--max-error", o.max_error,
                "Exit 1 when throughput, TPOT p50 or TTFT p50/p99 is off by more (fraction)");
  c->add_flag("--json", o.json, "Print the report as JSON");
}

// `all` takes --seed as the workload's (validate), so it leaves the weights' seed at 0.
void add_profiler_options(CLI::App* c, CalibrateCommandOptions& o, bool weight_seed) {
  ProfilerOptions& p = o.profiler;
  c->add_option("--model", p.model, "Catalog name or model JSON (all: the scenario's)");
  c->add_option("--backend", p.backend, "cpu or cuda")->capture_default_str();
  c->add_option("--threads", p.threads, "CPU threads of the engine")->capture_default_str();
  c->add_option("--repeats", p.repeats, "Measured steps per shape")->capture_default_str();
  c->add_option("--warmup", p.warmup, "Unmeasured steps per shape first")->capture_default_str();
  c->add_option("--max-tokens", p.grid.max_tokens, "Largest prefill chunk (tokens per step)")
      ->capture_default_str();
  c->add_option("--max-seqs", p.grid.max_seqs, "Largest decode batch")->capture_default_str();
  c->add_option("--max-context", p.grid.max_context, "Largest context of one sequence (tokens)")
      ->capture_default_str();
  c->add_flag("--quick", p.grid.quick, "Fewer points per axis (smoke runs)");
  if (weight_seed) {
    c->add_option("--seed", p.seed, "Seed of the random weights")->capture_default_str();
  }
  c->add_flag("--no-progress", o.no_progress, "No progress line on stderr");
}

}  // namespace

CLI::App* add_calibrate_command(CLI::App& app, CalibrateCommandOptions& o) {
  CLI::App* cal = app.add_subcommand("calibrate",
                                     "Profile the engine, fit a calibrated cost model, validate "
                                     "the simulator; fit it to measured serving runs");
  cal->require_subcommand(1);

  o.profile = cal->add_subcommand("profile", "Measure the engine over a grid of batch shapes");
  add_profiler_options(o.profile, o, true);
  o.profile->get_option("--model")->required();
  o.profile->add_option("--out", o.profiler.out_dir, "Run directory (resumed when it exists)")
      ->required();

  o.fit = cal->add_subcommand("fit", "Fit a calibrated cost model to a profile run");
  o.fit->add_option("dir", o.run_dir, "Run directory of calibrate profile")->required();
  o.fit->add_option("--out", o.profile_out, "Profile JSON to write (configs/profiles/NAME.json)")
      ->required();
  o.fit->add_option("--model", o.fit_model, "Refuse a run of another model");
  o.fit->add_option("--backend", o.fit_backend, "Refuse a run of another backend");
  o.fit->add_option("--folds", o.folds, "k of the k-fold cross-validation")->capture_default_str();

  o.validate = cal->add_subcommand(
      "validate", "Serve a scenario on the engine and in the simulator with a profile; compare");
  o.validate->add_option("scenario", o.scenario, "Scenario JSON")->required();
  o.validate->add_option("--profile", o.profile_path, "Profile JSON from calibrate fit")
      ->required();
  o.validate->add_option("--threads", o.profiler.threads, "CPU threads of the engine")
      ->capture_default_str();
  o.validate->add_option("--report", o.report, "Write the JSON report here");
  add_validate_options(o.validate, o);

  o.all = cal->add_subcommand("all", "Profile, fit and validate in sequence");
  o.all->add_option("scenario", o.scenario, "Scenario JSON (its model is profiled)")->required();
  o.all->add_option("--out", o.all_out, "Folder for run/, profile.json and validation.json")
      ->required();
  add_profiler_options(o.all, o, false);
  add_validate_options(o.all, o);
  add_calibrate_serving_command(*cal, o.serving_options, o.serving);
  return cal;
}

int run_calibrate_command(const CalibrateCommandOptions& o) {
  Catalog catalog;
  if (o.profile != nullptr && *o.profile) return run_profile_step(o, catalog);
  if (o.fit != nullptr && *o.fit) return run_fit_step(o, o.run_dir, o.profile_out);
  if (o.validate != nullptr && *o.validate) {
    return run_validate_step(o, catalog, o.profile_path, o.report);
  }
  if (o.all != nullptr && *o.all) return run_all(o, catalog);
  if (o.serving != nullptr && *o.serving) return run_calibrate_serving_command(o.serving_options);
  return 0;
}

}  // namespace servesim
