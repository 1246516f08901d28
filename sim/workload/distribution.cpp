#include "sim/workload/distribution.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <numeric>

#include "models/config_error.h"
#include "models/json_object_reader.h"
#include "models/name_match.h"
#include "sim/core/csv_line.h"

namespace servesim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool is_whole(double v) {
  return std::isfinite(v) && v == std::floor(v);
}

std::vector<double> read_csv_column(const std::string& file, const std::string& column,
                                    const std::string& field_path) {
  std::ifstream in(file);
  if (!in) throw ConfigError(field_path + ".csv: cannot open '" + file + "'");
  std::string line;
  std::vector<std::string_view> fields;
  std::vector<std::string> scratch;
  if (!std::getline(in, line)) throw ConfigError(file + ": empty file, expected a header row");
  split_csv_line(line, fields, scratch);
  std::vector<std::string> names(fields.begin(), fields.end());
  const auto it = std::find(names.begin(), names.end(), column);
  if (it == names.end()) {
    throw ConfigError(field_path + ".column: '" + column + "' is not a column of " + file +
                      did_you_mean(column, names));
  }
  const size_t index = static_cast<size_t>(it - names.begin());
  std::vector<double> values;
  size_t line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (trim(line).empty()) continue;
    split_csv_line(line, fields, scratch);
    double v = 0.0;
    if (index >= fields.size() || !parse_double(fields[index], v) || !std::isfinite(v)) {
      const std::string got = index < fields.size() ? std::string(fields[index]) : "";
      throw ConfigError(file + ":" + std::to_string(line_no) + ": " + column +
                        ": expected a number, got '" + got + "'");
    }
    values.push_back(v);
  }
  if (values.empty()) throw ConfigError(file + ": no data rows");
  return values;
}

}  // namespace

Distribution Distribution::fixed(double value) {
  Distribution d;
  d.kind_ = Kind::kFixed;
  d.a_ = value;
  d.min_ = value;
  d.max_ = value;
  return d;
}

Distribution Distribution::from_json(const nlohmann::json& j, const std::string& path,
                                     const std::string& base_dir, double lower_bound,
                                     bool integer) {
  const std::string lower_text = format_number(lower_bound);
  auto check_value = [&](double v, const std::string& field) {
    if (!std::isfinite(v) || v < lower_bound) {
      throw ConfigError(path + "." + field + ": must be >= " + lower_text + ", got " +
                        format_number(v));
    }
    if (integer && !is_whole(v)) {
      throw ConfigError(path + "." + field + ": must be a whole number of tokens, got " +
                        format_number(v));
    }
  };
  if (j.is_number()) {
    const double v = j.get<double>();
    if (!std::isfinite(v) || v < lower_bound || (integer && !is_whole(v))) {
      throw ConfigError(path + ": must be " + (integer ? "a whole number " : "a number ") +
                        ">= " + lower_text + ", got " + j.dump());
    }
    return fixed(v);
  }
  if (!j.is_object()) {
    throw ConfigError(path + ": expected a number or an object with \"type\", got " + j.dump());
  }
  JsonObjectReader r(j, path);
  const std::string type = r.required<std::string>("type");
  Distribution d;
  d.integer_ = integer;
  auto read_bounds = [&] {
    d.min_ = r.optional<double>("min", lower_bound);
    d.max_ = r.optional<double>("max", kInf);
    check_value(d.min_, "min");
    if (!(d.max_ >= d.min_)) {
      throw ConfigError(path + ".max: must be >= min (" + format_number(d.min_) + "), got " +
                        format_number(d.max_));
    }
  };
  auto positive = [&](const char* key) {
    const double v = r.required<double>(key);
    if (!(v > 0.0) || !std::isfinite(v)) {
      throw ConfigError(path + "." + key + ": must be > 0, got " + format_number(v));
    }
    return v;
  };
  if (type == "fixed") {
    d = fixed(r.required<double>("value"));
    d.integer_ = integer;
    check_value(d.a_, "value");
  } else if (type == "uniform") {
    d.kind_ = Kind::kUniform;
    d.a_ = r.required<double>("min");
    d.b_ = r.required<double>("max");
    check_value(d.a_, "min");
    check_value(d.b_, "max");
    if (d.b_ < d.a_) {
      throw ConfigError(path + ".max: must be >= min (" + format_number(d.a_) + "), got " +
                        format_number(d.b_));
    }
    d.min_ = d.a_;
    d.max_ = d.b_;
  } else if (type == "normal") {
    d.kind_ = Kind::kNormal;
    d.a_ = r.required<double>("mean");
    d.b_ = r.required<double>("std");
    if (!(d.b_ >= 0.0)) throw ConfigError(path + ".std: must be >= 0, got " + format_number(d.b_));
    read_bounds();
  } else if (type == "lognormal") {
    d.kind_ = Kind::kLognormal;
    const bool by_moments = r.has("mean") || r.has("std");
    const bool by_params = r.has("mu") || r.has("sigma");
    if (by_moments == by_params) {
      throw ConfigError(path +
                        ": give either mean and std (of the lengths) or mu and sigma "
                        "(of the underlying normal), not " +
                        std::string(by_moments ? "both" : "neither"));
    }
    if (by_moments) {
      const double mean = positive("mean");
      const double std = r.required<double>("std");
      if (!(std >= 0.0)) throw ConfigError(path + ".std: must be >= 0, got " + format_number(std));
      // Moments of exp(N(mu, sigma^2)): mean = e^(mu + sigma^2/2), var = mean^2 (e^sigma^2 - 1).
      const double sigma2 = std::log1p((std / mean) * (std / mean));
      // A std beyond ~1e154 times the mean leaves sigma infinite and mu -inf: every draw NaN.
      if (!std::isfinite(sigma2)) {
        throw ConfigError(path + ".std: " + format_number(std) + " is too large for a mean of " +
                          format_number(mean) +
                          " (the lognormal's sigma would be infinite); give a std at most 1e150 "
                          "times the mean");
      }
      d.a_ = std::log(mean) - sigma2 / 2.0;
      d.b_ = std::sqrt(sigma2);
    } else {
      d.a_ = r.required<double>("mu");
      d.b_ = r.required<double>("sigma");
      if (!(d.b_ >= 0.0) || !std::isfinite(d.b_)) {
        throw ConfigError(path + ".sigma: must be >= 0 and finite, got " + format_number(d.b_));
      }
    }
    read_bounds();
  } else if (type == "exponential") {
    d.kind_ = Kind::kExponential;
    d.a_ = positive("mean");
    read_bounds();
  } else if (type == "empirical") {
    d.kind_ = Kind::kEmpirical;
    std::vector<double> values;
    if (r.has("values") == r.has("csv")) {
      throw ConfigError(path + ": give either \"csv\" (with \"column\") or \"values\"");
    }
    if (r.has("values")) {
      const nlohmann::json& list = r.raw("values");
      if (!list.is_array() || list.empty()) {
        throw ConfigError(path + ".values: expected a non-empty array of numbers");
      }
      for (const auto& v : list) {
        if (!v.is_number()) {
          throw ConfigError(path + ".values: expected numbers, got " + v.dump());
        }
        values.push_back(v.get<double>());
      }
    } else {
      const std::string file = resolve_path(r.required<std::string>("csv"), base_dir);
      values = read_csv_column(file, r.required<std::string>("column"), path);
    }
    for (double v : values) {
      if (!(v >= lower_bound) || !std::isfinite(v)) {
        throw ConfigError(path + ": empirical value " + format_number(v) + " is below " +
                          lower_text);
      }
    }
    d.min_ = *std::min_element(values.begin(), values.end());
    d.max_ = *std::max_element(values.begin(), values.end());
    d.values_ = std::make_shared<const std::vector<double>>(std::move(values));
  } else {
    throw ConfigError(path + ".type: unknown distribution '" + type + "'" +
                      did_you_mean(type, {"fixed", "uniform", "normal", "lognormal", "exponential",
                                          "empirical"}));
  }
  r.finish();
  return d;
}

