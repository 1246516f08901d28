// Exact percentiles with numpy.percentile's default ("linear") interpolation, the definition
// vLLM's benchmark_serving reports: for n sorted values and p in [0, 100], the rank is
// r = p/100 * (n - 1) and the result is x[floor r] + (x[ceil r] - x[floor r]) * (r - floor r).
// Stateless functions; thread-safe.
#pragma once

#include <span>
#include <vector>

namespace servesim {

// REQUIRES: sorted ascending, non-empty, 0 <= p <= 100.
double percentile_sorted(std::span<const double> sorted, double p);
// Sorts a copy; NaN for an empty input.
double percentile(std::vector<double> values, double p);

}  // namespace servesim
