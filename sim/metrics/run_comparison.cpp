#include "sim/metrics/run_comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/config_error.h"
#include "sim/metrics/setup_difference.h"

namespace servesim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::string_view kMissing = "\u2013";  // an en dash: "not measured", never 0
// A table line per run: the first few differing setup keys; --json lists them all.
constexpr size_t kMaxListedSetupDifferences = 8;

// Characters on screen: UTF-8 continuation bytes take no column.
size_t display_width(std::string_view s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string pad_left(std::string_view s, size_t width) {
  const size_t w = display_width(s);
  return std::string(width > w ? width - w : 0, ' ') + std::string(s);
}

std::string pad_right(std::string_view s, size_t width) {
  const size_t w = display_width(s);
  return std::string(s) + std::string(width > w ? width - w : 0, ' ');
}

std::string printed(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Enough digits to tell runs apart without a wall of them: 1234, 123.4, 12.34, 0.0123.
std::string format_value(double v, std::string_view unit) {
  if (std::isnan(v)) return std::string(kMissing);
  if (unit.empty()) return printed("%.0f", v);
  const double a = std::fabs(v);
  if (a >= 1000) return printed("%.0f", v);
  if (a >= 100) return printed("%.1f", v);
  if (a >= 1 || a == 0) return printed("%.2f", v);
  return printed("%.3g", v);
}

std::string format_difference(double d) {
  if (std::isnan(d)) return "";
  if (std::isinf(d)) return d > 0 ? "+inf%" : "-inf%";
  double rounded = std::round(d * 10) / 10;
  if (rounded == 0) rounded = 0;  // no "-0.0%"
  return printed("%+.1f%%", rounded);
}

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}

// "scenario=quickstart model=Llama-2-7B ..." from the setup keys a producer wrote.
std::string describe_setup(const RunFolder& run) {
  std::string text;
  for (const char* key : {"scenario", "model", "gpu", "tp", "pp", "backend", "url", "seed"}) {
    const auto it = run.setup.find(key);
    if (it == run.setup.end() || !(it->is_string() || it->is_number())) continue;
    text += std::string(" ") + key + "=" + (it->is_string() ? it->get<std::string>() : it->dump());
  }
  return text;
}

const nlohmann::json& setup_record(const RunFolder& run) {
  static const nlohmann::json kNone;
  const auto it = run.setup.find("setup");
  return it == run.setup.end() ? kNone : *it;
}

SetupDiff setup_diff(const RunComparison& c, size_t run) {
  return diff_setups(setup_record(*c.runs.front()), setup_record(*c.runs[run]));
}

// Why the runs may differ, before by how much: each run's setup keys that differ from the
// reference's.
void print_setup_differences(std::FILE* out, const RunComparison& c, size_t path_width) {
  bool header = false;
  for (size_t i = 1; i < c.runs.size(); ++i) {
    const SetupDiff diff = setup_diff(c, i);
    if (!diff.compared) continue;
    if (!header) std::fprintf(out, "setup against the first run:\n");
    header = true;
    std::fprintf(out, "  %s  %s\n", pad_right(c.runs[i]->path, path_width).c_str(),
                 describe_setup_diff(diff, kMaxListedSetupDifferences).c_str());
  }
}

}  // namespace

