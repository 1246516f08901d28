// CalibratedCostModel: step time from a fitted profile — per op, the dot product of the
// profile's coefficients with the CostFeatures of the batch shape, times the op's RowScale
// factor at the step's rows (GEMMs), summed. The features are
// physical (FLOPs, weight and KV bytes, sequences), so a profile fitted on one model can
// predict another model on the same device ("transfer"), at the accuracy docs/validation.md
// reports.
//
// A profile covers what it measured: a step far beyond its range (more than
// kProfileRangeSlack times its largest tokens, sequences or context) throws ConfigError
// unless the model was built with extrapolate = true, in which case such steps come back
// with StepTime::extrapolated set, for the caller to count and report.
//
// predict() is O(1) in the step's sequences (a binary search in each GEMM's row table) and
// allocates nothing; immutable after construction: safe to call from several threads.
#pragma once

#include <cstdint>
#include <string>

#include "models/calibration_profile.h"
#include "models/cost_features.h"
#include "models/cost_model.h"

namespace servesim {

struct ModelSpec;
struct ParallelConfig;

// How far beyond the profiled range a step may go before it counts as extrapolation.
inline constexpr double kProfileRangeSlack = 1.5;

struct CalibratedOptions {
  bool extrapolate = false;  // predict steps beyond the profiled range instead of refusing
  bool transfer = false;     // allow a model other than the profiled one
};

class CalibratedCostModel : public CostModel {
 public:
  // Throws ConfigError when the model differs from the profiled one without transfer, when
  // the deployment uses TP or PP (a profile covers one device), or when the model has no
  // calibrated features (CostFeatures).
  CalibratedCostModel(const CalibrationProfile& profile, const ModelSpec& model,
                      const ParallelConfig& parallel, CalibratedOptions options = {});

  CalibratedCostModel(const CalibratedCostModel&) = delete;
  CalibratedCostModel& operator=(const CalibratedCostModel&) = delete;

  StepTime predict(const BatchShape& shape) const override;
  int num_stages() const override { return 1; }
  double stage_transfer_s(int64_t) const override { return 0; }

  const CalibrationProfile& profile() const { return profile_; }
  bool transferred() const { return transferred_; }

 private:
  // Empty when the shape is inside the range; else what exceeds it.
  std::string out_of_range(const BatchShape& shape) const;

  CalibrationProfile profile_;
  CostFeatures features_;
  CalibratedOptions options_;
  bool transferred_ = false;
};

}  // namespace servesim
