// CalibrationProfile: what `servesim calibrate fit` learned about one model on one device —
// per-op coefficients of the CostFeatures, each GEMM's row-efficiency curve, the range of batch
// shapes they were fitted on, the held-out fit quality and the rates they imply — as stored in
// configs/profiles/*.json. CalibratedCostModel predicts from it; the scenario's cost_model block
// points to the file.
//
// Plain value; thread-compatible. The JSON reader is strict (unknown keys, wrong types and
// coefficient counts that do not match the features are one-line ConfigErrors).
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/cost_model.h"
#include "models/dtype.h"
#include "models/profile_shape.h"
#include "models/row_scale.h"

namespace servesim {

inline constexpr int kProfileFormatVersion = 1;

// The largest shapes the profile measured; CalibratedCostModel refuses steps well beyond.
struct ProfileRange {
  int64_t max_tokens = 0;   // tokens computed in one step
  int64_t max_seqs = 0;     // sequences in one step
  int64_t max_context = 0;  // tokens one sequence attends to (context + new)
};

struct OpFitQuality {
  double mape = 0;  // mean absolute percentage error on held-out shapes, fraction
  double r2 = 0;    // coefficient of determination on held-out shapes
};

struct FitQuality {
  int samples = 0;    // measured steps
  int shapes = 0;     // distinct batch shapes (repeats reduced to their median)
  int folds = 0;      // k of the k-fold cross-validation
  OpFitQuality step;  // the whole step's time
  std::array<OpFitQuality, kNumOps> ops{};  // per op; zero for ops without features
};

// Rates the coefficients imply, next to the ceilings the profile measured on the device.
struct FittedRates {
  double gemm_flops_per_s = 0;           // mlp's FLOP rate (the largest GEMMs)
  double weight_bytes_per_s = 0;         // mlp's weight-streaming rate
  double kv_bytes_per_s = 0;             // decode attention's KV read rate
  double measured_gemm_flops_per_s = 0;  // device GEMM rate measured by the profiler, 0 = none
  double measured_bytes_per_s = 0;       // device read bandwidth measured by the profiler
};

// A profiled shape and its median step time then: `calibrate validate` re-measures a few of
// them to tell how much faster or slower the machine runs now than when it was profiled.
struct ReferenceStep {
  ProfileShape seqs;
  double step_s = 0;  // median measured step, seconds. > 0
};

struct CalibrationProfile {
  std::string model;    // catalog name (or file) the engine ran
  std::string backend;  // "cpu" or "cuda"
  std::string device;   // CPU model name or GPU name
  int threads = 1;      // CPU threads of the engine
  DType weight_dtype = DType::kFp32;
  DType kv_dtype = DType::kFp32;
  // Seconds per unit of each feature of op_feature_names(op); empty for ops without features.
  std::array<std::vector<double>, kNumOps> coefficients;
  // Per GEMM op, its time over the linear model by rows; empty (identity) where the held-out
  // fit did not gain from one, and for ops that are not GEMMs.
  std::array<RowScale, kNumOps> row_scales;
  std::vector<ReferenceStep> reference_steps;  // empty in profiles fitted before they existed
  ProfileRange range;
  FitQuality fit;
  FittedRates rates;
  nlohmann::json environment = nlohmann::json::object();  // as the profiler recorded it
};

nlohmann::json profile_to_json(const CalibrationProfile& profile);
// `origin` prefixes error messages (the file name).
CalibrationProfile profile_from_json(const nlohmann::json& j, const std::string& origin);
CalibrationProfile load_profile(const std::string& path);
// Writes atomically (temporary file, then rename). Throws ConfigError when it cannot.
void save_profile(const CalibrationProfile& profile, const std::string& path);

}  // namespace servesim
