// make_cost_model: the one place that decides which CostModel prices a deployment's steps —
// the calibrated model when a fitted profile is given, the roofline otherwise — so the
// simulator, the planner and the validators need not know the concrete types.
// Stateless; thread-safe. The returned model is immutable and owned by the caller.
#pragma once

#include <memory>

#include "models/calibrated_cost_model.h"
#include "models/calibration_profile.h"
#include "models/cost_model.h"
#include "models/engine_config.h"
#include "models/hardware_spec.h"
#include "models/model_spec.h"
#include "models/parallel_config.h"
#include "models/roofline_cost_model.h"

namespace servesim {

struct CostModelChoice {
  const CalibrationProfile* profile = nullptr;  // not owned; nullptr: the roofline
  CalibratedOptions calibrated;                 // with a profile
  RooflineOptions roofline;                     // without one
};

// Throws ConfigError as the chosen model's constructor does (a profile of another model
// without transfer, TP/PP with a profile, ...).
std::unique_ptr<CostModel> make_cost_model(const CostModelChoice& choice, const ModelSpec& model,
                                           const HardwareSpec& gpu, const ParallelConfig& parallel,
                                           const EngineConfig& engine);

}  // namespace servesim
