#include "calibration/profile/speed_probe.h"

#include <chrono>
#include <memory>

#include "engine/runtime/shape_batch.h"
#include "models/config_error.h"
#include "sim/metrics/percentile.h"

namespace servesim {
namespace {

using Clock = std::chrono::steady_clock;

const nlohmann::json& run_options(const CalibrationProfile& p) {
  static const nlohmann::json kNone = nlohmann::json::object();
  const auto it = p.environment.find("run");
  return it != p.environment.end() && it->is_object() ? *it : kNone;
}

ModelSpec profiled_model(const CalibrationProfile& p) {
  if (p.reference_steps.empty() || !p.environment.contains("model_spec")) {
    throw ConfigError(
        "calibrate validate: the profile has no reference steps to probe the "
        "machine's speed with (fitted by an older servesim); re-run `servesim "
        "calibrate fit` on its run directory, or pass --no-speed-probe");
  }
  return ModelSpec::from_json(p.environment["model_spec"], "profile: environment.model_spec");
}

int64_t blocks_for(const std::vector<ReferenceStep>& steps, int block_size) {
  int64_t most = 0;
  for (const ReferenceStep& s : steps) {
    most = std::max(most, ShapeBatch::blocks_needed(s.seqs, block_size));
  }
  return most + 1;  // the null block
}

}  // namespace

SpeedProbe::SpeedProbe(const CalibrationProfile& p)
    : steps_(p.reference_steps), block_size_(run_options(p).value("block_size", 16)) {
  const ModelSpec spec = profiled_model(p);
  vocab_ = spec.vocab_size;
  target_ = make_profile_target(spec, {.backend = p.backend,
                                       .num_blocks = blocks_for(steps_, block_size_),
                                       .block_size = block_size_,
                                       .threads = p.threads,
                                       .seed = run_options(p).value("seed", uint64_t{0}),
                                       .measure_device = false});
}

double SpeedProbe::measure(int repeats) {
  return speed_factor(measure_steps(repeats), steps_);
}

std::vector<double> SpeedProbe::measure_steps(int repeats) {
  std::vector<std::unique_ptr<ShapeBatch>> batches;
  for (const ReferenceStep& step : steps_) {
    batches.push_back(std::make_unique<ShapeBatch>(step.seqs, block_size_, vocab_));
  }
  // Round-robin, as the profiler measured them: no step runs twice in a row, so none runs with
  // caches warmer than it had when profiled.
  std::vector<std::vector<double>> times(steps_.size());
  for (int r = -1; r < repeats; ++r) {
    for (size_t i = 0; i < batches.size(); ++i) {
      const Clock::time_point t0 = Clock::now();
      const RunnerOutput& out = target_.runner->execute(batches[i]->output(), batches[i]->tokens());
      for (int k = 0; k < out.num_samples; ++k) out.greedy_token(k, vocab_);
      if (r >= 0) times[i].push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
  }
  std::vector<double> medians;
  for (std::vector<double>& t : times) medians.push_back(percentile(t, 50));
  return medians;
}

double speed_factor(std::span<const double> measured_s, std::span<const ReferenceStep> steps) {
  std::vector<double> ratios;
  for (size_t i = 0; i < steps.size() && i < measured_s.size(); ++i) {
    ratios.push_back(measured_s[i] / steps[i].step_s);
  }
  return percentile(ratios, 50);
}

}  // namespace servesim
