#include "cli/calibrate_command.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "calibration/profile_fitter.h"
#include "calibration/profile_run.h"
#include "models/catalog.h"
#include "models/config_error.h"
#include "models/cost_model.h"

namespace servesim {
namespace {

constexpr Op kReportOps[] = {
    Op::kQkv,    Op::kAttentionPrefill, Op::kAttentionDecode, Op::kOProj,   Op::kMlp,
    Op::kLmHead, Op::kNormRopeEmbed,    Op::kSampling,        Op::kOverhead};

ProfileProgress progress_printer(bool enabled) {
  if (!enabled || isatty(STDERR_FILENO) == 0) return {};
  return [](int done, int total) {
    std::fprintf(stderr, "\rprofile: %d/%d shapes", done, total);
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
  std::printf("%-18s %9s %8s\n", "op", "MAPE_%", "R²");
  for (Op op : kReportOps) {
    const OpFitQuality& q = p.fit.ops[static_cast<size_t>(op)];
    std::printf("%-18s %9.1f %8.4f\n", std::string(op_name(op)).c_str(), 100 * q.mape, q.r2);
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

void add_profiler_options(CLI::App* c, CalibrateCommandOptions& o) {
  ProfilerOptions& p = o.profiler;
  c->add_option("--model", p.model, "Catalog name or model JSON")->capture_default_str();
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
  c->add_option("--seed", p.seed, "Seed of the random weights")->capture_default_str();
  c->add_flag("--no-progress", o.no_progress, "No progress line on stderr");
}

}  // namespace

CLI::App* add_calibrate_command(CLI::App& app, CalibrateCommandOptions& o) {
  CLI::App* cal = app.add_subcommand(
      "calibrate", "Profile the engine, fit a calibrated cost model, validate the simulator");
  cal->require_subcommand(1);

  o.profile = cal->add_subcommand("profile", "Measure the engine over a grid of batch shapes");
  add_profiler_options(o.profile, o);
  o.profile->add_option("--out", o.profiler.out_dir, "Run directory (resumed when it exists)")
      ->required();

  o.fit = cal->add_subcommand("fit", "Fit a calibrated cost model to a profile run");
  o.fit->add_option("dir", o.run_dir, "Run directory of calibrate profile")->required();
  o.fit->add_option("--out", o.profile_out, "Profile JSON to write (configs/profiles/NAME.json)")
      ->required();
  o.fit->add_option("--model", o.fit_model, "Refuse a run of another model");
  o.fit->add_option("--backend", o.fit_backend, "Refuse a run of another backend");
  o.fit->add_option("--folds", o.folds, "k of the k-fold cross-validation")->capture_default_str();
  return cal;
}

int run_calibrate_command(const CalibrateCommandOptions& o) {
  Catalog catalog;
  if (o.profile != nullptr && *o.profile) return run_profile_step(o, catalog);
  if (o.fit != nullptr && *o.fit) return run_fit_step(o, o.run_dir, o.profile_out);
  return 0;
}

}  // namespace servesim
