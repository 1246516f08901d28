#include "models/calibration_profile.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "models/config_error.h"
#include "models/cost_features.h"
#include "models/json_file.h"
#include "models/json_object_reader.h"

namespace servesim {
namespace {

nlohmann::json quality_json(const OpFitQuality& q) {
  return {{"mape", q.mape}, {"r2", q.r2}};
}

OpFitQuality read_quality(const nlohmann::json& j, const std::string& context) {
  JsonObjectReader r(j, context);
  OpFitQuality q{r.required<double>("mape"), r.required<double>("r2")};
  r.finish();
  return q;
}

int64_t positive_int64(JsonObjectReader& r, const std::string& key) {
  const int64_t v = r.required<int64_t>(key);
  if (v <= 0) r.fail(key, "must be > 0, got " + std::to_string(v));
  return v;
}

}  // namespace

nlohmann::json profile_to_json(const CalibrationProfile& p) {
  nlohmann::json ops = nlohmann::json::object();
  nlohmann::json op_quality = nlohmann::json::object();
  for (Op op : kAllOps) {
    const auto names = op_feature_names(op);
    if (names.empty()) continue;
    const auto& c = p.coefficients[static_cast<size_t>(op)];
    nlohmann::json coeffs = nlohmann::json::object();
    for (size_t i = 0; i < names.size(); ++i) {
      coeffs[std::string(names[i])] = i < c.size() ? c[i] : 0.0;
    }
    ops[std::string(op_name(op))] = coeffs;
    op_quality[std::string(op_name(op))] = quality_json(p.fit.ops[static_cast<size_t>(op)]);
  }
  nlohmann::json row_scale = nlohmann::json::object();
  for (Op op : kAllOps) {
    const RowScale& scale = p.row_scales[static_cast<size_t>(op)];
    if (scale.empty()) continue;
    nlohmann::json points = nlohmann::json::array();
    for (const RowFactor& f : scale.points()) points.push_back({f.rows, f.factor});
    row_scale[std::string(op_name(op))] = points;
  }
  nlohmann::json reference = nlohmann::json::array();
  for (const ReferenceStep& step : p.reference_steps) {
    nlohmann::json seqs = nlohmann::json::array();
    for (const ShapeSequence& q : step.seqs) seqs.push_back({q.new_tokens, q.context, q.prefill});
    reference.push_back({{"seqs", seqs}, {"step_s", step.step_s}});
  }
  return {
      {"servesim_profile", kProfileFormatVersion},
      {"model", p.model},
      {"backend", p.backend},
      {"device", p.device},
      {"threads", p.threads},
      {"weight_dtype", std::string(dtype_name(p.weight_dtype))},
      {"kv_dtype", std::string(dtype_name(p.kv_dtype))},
      {"seconds_per_unit", ops},
      {"row_scale", row_scale},
      {"reference_steps", reference},
      {"range",
       {{"max_tokens", p.range.max_tokens},
        {"max_seqs", p.range.max_seqs},
        {"max_context", p.range.max_context}}},
      {"fit",
       {{"samples", p.fit.samples},
        {"shapes", p.fit.shapes},
        {"folds", p.fit.folds},
        {"step", quality_json(p.fit.step)},
        {"ops", op_quality}}},
      {"rates",
       {{"gemm_flops_per_s", p.rates.gemm_flops_per_s},
        {"weight_bytes_per_s", p.rates.weight_bytes_per_s},
        {"kv_bytes_per_s", p.rates.kv_bytes_per_s},
        {"measured_gemm_flops_per_s", p.rates.measured_gemm_flops_per_s},
        {"measured_bytes_per_s", p.rates.measured_bytes_per_s}}},
      {"environment", p.environment},
  };
}

CalibrationProfile profile_from_json(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw ConfigError(origin + ": a profile must be a JSON object");
  JsonObjectReader r(j, origin);
  const int version = r.required<int>("servesim_profile");
  if (version != kProfileFormatVersion) {
    r.fail("servesim_profile", "is format " + std::to_string(version) + ", this servesim reads " +
                                   std::to_string(kProfileFormatVersion) +
                                   " (re-run servesim calibrate fit)");
  }
  CalibrationProfile p;
  p.model = r.required<std::string>("model");
  p.backend = r.required<std::string>("backend");
  if (p.backend != "cpu" && p.backend != "cuda") {
    r.fail("backend", "must be \"cpu\" or \"cuda\", got \"" + p.backend + "\"");
  }
  p.device = r.required<std::string>("device");
  p.threads = r.positive_int("threads");
  p.weight_dtype = parse_dtype(r.required<std::string>("weight_dtype"), origin + ": weight_dtype");
  p.kv_dtype = parse_dtype(r.required<std::string>("kv_dtype"), origin + ": kv_dtype");

  const nlohmann::json& ops = r.raw("seconds_per_unit");
  if (!ops.is_object()) r.fail("seconds_per_unit", "must be an object of ops");
  JsonObjectReader ops_reader(ops, origin + ": seconds_per_unit");
  for (Op op : kAllOps) {
    const auto names = op_feature_names(op);
    if (names.empty()) continue;
    const std::string name(op_name(op));
    if (!ops_reader.has(name)) ops_reader.fail(name, "is required (re-run servesim calibrate fit)");
    JsonObjectReader op_reader(ops_reader.raw(name), origin + ": seconds_per_unit." + name);
    auto& c = p.coefficients[static_cast<size_t>(op)];
    for (std::string_view feature : names) {
      const double v = op_reader.required<double>(std::string(feature));
      if (!(v >= 0) || !std::isfinite(v)) {
        op_reader.fail(std::string(feature), "must be a finite number >= 0");
      }
      c.push_back(v);
    }
    op_reader.finish();
  }
  ops_reader.finish();

  // Optional: profiles fitted before row scales existed, or without one, predict linearly.
  if (const nlohmann::json& scales = r.raw("row_scale"); !scales.is_null()) {
    const std::string context = origin + ": row_scale";
    if (!scales.is_object()) r.fail("row_scale", "must be an object of GEMM ops");
    JsonObjectReader scale_reader(scales, context);
    for (Op op : kAllOps) {
      const std::string name(op_name(op));
      if (!scale_reader.has(name)) continue;
      if (!is_gemm_op(op)) {
        scale_reader.fail(name, "is not a GEMM op; only qkv, o_proj, mlp and lm_head have one");
      }
      const nlohmann::json& points = scale_reader.raw(name);
      std::vector<RowFactor> factors;
      bool ok = points.is_array();
      for (size_t i = 0; ok && i < points.size(); ++i) {
        const nlohmann::json& pt = points[i];
        ok = pt.is_array() && pt.size() == 2 && pt[0].is_number() && pt[1].is_number();
        if (ok) factors.push_back({pt[0].get<double>(), pt[1].get<double>()});
      }
      if (!ok) scale_reader.fail(name, "must be a list of [rows, factor] pairs");
      p.row_scales[static_cast<size_t>(op)] = RowScale(std::move(factors), context + "." + name);
    }
    scale_reader.finish();
  }

  if (const nlohmann::json& reference = r.raw("reference_steps"); !reference.is_null()) {
    if (!reference.is_array()) r.fail("reference_steps", "must be a list");
    for (size_t i = 0; i < reference.size(); ++i) {
      const std::string context = origin + ": reference_steps[" + std::to_string(i) + "]";
      if (!reference[i].is_object()) throw ConfigError(context + " must be an object");
      JsonObjectReader step_reader(reference[i], context);
      ReferenceStep step;
      step.step_s = step_reader.required<double>("step_s");
      if (!(step.step_s > 0) || !std::isfinite(step.step_s)) {
        step_reader.fail("step_s", "must be a finite number of seconds > 0");
      }
      const nlohmann::json& seqs = step_reader.raw("seqs");
      bool ok = seqs.is_array() && !seqs.empty();
      for (size_t k = 0; ok && k < seqs.size(); ++k) {
        const nlohmann::json& q = seqs[k];
        ok = q.is_array() && q.size() == 3 && q[0].is_number_integer() &&
             q[1].is_number_integer() && q[2].is_boolean() && q[0].get<int64_t>() >= 1 &&
             q[1].get<int64_t>() >= 0 && q[0].get<int64_t>() <= (1 << 24) &&
             q[1].get<int64_t>() <= (1 << 24);
        if (ok) step.seqs.push_back({q[0].get<int>(), q[1].get<int>(), q[2].get<bool>()});
      }
      if (!ok) {
        step_reader.fail("seqs",
                         "must be a non-empty list of [new_tokens >= 1, context >= 0, "
                         "prefill] triples");
      }
      step_reader.finish();
      p.reference_steps.push_back(std::move(step));
    }
  }

  JsonObjectReader range(r.raw("range"), origin + ": range");
  p.range.max_tokens = positive_int64(range, "max_tokens");
  p.range.max_seqs = positive_int64(range, "max_seqs");
  p.range.max_context = positive_int64(range, "max_context");
  range.finish();

  JsonObjectReader fit(r.raw("fit"), origin + ": fit");
  p.fit.samples = fit.required<int>("samples");
  p.fit.shapes = fit.required<int>("shapes");
  p.fit.folds = fit.required<int>("folds");
  p.fit.step = read_quality(fit.raw("step"), origin + ": fit.step");
  JsonObjectReader op_quality(fit.raw("ops"), origin + ": fit.ops");
  for (Op op : kAllOps) {
    const std::string name(op_name(op));
    if (op_quality.has(name)) {
      p.fit.ops[static_cast<size_t>(op)] =
          read_quality(op_quality.raw(name), origin + ": fit.ops." + name);
    }
  }
  op_quality.finish();
  fit.finish();

  JsonObjectReader rates(r.raw("rates"), origin + ": rates");
  p.rates.gemm_flops_per_s = rates.required<double>("gemm_flops_per_s");
  p.rates.weight_bytes_per_s = rates.required<double>("weight_bytes_per_s");
  p.rates.kv_bytes_per_s = rates.required<double>("kv_bytes_per_s");
  p.rates.measured_gemm_flops_per_s = rates.optional<double>("measured_gemm_flops_per_s", 0.0);
  p.rates.measured_bytes_per_s = rates.optional<double>("measured_bytes_per_s", 0.0);
  rates.finish();

  const nlohmann::json& env = r.raw("environment");
  p.environment = env.is_null() ? nlohmann::json::object() : env;
  r.finish();
  return p;
}

CalibrationProfile load_profile(const std::string& path) {
  return profile_from_json(load_json_file(path), path);
}

void save_profile(const CalibrationProfile& profile, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const fs::path tmp = fs::path(path + ".tmp");
  {
    std::ofstream out(tmp);
    out << profile_to_json(profile).dump(2) << '\n';
    if (!out) throw ConfigError(path + ": cannot write the profile (check the folder exists)");
  }
  fs::rename(tmp, target, ec);
  if (ec) throw ConfigError(path + ": cannot write the profile: " + ec.message());
}

}  // namespace servesim