const std::vector<ComparedMetricSpec>& compared_metric_specs() {
  static const std::vector<ComparedMetricSpec> specs = {
      {"requests", "requests", "", "requests", 1},
      {"completed", "completed", "", "completed", 1},
      {"request_throughput_per_s", "throughput", "req/s", "request_throughput_per_s", 1},
      {"output_tokens_per_s", "output throughput", "tok/s", "output_tokens_per_s", 1},
      {"ttft_mean", "TTFT mean", "ms", "ttft.mean_ms", 1},
      {"ttft_p50", "TTFT p50", "ms", "ttft.p50_ms", 1},
      {"ttft_p90", "TTFT p90", "ms", "ttft.p90_ms", 1},
      {"ttft_p95", "TTFT p95", "ms", "ttft.p95_ms", 1},
      {"ttft_p99", "TTFT p99", "ms", "ttft.p99_ms", 1},
      {"tpot_mean", "TPOT mean", "ms", "tpot.mean_ms", 1},
      {"tpot_p50", "TPOT p50", "ms", "tpot.p50_ms", 1},
      {"tpot_p90", "TPOT p90", "ms", "tpot.p90_ms", 1},
      {"tpot_p95", "TPOT p95", "ms", "tpot.p95_ms", 1},
      {"tpot_p99", "TPOT p99", "ms", "tpot.p99_ms", 1},
      {"itl_mean", "ITL mean", "ms", "itl.mean_ms", 1},
      {"itl_p50", "ITL p50", "ms", "itl.p50_ms", 1},
      {"itl_p90", "ITL p90", "ms", "itl.p90_ms", 1},
      {"itl_p95", "ITL p95", "ms", "itl.p95_ms", 1},
      {"itl_p99", "ITL p99", "ms", "itl.p99_ms", 1},
      {"e2e_mean", "E2E mean", "ms", "e2e.mean_ms", 1},
      {"e2e_p50", "E2E p50", "ms", "e2e.p50_ms", 1},
      {"e2e_p90", "E2E p90", "ms", "e2e.p90_ms", 1},
      {"e2e_p95", "E2E p95", "ms", "e2e.p95_ms", 1},
      {"e2e_p99", "E2E p99", "ms", "e2e.p99_ms", 1},
      {"error_rate", "error rate", "%", "error_rate", 100},
      {"goodput_requests_per_s", "goodput", "req/s", "goodput_requests_per_s", 1},
  };
  return specs;
}

double relative_difference_pct(double value, double reference) {
  if (std::isnan(value) || std::isnan(reference)) return kNaN;
  if (reference == 0) {
    if (value == 0) return 0.0;
    return value > 0 ? std::numeric_limits<double>::infinity()
                     : -std::numeric_limits<double>::infinity();
  }
  return (value - reference) / std::fabs(reference) * 100.0;
}

RunComparison compare_runs(const std::vector<RunFolder>& runs,
                           const std::vector<std::string>& keys) {
  const std::vector<ComparedMetricSpec>& specs = compared_metric_specs();
  for (const std::string& key : keys) {
    if (std::none_of(specs.begin(), specs.end(), [&](const auto& s) { return s.key == key; })) {
      std::string known;
      for (const ComparedMetricSpec& s : specs)
        known += (known.empty() ? "" : ",") + std::string(s.key);
      throw ConfigError("--metrics: unknown metric '" + key + "'; known: " + known);
    }
  }
  RunComparison c;
  for (const RunFolder& run : runs) c.runs.push_back(&run);
  for (const ComparedMetricSpec& spec : specs) {
    if (!keys.empty() && std::find(keys.begin(), keys.end(), spec.key) == keys.end()) continue;
    ComparedMetric m;
    m.spec = &spec;
    for (const RunFolder& run : runs) m.values.push_back(run.value(spec.summary_key) * spec.scale);
    for (double v : m.values) m.difference_pct.push_back(relative_difference_pct(v, m.values[0]));
    c.metrics.push_back(std::move(m));
  }
  return c;
}

std::vector<ErrorLimitBreach> check_max_error(const RunComparison& comparison, double max_error_pct,
                                              bool missing_breaches) {
  std::vector<ErrorLimitBreach> breaches;
  for (const ComparedMetric& m : comparison.metrics) {
    for (size_t run = 1; run < m.values.size(); ++run) {
      const double d = m.difference_pct[run];
      const bool missing = std::isnan(d);
      if (missing ? !missing_breaches : std::fabs(d) <= max_error_pct) continue;
      breaches.push_back({std::string(m.spec->key), run, m.values[run], m.values[0], d});
    }
  }
  return breaches;
}

