// ProfileFitter: `servesim calibrate fit` — turns a run directory (profile_run.h) into a
// CalibrationProfile. Per op, a non-negative least-squares fit of the measured seconds on
// the op's CostFeatures, each shape's repeats reduced to their median and every row weighted
// by 1 / (the shape's step time) so the fit minimises relative error, as the MAPE it is
// judged by. The overhead op absorbs whatever the step took beyond the timed ops, so the
// predicted ops sum to the measured step. Each GEMM then gets a RowScale: at every profiled
// row count, the median of measured over linear time — kept only when it predicts the
// held-out shapes better than the linear model alone.
//
// Quality is measured on held-out shapes: k-fold cross-validation (shape i in fold i % k),
// step MAPE and R², and per op the MAPE over shapes where the op takes at least 5% of the
// step (below that, timer noise dominates). The reported coefficients are then refitted on
// every shape.
//
// Stateless; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "calibration/profile/profile_run.h"
#include "models/calibration_profile.h"

namespace servesim {

struct FitOptions {
  int folds = 5;               // k of the cross-validation. REQUIRES: >= 2
  std::string expect_model;    // refuse a run of another model; empty = any
  std::string expect_backend;  // refuse a run of another backend; empty = any
  // Largest accepted ratio of the weighted design's singular values, per op.
  double max_condition = 1e10;
};

struct FitResult {
  CalibrationProfile profile;
  std::vector<std::string> warnings;  // dropped partial line, shapes with missing repeats
};

// Throws ConfigError for a model or backend other than expected, too few shapes to fit and
// validate, or an ill-conditioned op — each saying what to re-run.
FitResult fit_profile(const ProfileRun& run, const FitOptions& options);

}  // namespace servesim
