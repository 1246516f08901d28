// CdfPlot: overlaid cumulative distributions drawn into a PNG with cairo — one panel per
// metric in a two-column grid, one curve per run in a fixed colour order, a shared legend,
// axes with units, and a logarithmic x axis where a panel's values span two decades or more.
// `servesim compare --plot` draws TTFT, TPOT, ITL and E2E with it.
//
// Deterministic: the same panels give the same bytes (no timestamps in the PNG; text through
// the system's fonts, so bytes can differ between machines with different fonts).
// Stateless functions; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace servesim {

struct CdfPlotPoint {
  double x = 0.0;         // in the panel's unit
  double fraction = 0.0;  // of samples <= x, 0..1
};

struct CdfCurve {
  std::vector<CdfPlotPoint> points;  // x ascending; empty: this run has no data here
  // True when the points are a few percentiles joined by straight lines (drawn with markers)
  // rather than every sample as a step.
  bool from_percentiles = false;
};

struct CdfPanel {
  std::string title;
  std::string x_label;           // with the unit, e.g. "TTFT (ms)"
  std::string y_label;           // what the fraction counts, e.g. "fraction of requests"
  std::vector<CdfCurve> curves;  // one per legend entry
};

// The empirical CDF of sorted samples, scaled by `scale` (e.g. 1e3 for seconds -> ms), as at
// most `max_points` steps (evenly spaced in rank beyond that, always keeping the last).
std::vector<CdfPlotPoint> empirical_cdf(const std::vector<double>& sorted, double scale,
                                        size_t max_points = 2000);

// REQUIRES: every panel has one curve per legend entry. Throws ConfigError naming the file
// when it cannot be written.
void write_cdf_png(const std::string& path, const std::vector<CdfPanel>& panels,
                   const std::vector<std::string>& legend);

}  // namespace servesim
