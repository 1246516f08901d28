#include "sim/workload/arrival_process.h"

#include <cmath>
#include <string>

#include "models/config_error.h"
#include "models/json_object_reader.h"
#include "models/name_match.h"
#include "sim/core/csv_line.h"

namespace servesim {

namespace {

void require_positive(double value, const std::string& field) {
  if (!(value > 0.0) || !std::isfinite(value)) {
    throw ConfigError(field + ": must be a positive number, got " + format_number(value));
  }
}

}  // namespace

ArrivalProcess ArrivalProcess::poisson(double rate_qps) {
  require_positive(rate_qps, "arrival.rate_qps");
  ArrivalProcess p;
  p.kind_ = Kind::kPoisson;
  p.rate_qps_ = rate_qps;
  return p;
}

ArrivalProcess ArrivalProcess::gamma(double rate_qps, double cv) {
  require_positive(rate_qps, "arrival.rate_qps");
  require_positive(cv, "arrival.cv");
  ArrivalProcess p;
  p.kind_ = Kind::kGamma;
  p.rate_qps_ = rate_qps;
  p.cv_ = cv;
  return p;
}

ArrivalProcess ArrivalProcess::constant(double rate_qps) {
  require_positive(rate_qps, "arrival.rate_qps");
  ArrivalProcess p;
  p.kind_ = Kind::kConstant;
  p.rate_qps_ = rate_qps;
  return p;
}

ArrivalProcess ArrivalProcess::on_off(double rate_qps, double on_s, double off_s) {
  require_positive(rate_qps, "arrival.rate_qps");
  require_positive(on_s, "arrival.on_s");
  if (!(off_s >= 0.0) || !std::isfinite(off_s)) {
    throw ConfigError("arrival.off_s: must be >= 0, got " + format_number(off_s));
  }
  ArrivalProcess p;
  p.kind_ = Kind::kOnOff;
  p.rate_qps_ = rate_qps;
  p.on_s_ = on_s;
  p.off_s_ = off_s;
  return p;
}

ArrivalProcess ArrivalProcess::from_json(const nlohmann::json& j, const std::string& path) {
  JsonObjectReader r(j, path);
  const std::string type = r.required<std::string>("type");
  ArrivalProcess p;
  try {
    if (type == "poisson") {
      p = poisson(r.required<double>("rate_qps"));
    } else if (type == "gamma") {
      p = gamma(r.required<double>("rate_qps"), r.required<double>("cv"));
    } else if (type == "constant") {
      p = constant(r.required<double>("rate_qps"));
    } else if (type == "onoff") {
      p = on_off(r.required<double>("rate_qps"), r.required<double>("on_s"),
                 r.required<double>("off_s"));
    } else {
      throw ConfigError(
          path + ".type: unknown arrival process '" + type + "'" +
          did_you_mean(type, {"poisson", "gamma", "constant", "onoff", "closed", "stepped"}));
    }
  } catch (const ConfigError& e) {
    // The factories name fields as "arrival.x"; give the full path instead.
    const std::string message = e.what();
    if (message.rfind("arrival.", 0) == 0) {
      throw ConfigError(path + message.substr(std::string("arrival").size()));
    }
    throw;
  }
  r.finish();
  return p;
}

double ArrivalProcess::next_arrival_s(Rng& rng) {
  switch (kind_) {
    case Kind::kPoisson:
      clock_s_ += rng.exponential(rate_qps_);
      return clock_s_;
    case Kind::kGamma: {
      const double shape = 1.0 / (cv_ * cv_);
      clock_s_ += rng.gamma(shape, 1.0 / (rate_qps_ * shape));
      return clock_s_;
    }
    case Kind::kConstant:
      if (started_) clock_s_ += 1.0 / rate_qps_;
      started_ = true;
      return clock_s_;
    case Kind::kOnOff: {
      // clock_s_ counts "on" time only; map it onto the on/off cycle.
      clock_s_ += rng.exponential(rate_qps_);
      const double cycles = std::floor(clock_s_ / on_s_);
      return cycles * (on_s_ + off_s_) + (clock_s_ - cycles * on_s_);
    }
  }
  return clock_s_;
}

double ArrivalProcess::mean_rate_qps() const {
  if (kind_ == Kind::kOnOff) return rate_qps_ * on_s_ / (on_s_ + off_s_);
  return rate_qps_;
}

}  // namespace servesim
