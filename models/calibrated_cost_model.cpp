#include "models/calibrated_cost_model.h"

#include "models/config_error.h"
#include "models/model_spec.h"
#include "models/parallel_config.h"

namespace servesim {

CalibratedCostModel::CalibratedCostModel(const CalibrationProfile& profile, const ModelSpec& model,
                                         const ParallelConfig& parallel, CalibratedOptions options)
    : profile_(profile),
      features_(model, profile.weight_dtype, profile.kv_dtype),
      options_(options),
      transferred_(model.name != profile.model) {
  if (transferred_ && !options.transfer) {
    throw ConfigError("cost_model.profile: profiled on " + profile.model + ", the scenario runs " +
                      model.name + "; run `servesim calibrate profile --model " + model.name +
                      "`, or set cost_model.transfer=true to predict it from the fitted rates");
  }
  if (parallel.tp != 1 || parallel.pp != 1) {
    throw ConfigError(
        "cost_model.profile: a calibrated profile covers one device, the scenario uses tp=" +
        std::to_string(parallel.tp) + " pp=" + std::to_string(parallel.pp) +
        "; set parallel.tp=1 and parallel.pp=1, or use the roofline cost model");
  }
}

std::string CalibratedCostModel::out_of_range(const BatchShape& s) const {
  const ProfileRange& r = profile_.range;
  auto beyond = [](double value, int64_t max) { return value > kProfileRangeSlack * max; };
  if (beyond(s.num_tokens, r.max_tokens)) {
    return std::to_string(s.num_tokens) + " tokens in a step (profiled up to " +
           std::to_string(r.max_tokens) + ")";
  }
  if (beyond(s.num_seqs, r.max_seqs)) {
    return std::to_string(s.num_seqs) + " sequences in a step (profiled up to " +
           std::to_string(r.max_seqs) + ")";
  }
  if (s.num_decode_seqs > 0) {
    const double mean = static_cast<double>(s.decode_context_tokens) / s.num_decode_seqs;
    if (beyond(mean, r.max_context)) {
      return "decode context of " + std::to_string(static_cast<int64_t>(mean)) +
             " tokens (profiled up to " + std::to_string(r.max_context) + ")";
    }
  }
  if (s.num_prefill_seqs > 0) {
    const double mean = static_cast<double>(s.prefill_kv_tokens) / s.num_prefill_seqs;
    if (beyond(mean, r.max_context)) {
      return "prefill context of " + std::to_string(static_cast<int64_t>(mean)) +
             " tokens (profiled up to " + std::to_string(r.max_context) + ")";
    }
  }
  return {};
}

StepTime CalibratedCostModel::predict(const BatchShape& shape) const {
  StepTime t;
  if (const std::string why = out_of_range(shape); !why.empty()) {
    if (!options_.extrapolate) {
      throw ConfigError("cost_model: a step with " + why +
                        " is beyond the calibrated profile's range; re-run `servesim calibrate "
                        "profile` with larger --max-tokens/--max-seqs/--max-context, or set "
                        "cost_model.extrapolate=true");
    }
    t.extrapolated = true;
  }
  for (size_t i = 0; i < kNumOps; ++i) {
    const auto& c = profile_.coefficients[i];
    if (c.empty()) continue;
    const OpFeatureValues f = features_.features(static_cast<Op>(i), shape);
    double s = 0;
    for (size_t k = 0; k < f.size && k < c.size(); ++k) s += c[k] * f.values[k];
    const RowScale& scale = profile_.row_scales[i];
    if (!scale.empty()) s *= scale.at(gemm_rows(static_cast<Op>(i), shape));
    t.op_s[i] = s;
    t.total_s += s;
  }
  return t;
}

}  // namespace servesim
