#include "calibration/serving/bounded_least_squares.h"

#include <gtest/gtest.h>

#include <cmath>

#include "models/config_error.h"

namespace servesim {
namespace {

// y = a * exp(-b t) sampled at t = 0..9: a classic nonlinear fit with a known answer.
std::vector<double> decay_residuals(const std::vector<double>& x, double a, double b) {
  std::vector<double> r;
  for (int t = 0; t < 10; ++t) r.push_back(x[0] * std::exp(-x[1] * t) - a * std::exp(-b * t));
  return r;
}

TEST(BoundedLeastSquares, RecoversAKnownDecay) {
  const std::vector<BoundedParameter> space = {{"a", 1.0, 0.1, 10.0, true},
                                               {"b", 0.5, 0.01, 2.0, false}};
  LeastSquaresOptions options;
  options.max_iterations = 60;
  options.relative_tolerance = 1e-12;
  const LeastSquaresResult r = fit_bounded_least_squares(
      space, [](const std::vector<double>& x) { return decay_residuals(x, 3.0, 0.2); }, options);
  EXPECT_NEAR(r.x[0], 3.0, 1e-3);
  EXPECT_NEAR(r.x[1], 0.2, 1e-4);
  EXPECT_LT(r.cost, 1e-8);
  EXPECT_GT(r.initial_cost, r.cost);
  EXPECT_FALSE(r.at_bound[0]);
  EXPECT_FALSE(r.at_bound[1]);
  EXPECT_GE(r.evaluations, r.iterations);
}

TEST(BoundedLeastSquares, AnOptimumOutsideTheBoxEndsAtTheBoundAndSaysSo) {
  // The best a is 5, but a may not exceed 2.
  const std::vector<BoundedParameter> space = {{"a", 1.0, 0.5, 2.0, false}};
  LeastSquaresOptions options;
  options.max_iterations = 40;
  options.relative_tolerance = 1e-9;
  const LeastSquaresResult r = fit_bounded_least_squares(
      space, [](const std::vector<double>& x) { return std::vector<double>{x[0] - 5.0}; }, options);
  EXPECT_LE(r.x[0], 2.0);
  EXPECT_GT(r.x[0], 1.97);
  EXPECT_TRUE(r.at_bound[0]);
}

TEST(BoundedLeastSquares, IsDeterministic) {
  const std::vector<BoundedParameter> space = {{"a", 1.0, 0.1, 10.0, true},
                                               {"b", 0.5, 0.01, 2.0, false}};
  auto f = [](const std::vector<double>& x) { return decay_residuals(x, 2.0, 0.3); };
  const LeastSquaresResult a = fit_bounded_least_squares(space, f);
  const LeastSquaresResult b = fit_bounded_least_squares(space, f);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.evaluations, b.evaluations);
}

TEST(BoundedLeastSquares, RefusesWhatCannotBeFitted) {
  auto one = [](const std::vector<double>& x) { return std::vector<double>{x[0]}; };
  EXPECT_THROW(fit_bounded_least_squares({}, one), ConfigError);
  EXPECT_THROW(fit_bounded_least_squares({{"a", 1, 2, 1, false}}, one), ConfigError);
  EXPECT_THROW(fit_bounded_least_squares({{"a", 1, 0, 2, true}}, one), ConfigError);
  try {
    fit_bounded_least_squares({{"a", 1, 0, 2, false}, {"b", 1, 0, 2, false}}, one);
    FAIL() << "two parameters from one residual must be refused";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("fewer parameters"), std::string::npos) << e.what();
  }
  auto nan = [](const std::vector<double>&) { return std::vector<double>{std::nan("")}; };
  EXPECT_THROW(fit_bounded_least_squares({{"a", 1, 0, 2, false}}, nan), ConfigError);
}

}  // namespace
}  // namespace servesim