double Distribution::sample(Rng& rng) const {
  switch (kind_) {
    case Kind::kFixed:
      return a_;
    case Kind::kUniform:
      if (integer_) {
        return static_cast<double>(
            rng.uniform_int(static_cast<int64_t>(a_), static_cast<int64_t>(b_)));
      }
      return a_ + (b_ - a_) * rng.uniform();
    case Kind::kNormal:
      return std::clamp(rng.normal(a_, b_), min_, max_);
    case Kind::kLognormal:
      return std::clamp(rng.lognormal(a_, b_), min_, max_);
    case Kind::kExponential:
      return std::clamp(rng.exponential(1.0 / a_), min_, max_);
    case Kind::kEmpirical: {
      const auto& v = *values_;
      return v[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(v.size()) - 1))];
    }
  }
  return a_;
}

double Distribution::mean() const {
  switch (kind_) {
    case Kind::kFixed:
      return a_;
    case Kind::kUniform:
      return (a_ + b_) / 2.0;
    case Kind::kNormal:
      return a_;
    case Kind::kLognormal:
      return std::exp(a_ + b_ * b_ / 2.0);
    case Kind::kExponential:
      return a_;
    case Kind::kEmpirical:
      return std::accumulate(values_->begin(), values_->end(), 0.0) / values_->size();
  }
  return a_;
}

Distribution Distribution::scaled(double factor) const {
  Distribution out = *this;
  out.min_ *= factor;
  out.max_ *= factor;
  switch (kind_) {
    case Kind::kLognormal:
      out.a_ += std::log(factor);  // mu: the underlying normal shifts, sigma stays
      break;
    case Kind::kUniform:
    case Kind::kNormal:
      out.a_ *= factor;
      out.b_ *= factor;
      break;
    case Kind::kFixed:
    case Kind::kExponential:
      out.a_ *= factor;
      break;
    case Kind::kEmpirical: {
      auto values = std::make_shared<std::vector<double>>(*values_);
      for (double& v : *values) v *= factor;
      out.values_ = std::move(values);
      break;
    }
  }
  return out;
}

}  // namespace servesim
