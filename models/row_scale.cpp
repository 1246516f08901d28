#include "models/row_scale.h"

#include <algorithm>
#include <cmath>

#include "models/config_error.h"

namespace servesim {

RowScale::RowScale(std::vector<RowFactor> points, const std::string& context)
    : points_(std::move(points)) {
  for (size_t i = 0; i < points_.size(); ++i) {
    const RowFactor& p = points_[i];
    if (!(p.rows > 0) || !std::isfinite(p.rows) || !(p.factor > 0) || !std::isfinite(p.factor)) {
      throw ConfigError(context + ": point " + std::to_string(i) +
                        " needs rows > 0 and factor > 0, both finite (re-run servesim calibrate "
                        "fit)");
    }
    if (i > 0 && !(p.rows > points_[i - 1].rows)) {
      throw ConfigError(context + ": rows must strictly increase (point " + std::to_string(i) +
                        "); re-run servesim calibrate fit");
    }
  }
}

double RowScale::at(double rows) const {
  if (points_.empty()) return 1.0;
  if (rows <= points_.front().rows) return points_.front().factor;
  if (rows >= points_.back().rows) return points_.back().factor;
  const auto hi = std::upper_bound(points_.begin(), points_.end(), rows,
                                   [](double r, const RowFactor& p) { return r < p.rows; });
  const RowFactor& b = *hi;
  const RowFactor& a = *(hi - 1);
  const double t = std::log(rows / a.rows) / std::log(b.rows / a.rows);
  return a.factor + t * (b.factor - a.factor);
}

}  // namespace servesim
