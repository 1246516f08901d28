#include "calibration/serving/serving_report.h"

#include <cmath>
#include <cstdio>

#include "sim/metrics/percentile.h"

namespace servesim {
namespace {

double error_of(double simulated, double measured) {
  if (!std::isfinite(simulated) || !std::isfinite(measured) || measured <= 0)
    return std::numeric_limits<double>::quiet_NaN();
  return simulated / measured - 1.0;
}

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nullptr;
}

nlohmann::json parameters_json(const ServingFit& fit) {
  nlohmann::json out = nlohmann::json::object();
  for (size_t i = 0; i < fit.parameters.size(); ++i) {
    const std::string& name = fit.parameters[i];
    out[name] = {{"start", serving_parameter_value(fit.initial, name)},
                 {"fitted", serving_parameter_value(fit.fitted, name)},
                 {"at_bound", static_cast<bool>(fit.at_bound[i])}};
  }
  return out;
}

nlohmann::json run_json(const ServingRunReport& run) {
  nlohmann::json metrics = nlohmann::json::object();
  for (const ServingMetricSpec& m : serving_metric_specs()) {
    const double measured = m.get(run.measured);
    if (!std::isfinite(measured)) continue;
    const double before = m.get(run.before), after = m.get(run.after);
    metrics[std::string(m.key)] = {{"unit", m.unit},
                                   {"measured", measured * m.scale},
                                   {"before", number_or_null(before * m.scale)},
                                   {"after", number_or_null(after * m.scale)},
                                   {"error_before", number_or_null(error_of(before, measured))},
                                   {"error_after", number_or_null(error_of(after, measured))}};
  }
  return {{"run", run.name}, {"held_out", run.held_out}, {"metrics", metrics}};
}

std::string format_value(std::string_view name, double v) {
  char buf[64];
  if (name == "step_overhead_s" || name == "seq_overhead_s")
    std::snprintf(buf, sizeof buf, "%.1f us", v * 1e6);
  else if (name == "rtt_s")
    std::snprintf(buf, sizeof buf, "%.2f ms", v * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

std::string percent(double fraction) {
  if (!std::isfinite(fraction)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100);
  return buf;
}

std::string signed_percent(double fraction) {
  if (!std::isfinite(fraction)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", fraction * 100);
  return buf;
}

}  // namespace

ServingReport make_serving_report(const std::vector<ServingFitCase>& cases,
                                  const std::vector<bool>& held_out, const ServingFit& fit,
                                  double holdout_fraction, const ForEachCase& for_each) {
  ServingReport report;
  report.fit = fit;
  report.holdout_fraction = holdout_fraction;
  const std::vector<MetricsSummary> before = simulate_serving_cases(cases, fit.initial, for_each);
  const std::vector<MetricsSummary> after = simulate_serving_cases(cases, fit.fitted, for_each);
  for (size_t i = 0; i < cases.size(); ++i)
    report.runs.push_back({cases[i].name, held_out[i], cases[i].measured, before[i], after[i]});
  return report;
}

namespace {

std::vector<double> abs_errors(const ServingReport& report, const ServingMetricSpec& metric,
                               bool held_out, bool after) {
  std::vector<double> out;
  for (const ServingRunReport& run : report.runs) {
    if (run.held_out != held_out) continue;
    const double e = error_of(metric.get(after ? run.after : run.before), metric.get(run.measured));
    if (std::isfinite(e)) out.push_back(std::fabs(e));
  }
  return out;
}

}  // namespace

double mean_abs_error(const ServingReport& report, const ServingMetricSpec& metric, bool held_out,
                      bool after) {
  const std::vector<double> e = abs_errors(report, metric, held_out, after);
  if (e.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (double v : e) sum += v;
  return sum / static_cast<double>(e.size());
}

double median_abs_error(const ServingReport& report, const ServingMetricSpec& metric, bool held_out,
                        bool after) {
  return percentile(abs_errors(report, metric, held_out, after), 50);
}

nlohmann::json serving_report_json(const ServingReport& report) {
  nlohmann::json mean = nlohmann::json::object(), median = nlohmann::json::object();
  for (const ServingMetricSpec& m : serving_metric_specs()) {
    nlohmann::json mean_entry, median_entry;
    for (bool held : {false, true})
      for (bool after : {false, true}) {
        const std::string key =
            std::string(held ? "held_out_" : "fitted_") + (after ? "after" : "before");
        mean_entry[key] = number_or_null(mean_abs_error(report, m, held, after));
        median_entry[key] = number_or_null(median_abs_error(report, m, held, after));
      }
    mean[std::string(m.key)] = mean_entry;
    median[std::string(m.key)] = median_entry;
  }
  nlohmann::json runs = nlohmann::json::array();
  for (const ServingRunReport& run : report.runs) runs.push_back(run_json(run));
  const ServingFit& f = report.fit;
  return {{"parameters", parameters_json(f)},
          {"fit",
           {{"residuals", f.residuals},
            {"iterations", f.iterations},
            {"simulations", f.simulations},
            {"cost_before", f.cost_before},
            {"cost_after", f.cost_after},
            {"holdout", report.holdout_fraction}}},
          {"warnings", report.warnings},
          {"left_out", report.left_out},
          {"mean_abs_error", mean},
          {"median_abs_error", median},
          {"runs", runs}};
}

std::string serving_report_text(const ServingReport& report) {
  std::string out;
  char line[256];
  size_t held = 0;
  for (const ServingRunReport& r : report.runs) held += r.held_out;
  std::snprintf(line, sizeof line,
                "calibrate serving: fitted on %zu runs (%zu measured values), %zu held out; %d "
                "steps, %d simulations of each run\n\n",
                report.runs.size() - held, report.fit.residuals, held, report.fit.iterations,
                report.fit.simulations);
  out += line;
  out += "parameter              start        fitted\n";
  for (size_t i = 0; i < report.fit.parameters.size(); ++i) {
    const std::string& name = report.fit.parameters[i];
    std::snprintf(line, sizeof line, "%-22s %-12s %-12s%s\n", name.c_str(),
                  format_value(name, serving_parameter_value(report.fit.initial, name)).c_str(),
                  format_value(name, serving_parameter_value(report.fit.fitted, name)).c_str(),
                  report.fit.at_bound[i] ? "  (at its bound)" : "");
    out += line;
  }
  const bool on_held = held > 0;
  out += on_held ? "\n|error| on the held-out runs\n"
                 : "\n|error| on the fitted runs (nothing held out)\n";
  std::snprintf(line, sizeof line, "  %-32s %12s %8s %14s %8s\n", "metric", "mean before", "after",
                "median before", "after");
  out += line;
  for (const ServingMetricSpec& m : serving_metric_specs()) {
    const double b = mean_abs_error(report, m, on_held, false);
    const double a = mean_abs_error(report, m, on_held, true);
    if (!std::isfinite(b) && !std::isfinite(a)) continue;
    std::snprintf(line, sizeof line, "  %-32s %12s %8s %14s %8s\n", std::string(m.key).c_str(),
                  percent(b).c_str(), percent(a).c_str(),
                  percent(median_abs_error(report, m, on_held, false)).c_str(),
                  percent(median_abs_error(report, m, on_held, true)).c_str());
    out += line;
  }
  if (on_held) {
    out += "\nheld-out run                              metric      measured   before    after\n";
    for (const ServingRunReport& r : report.runs) {
      if (!r.held_out) continue;
      for (const ServingMetricSpec& m : serving_metric_specs()) {
        if (!m.fitted || !std::isfinite(m.get(r.measured))) continue;
        const std::string shown = r.name.substr(r.name.find_last_of('/') + 1);
        std::snprintf(line, sizeof line, "%-41s %-11s %8.1f %8s %8s\n", shown.c_str(),
                      std::string(m.key).c_str(), m.get(r.measured) * m.scale,
                      signed_percent(error_of(m.get(r.before), m.get(r.measured))).c_str(),
                      signed_percent(error_of(m.get(r.after), m.get(r.measured))).c_str());
        out += line;
      }
    }
  }
  if (!report.warnings.empty()) {
    out += "\nwarnings\n";
    for (const std::string& w : report.warnings) out += "  - " + w + "\n";
  }
  if (!report.left_out.empty()) {
    out += "\nleft out of the fit and of the held-out runs\n";
    for (const std::string& w : report.left_out) out += "  - " + w + "\n";
  }
  return out;
}

}  // namespace servesim
