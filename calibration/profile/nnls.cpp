#include "calibration/profile/nnls.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace servesim {
namespace {

// Unconstrained least squares on the columns in `passive`; zero elsewhere.
Eigen::VectorXd solve_on(const Eigen::MatrixXd& a, const Eigen::VectorXd& b,
                         const std::vector<bool>& passive) {
  std::vector<Eigen::Index> cols;
  for (Eigen::Index j = 0; j < a.cols(); ++j) {
    if (passive[static_cast<size_t>(j)]) cols.push_back(j);
  }
  Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(cols.size()));
  for (size_t k = 0; k < cols.size(); ++k) sub.col(static_cast<Eigen::Index>(k)) = a.col(cols[k]);
  const Eigen::VectorXd z = sub.colPivHouseholderQr().solve(b);
  Eigen::VectorXd s = Eigen::VectorXd::Zero(a.cols());
  for (size_t k = 0; k < cols.size(); ++k) s(cols[k]) = z(static_cast<Eigen::Index>(k));
  return s;
}

}  // namespace

Eigen::VectorXd solve_nnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  const Eigen::Index n = a.cols();
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  std::vector<bool> passive(static_cast<size_t>(n), false);
  const double tol = 1e-12 * std::max(1.0, a.norm() * b.norm());
  const int max_outer = static_cast<int>(3 * n + 10);
  for (int outer = 0; outer < max_outer; ++outer) {
    const Eigen::VectorXd w = a.transpose() * (b - a * x);
    Eigen::Index best = -1;
    double best_w = tol;
    for (Eigen::Index j = 0; j < n; ++j) {
      if (!passive[static_cast<size_t>(j)] && w(j) > best_w) {
        best_w = w(j);
        best = j;
      }
    }
    if (best < 0) break;
    passive[static_cast<size_t>(best)] = true;
    for (int inner = 0; inner <= n; ++inner) {
      const Eigen::VectorXd s = solve_on(a, b, passive);
      double alpha = std::numeric_limits<double>::infinity();
      for (Eigen::Index j = 0; j < n; ++j) {
        if (passive[static_cast<size_t>(j)] && s(j) <= 0) {
          alpha = std::min(alpha, x(j) / (x(j) - s(j)));
        }
      }
      if (!std::isfinite(alpha)) {
        x = s;
        break;
      }
      x += alpha * (s - x);
      for (Eigen::Index j = 0; j < n; ++j) {
        if (passive[static_cast<size_t>(j)] && x(j) <= tol) {
          passive[static_cast<size_t>(j)] = false;
          x(j) = 0;
        }
      }
    }
  }
  return x.cwiseMax(0.0);
}

}  // namespace servesim
