// fit_bounded_least_squares: minimises ½ Σ r_i(x)² over a few box-bounded parameters whose
// residuals come from a black box (here: whole simulations), by Levenberg–Marquardt with a
// forward-difference Jacobian. Each parameter is searched in an unbounded coordinate u with
// x = lower + (upper - lower) · σ(u) (σ the logistic function; in log x for log-scaled
// parameters), so every evaluated point is strictly inside its bounds and the solver needs no
// projection. A parameter that the data push to a bound ends near it and is reported so.
//
// Determinism: the result depends only on the inputs and the residual function (no random
// starts). The residual function must return the same number of residuals at every point.
// Stateless; thread-safe if the residual function is.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace servesim {

struct BoundedParameter {
  std::string name;
  double initial = 0;  // REQUIRES: lower < initial < upper (moved inside when on a bound)
  double lower = 0;
  double upper = 1;
  bool log_scale = false;  // search in log x (REQUIRES: lower > 0); for quantities spanning decades
};

struct LeastSquaresOptions {
  int max_iterations = 12;        // accepted or rejected Levenberg–Marquardt steps
  double difference_step = 0.05;  // in u: the forward-difference step of the Jacobian
  // Stop when an accepted step lowers the cost by less than this fraction.
  double relative_tolerance = 1e-3;
};

struct LeastSquaresResult {
  std::vector<double> x;       // the fitted parameters, in their own units
  double initial_cost = 0;     // ½ Σ r² at the initial point
  double cost = 0;             // ½ Σ r² at x
  int iterations = 0;          // Levenberg–Marquardt steps tried
  int evaluations = 0;         // calls of the residual function
  std::vector<bool> at_bound;  // per parameter: within 1% of its range from a bound
};

using ResidualFunction = std::function<std::vector<double>(const std::vector<double>& x)>;

// Throws ConfigError for an empty parameter list, bounds that are not ordered, a log-scaled
// parameter with lower <= 0, residual vectors that change length or are not finite, and
// fewer residuals than parameters (the fit would be underdetermined).
LeastSquaresResult fit_bounded_least_squares(const std::vector<BoundedParameter>& parameters,
                                             const ResidualFunction& residuals,
                                             const LeastSquaresOptions& options = {});

}  // namespace servesim
