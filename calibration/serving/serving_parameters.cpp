#include "calibration/serving/serving_parameters.h"

#include <algorithm>

#include "models/config_error.h"
#include "models/roofline_cost_model.h"

namespace servesim {
namespace {

struct Box {
  std::string_view name;
  double lower, upper;
  bool log_scale;
  bool by_default;  // fitted when --fit names nothing
};

// Bounds wide enough for any GPU and host servesim knows, narrow enough to stay physical: no
// kernel beats its peak; below 10% of compute or 20% of bandwidth a deployment is broken, not
// slow. Host costs span decades (a fast C++ loop to a loaded Python one), hence log scale; so
// does a round trip (a loopback client to another continent). The round trip is fitted only
// when named: where the runs' TTFT residual is not one fixed time, it trades with the
// frontend's costs (docs/calibrate-serving.md, the B200 example).
constexpr Box kBoxes[] = {
    {"compute_efficiency", 0.1, 1.0, false, true}, {"memory_efficiency", 0.2, 1.0, false, true},
    {"step_overhead_s", 1e-5, 20e-3, true, true},  {"seq_overhead_s", 1e-6, 500e-6, true, true},
    {"frontend_scale", 0.1, 10.0, true, true},     {"rtt_s", 1e-4, 1.0, true, false},
};

// A round trip's search starts at 1 ms at least: below it no TTFT moves measurably, so a search
// from 0 (the default) would find no slope to follow.
constexpr double kRttSearchStartS = 1e-3;

const Box& box_of(std::string_view name) {
  for (const Box& b : kBoxes)
    if (b.name == name) return b;
  std::string known;
  for (const Box& b : kBoxes) known += (known.empty() ? "" : ", ") + std::string(b.name);
  throw ConfigError("--fit: unknown parameter '" + std::string(name) + "' (known: " + known + ")");
}

double& slot(ServingParameters& p, std::string_view name) {
  if (name == "compute_efficiency") return p.compute_efficiency;
  if (name == "memory_efficiency") return p.memory_efficiency;
  if (name == "step_overhead_s") return p.step_overhead_s;
  if (name == "seq_overhead_s") return p.seq_overhead_s;
  if (name == "rtt_s") return p.rtt_s;
  box_of(name);  // throws for an unknown name
  return p.frontend_scale;
}

}  // namespace

const std::vector<std::string_view>& serving_parameter_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const Box& b : kBoxes) out.push_back(b.name);
    return out;
  }();
  return names;
}

ServingStage serving_parameter_stage(std::string_view name) {
  box_of(name);  // throws for an unknown name
  return name == "compute_efficiency" || name == "frontend_scale" || name == "rtt_s"
             ? ServingStage::kPrefill
             : ServingStage::kDecode;
}

ServingParameters serving_parameters_of(const SimulationConfig& config) {
  const RooflineOptions& r = config.roofline;
  ServingParameters p;
  p.compute_efficiency = r.compute_efficiency.value_or(config.gpu.compute_efficiency);
  p.memory_efficiency = r.memory_efficiency.value_or(config.gpu.memory_efficiency);
  p.step_overhead_s = r.step_overhead_s.value_or(kStepOverheadS);
  p.seq_overhead_s = r.seq_overhead_s.value_or(kSeqOverheadS);
  p.frontend_scale = 1;
  p.rtt_s = config.service.enabled ? config.service.rtt_s.mean() : 0;
  return p;
}

SimulationConfig with_serving_parameters(const SimulationConfig& base, const ServingParameters& p) {
  SimulationConfig c = base;
  c.roofline.compute_efficiency = p.compute_efficiency;
  c.roofline.memory_efficiency = p.memory_efficiency;
  c.roofline.step_overhead_s = p.step_overhead_s;
  c.roofline.seq_overhead_s = p.seq_overhead_s;
  if (c.service.enabled && p.frontend_scale != 1) {
    FrontendSpec& f = c.service.frontend;
    f.station.request_s = f.station.request_s.scaled(p.frontend_scale);
    f.station.per_prompt_token_s *= p.frontend_scale;
    f.step_s = f.step_s.scaled(p.frontend_scale);
    f.per_output_token_s *= p.frontend_scale;
  }
  if (c.service.enabled && p.rtt_s != base.service.rtt_s.mean())
    c.service.rtt_s = Distribution::fixed(p.rtt_s);
  return c;
}

bool serving_parameter_by_default(std::string_view name) {
  return box_of(name).by_default;
}

bool serving_parameter_applies(std::string_view name, const SimulationConfig& base) {
  box_of(name);  // throws for an unknown name
  if (name == "frontend_scale") return base.service.enabled;
  if (name == "rtt_s")
    return base.service.enabled && base.service.rtt_s.kind() == Distribution::Kind::kFixed;
  return true;
}

std::vector<BoundedParameter> serving_search_space(const std::vector<std::string>& names,
                                                   const ServingParameters& initial,
                                                   const SimulationConfig& base) {
  std::vector<BoundedParameter> out;
  for (const std::string& name : names) {
    const Box& b = box_of(name);
    if (std::any_of(out.begin(), out.end(), [&](const auto& p) { return p.name == name; }))
      throw ConfigError("--fit: '" + name + "' is named twice");
    if ((name == "frontend_scale" || name == "rtt_s") && !base.service.enabled)
      throw ConfigError("--fit: " + name +
                        " needs the service path; the scenario has \"service\": \"none\" (drop " +
                        name + " from --fit, or remove \"service\": \"none\")");
    if (!serving_parameter_applies(name, base))
      throw ConfigError(
          "--fit: rtt_s fits one fixed round trip, and the scenario's service.network.rtt_s is a "
          "distribution (drop rtt_s from --fit, or make service.network.rtt_s a number)");
    double x0 = std::clamp(serving_parameter_value(initial, name), b.lower, b.upper);
    if (name == "rtt_s") x0 = std::max(x0, kRttSearchStartS);
    out.push_back({name, x0, b.lower, b.upper, b.log_scale});
  }
  return out;
}

ServingParameters serving_parameters_from(const std::vector<std::string>& names,
                                          const std::vector<double>& x, ServingParameters p) {
  for (size_t i = 0; i < names.size() && i < x.size(); ++i) slot(p, names[i]) = x[i];
  return p;
}

double serving_parameter_value(const ServingParameters& p, std::string_view name) {
  ServingParameters copy = p;
  return slot(copy, name);
}

}  // namespace servesim