void print_comparison(std::FILE* out, const RunComparison& c) {
  std::fprintf(out, "runs (differences are against the first):\n");
  size_t path_width = 0;
  for (const RunFolder* run : c.runs) path_width = std::max(path_width, display_width(run->path));
  for (size_t i = 0; i < c.runs.size(); ++i) {
    const RunFolder& run = *c.runs[i];
    const std::string setup = describe_setup(run);
    std::fprintf(out, "  %s  %-9s  %llu requests in requests.csv, %llu ok%s%s\n",
                 pad_right(run.path, path_width).c_str(), std::string(run.clock()).c_str(),
                 static_cast<unsigned long long>(run.records),
                 static_cast<unsigned long long>(run.ok), setup.empty() ? "" : ";", setup.c_str());
  }
  print_setup_differences(out, c, path_width);
  // Cells: the reference's value alone, every other run's value and its difference.
  size_t value_width = 6;
  size_t diff_width = 7;
  for (const ComparedMetric& m : c.metrics) {
    for (size_t i = 0; i < m.values.size(); ++i) {
      value_width = std::max(value_width, display_width(format_value(m.values[i], m.spec->unit)));
      diff_width = std::max(diff_width, display_width(format_difference(m.difference_pct[i])));
    }
  }
  std::vector<size_t> widths;
  for (size_t i = 0; i < c.runs.size(); ++i) {
    const size_t cell = value_width + (i == 0 ? 0 : 1 + diff_width);
    widths.push_back(std::max(cell, display_width(c.runs[i]->path)));
  }
  std::string header = "\n  " + pad_right("metric", 18) + " " + pad_right("unit", 6);
  for (size_t i = 0; i < c.runs.size(); ++i) header += "  " + pad_left(c.runs[i]->path, widths[i]);
  std::fprintf(out, "%s\n", header.c_str());
  for (const ComparedMetric& m : c.metrics) {
    std::string line = "  " + pad_right(m.spec->label, 18) + " " + pad_right(m.spec->unit, 6);
    for (size_t i = 0; i < c.runs.size(); ++i) {
      std::string cell = pad_left(format_value(m.values[i], m.spec->unit), value_width);
      if (i > 0) cell += " " + pad_left(format_difference(m.difference_pct[i]), diff_width);
      line += "  " + pad_left(cell, widths[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::fprintf(out, "%s\n", line.c_str());
  }
}

nlohmann::json comparison_json(const RunComparison& c) {
  nlohmann::json runs = nlohmann::json::array();
  for (size_t i = 0; i < c.runs.size(); ++i) {
    const RunFolder* run = c.runs[i];
    nlohmann::json entry = {{"path", run->path},
                            {"clock", run->clock()},
                            {"requests_csv_rows", run->records},
                            {"requests_csv_ok", run->ok},
                            {"setup", run->setup}};
    if (const SetupDiff diff = setup_diff(c, i); i > 0 && diff.compared) {
      entry["setup_differences"] = setup_diff_json(diff);
      entry["setup_keys_only_in_one"] = diff.only_in_one;
    }
    runs.push_back(std::move(entry));
  }
  nlohmann::json metrics = nlohmann::json::array();
  for (const ComparedMetric& m : c.metrics) {
    nlohmann::json values = nlohmann::json::array();
    nlohmann::json diffs = nlohmann::json::array();
    for (double v : m.values) values.push_back(number_or_null(v));
    for (double d : m.difference_pct) diffs.push_back(number_or_null(d));
    metrics.push_back({{"key", m.spec->key},
                       {"label", m.spec->label},
                       {"unit", m.spec->unit},
                       {"values", values},
                       {"difference_pct", diffs}});
  }
  return {{"reference", c.runs.front()->path}, {"runs", runs}, {"metrics", metrics}};
}

std::string describe_breach(const RunComparison& c, const ErrorLimitBreach& b,
                            double max_error_pct) {
  const ComparedMetric& m = *std::find_if(c.metrics.begin(), c.metrics.end(),
                                          [&](const auto& x) { return x.spec->key == b.metric; });
  const std::string unit = m.spec->unit.empty() ? "" : " " + std::string(m.spec->unit);
  const std::string& run = c.runs[b.run]->path;
  const std::string& reference = c.runs[0]->path;
  const std::string limit = printed("%g", max_error_pct);
  if (std::isnan(b.difference_pct)) {
    const std::string& lacking = std::isnan(b.value) ? run : reference;
    return b.metric + ": missing in " + lacking + ", so " + run +
           " cannot be checked against --max-error " + limit + "%";
  }
  return b.metric + ": " + run + " has " + format_value(b.value, m.spec->unit) + unit + ", " +
         reference + " " + format_value(b.reference, m.spec->unit) + unit + ": " +
         format_difference(b.difference_pct) + ", beyond --max-error " + limit + "%";
}

}  // namespace servesim
