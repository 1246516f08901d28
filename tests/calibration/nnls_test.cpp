#include "calibration/profile/nnls.h"

#include <gtest/gtest.h>

namespace servesim {
namespace {

TEST(Nnls, RecoversNonNegativeSolutionExactly) {
  Eigen::MatrixXd a(5, 3);
  a << 1, 0, 2, 2, 1, 0, 0, 3, 1, 1, 1, 1, 4, 0, 2;
  const Eigen::Vector3d x_true(0.5, 2.0, 1.5);
  const Eigen::VectorXd x = solve_nnls(a, a * x_true);
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(x(j), x_true(j), 1e-9);
}

TEST(Nnls, ClampsWhatUnconstrainedLeastSquaresWouldMakeNegative) {
  // b is best explained with a negative second coefficient; NNLS must set it to zero and
  // re-fit the first alone, which for these columns is b·a0 / a0·a0.
  Eigen::MatrixXd a(4, 2);
  a << 1, 1, 2, 1, 3, 1, 4, 1;
  Eigen::VectorXd b(4);
  b << 1, 3, 5, 7;  // 2 * col0 - 1 * col1
  const Eigen::VectorXd x = solve_nnls(a, b);
  EXPECT_EQ(x(1), 0.0);
  EXPECT_NEAR(x(0), a.col(0).dot(b) / a.col(0).squaredNorm(), 1e-9);
  const Eigen::VectorXd unconstrained = a.colPivHouseholderQr().solve(b);
  EXPECT_LT(unconstrained(1), 0.0);
}

TEST(Nnls, AllNegativeTargetGivesZero) {
  Eigen::MatrixXd a(3, 2);
  a << 1, 0, 0, 1, 1, 1;
  const Eigen::VectorXd x = solve_nnls(a, Eigen::Vector3d(-1, -2, -3));
  EXPECT_EQ(x(0), 0.0);
  EXPECT_EQ(x(1), 0.0);
}

}  // namespace
}  // namespace servesim
