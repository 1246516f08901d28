#include "calibration/serving/bounded_least_squares.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "models/config_error.h"

namespace servesim {
namespace {

// Where a parameter lives on the real line: x = lo + (hi - lo) σ(u), on log x when log-scaled.
struct Coordinate {
  double lo, hi;
  bool log_scale;

  double to_x(double u) const {
    const double s = 1.0 / (1.0 + std::exp(-u));
    const double t = lo + (hi - lo) * s;
    return log_scale ? std::exp(t) : t;
  }
  double to_u(double x) const {
    const double t = log_scale ? std::log(x) : x;
    // Keep the start off the bounds, where σ is flat and the Jacobian would vanish.
    const double s = std::clamp((t - lo) / (hi - lo), 1e-3, 1.0 - 1e-3);
    return std::log(s / (1.0 - s));
  }
  bool near_bound(double x) const {
    const double t = log_scale ? std::log(x) : x;
    const double s = (t - lo) / (hi - lo);
    return s < 0.01 || s > 0.99;
  }
};

std::vector<Coordinate> coordinates_of(const std::vector<BoundedParameter>& parameters) {
  if (parameters.empty()) throw ConfigError("fit: no parameter to fit; name at least one");
  std::vector<Coordinate> out;
  for (const BoundedParameter& p : parameters) {
    if (!(p.lower < p.upper))
      throw ConfigError("fit: " + p.name + ": lower bound must be below the upper bound");
    if (p.log_scale && !(p.lower > 0))
      throw ConfigError("fit: " + p.name + ": a log-scaled parameter needs a lower bound > 0");
    if (p.log_scale)
      out.push_back({std::log(p.lower), std::log(p.upper), true});
    else
      out.push_back({p.lower, p.upper, false});
  }
  return out;
}

class Problem {
 public:
  Problem(std::vector<Coordinate> coords, const ResidualFunction& f) : coords_(coords), f_(f) {}

  std::vector<double> x_of(const Eigen::VectorXd& u) const {
    std::vector<double> x(coords_.size());
    for (size_t i = 0; i < x.size(); ++i) x[i] = coords_[i].to_x(u[i]);
    return x;
  }
  Eigen::VectorXd residuals(const Eigen::VectorXd& u) {
    const std::vector<double> r = f_(x_of(u));
    ++evaluations_;
    if (expected_ == 0) {
      if (r.size() < coords_.size())
        throw ConfigError("fit: " + std::to_string(r.size()) + " measured values for " +
                          std::to_string(coords_.size()) +
                          " parameters; supply more runs or fit fewer parameters");
      expected_ = r.size();
    }
    if (r.size() != expected_)
      throw ConfigError("fit: the residual count changed between evaluations (internal error)");
    Eigen::VectorXd out(static_cast<Eigen::Index>(r.size()));
    for (size_t i = 0; i < r.size(); ++i) {
      if (!std::isfinite(r[i])) throw ConfigError("fit: a residual is not finite (internal error)");
      out[static_cast<Eigen::Index>(i)] = r[i];
    }
    return out;
  }
  int evaluations() const { return evaluations_; }

 private:
  std::vector<Coordinate> coords_;
  const ResidualFunction& f_;
  size_t expected_ = 0;
  int evaluations_ = 0;
};

double cost_of(const Eigen::VectorXd& r) {
  return 0.5 * r.squaredNorm();
}

}  // namespace

LeastSquaresResult fit_bounded_least_squares(const std::vector<BoundedParameter>& parameters,
                                             const ResidualFunction& residuals,
                                             const LeastSquaresOptions& options) {
  const std::vector<Coordinate> coords = coordinates_of(parameters);
  Problem problem(coords, residuals);
  const auto n = static_cast<Eigen::Index>(coords.size());
  Eigen::VectorXd u(n);
  for (Eigen::Index i = 0; i < n; ++i) u[i] = coords[i].to_u(parameters[i].initial);

  Eigen::VectorXd r = problem.residuals(u);
  LeastSquaresResult result;
  result.initial_cost = cost_of(r);
  double cost = result.initial_cost;
  double lambda = 1e-2;
  Eigen::MatrixXd jacobian(r.size(), n);
  bool fresh_jacobian = false;
  while (result.iterations < options.max_iterations && cost > 0) {
    if (!fresh_jacobian) {
      for (Eigen::Index j = 0; j < n; ++j) {
        Eigen::VectorXd probe = u;
        probe[j] += options.difference_step;
        jacobian.col(j) = (problem.residuals(probe) - r) / options.difference_step;
      }
      fresh_jacobian = true;
    }
    ++result.iterations;
    const Eigen::MatrixXd normal = jacobian.transpose() * jacobian;
    Eigen::MatrixXd damped = normal;
    damped.diagonal() += lambda * (normal.diagonal().array() + 1e-9).matrix();
    const Eigen::VectorXd step = damped.ldlt().solve(-jacobian.transpose() * r);
    const Eigen::VectorXd trial_u = u + step;
    const Eigen::VectorXd trial_r = problem.residuals(trial_u);
    const double trial_cost = cost_of(trial_r);
    if (trial_cost < cost) {
      const double gain = (cost - trial_cost) / cost;
      u = trial_u;
      r = trial_r;
      cost = trial_cost;
      lambda = std::max(lambda / 3.0, 1e-6);
      fresh_jacobian = false;
      if (gain < options.relative_tolerance) break;
    } else {
      lambda *= 4.0;
    }
  }
  result.x = problem.x_of(u);
  result.cost = cost;
  result.evaluations = problem.evaluations();
  for (size_t i = 0; i < coords.size(); ++i)
    result.at_bound.push_back(coords[i].near_bound(result.x[i]));
  return result;
}

}  // namespace servesim
