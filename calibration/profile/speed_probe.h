// SpeedProbe: how fast this machine runs now against when a profile was measured. It
// re-measures the profile's reference steps (CalibrationProfile::reference_steps) on the
// profiled model, with the runner, threads, seed and block size the profiler used, and
// returns the median over them of (median step now) / (median step then): 1.10 means steps
// take 10% longer now. `calibrate validate` probes before and after each engine run, so a
// shared machine's drift is told apart from the cost model's error.
//
// Owns its runner and the weights (the profiled model's, seeded as the profiler seeded them;
// as much memory as the model's weights again). Not thread-safe.
#pragma once

#include <span>
#include <vector>

#include "calibration/profile/profile_target.h"
#include "models/calibration_profile.h"

namespace servesim {

class SpeedProbe {
 public:
  // Throws ConfigError when the profile has no reference steps or no model_spec in its
  // environment (fitted by an older servesim: re-run `servesim calibrate fit`), or when its
  // backend cannot run here.
  explicit SpeedProbe(const CalibrationProfile& profile);

  // speed_factor() of measure_steps(repeats).
  double measure(int repeats = 3);
  // The median seconds of each reference step now, in the profile's order: one round-robin
  // warm-up pass, then `repeats` measured passes. REQUIRES: repeats >= 1.
  std::vector<double> measure_steps(int repeats = 3);
  const std::vector<ReferenceStep>& steps() const { return steps_; }

 private:
  std::vector<ReferenceStep> steps_;
  ProfileTarget target_;
  int block_size_ = 16;
  int vocab_ = 0;
};

// The median over reference steps of measured_s[i] / steps[i].step_s. REQUIRES: equal sizes,
// not empty.
double speed_factor(std::span<const double> measured_s, std::span<const ReferenceStep> steps);

}  // namespace servesim
