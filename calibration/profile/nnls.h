// Non-negative least squares: argmin ||A x - b||₂ subject to x >= 0, by Lawson and Hanson's
// active-set method. The fitter's coefficients are seconds per FLOP, per byte, per
// sequence: a negative one would be unphysical and extrapolate badly, so the constraint is
// part of the model, not a clean-up step.
//
// Exact for the small problems here (a handful of columns); O(iterations * n * cols²).
// Stateless; thread-safe.
#pragma once

#include <Eigen/Dense>

namespace servesim {

// REQUIRES: a.rows() == b.size(). Returns x with x.size() == a.cols(), every x_j >= 0.
Eigen::VectorXd solve_nnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b);

}  // namespace servesim
