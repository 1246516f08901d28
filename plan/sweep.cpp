#include "plan/sweep.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "models/config_error.h"
#include "models/json_file.h"
#include "sim/core/csv_line.h"
#include "sim/core/observer.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

// The values of a list, split at the commas outside JSON objects, arrays and strings, so a
// value may be a whole block ("disaggregation=null,{\"prefill\": ...}"). Throws ConfigError
// for brackets or quotes left open.
std::vector<std::string> split_values(const std::string& list, const std::string& spec) {
  std::vector<std::string> out(1);
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < list.size(); ++i) {
    const char ch = list[i];
    if (in_string) {
      if (ch == '\\' && i + 1 < list.size()) {
        out.back() += ch;
        out.back() += list[++i];  // an escaped quote does not end the string
        continue;
      }
      if (ch == '"') in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '{' || ch == '[') {
      ++depth;
    } else if ((ch == '}' || ch == ']') && depth > 0) {
      --depth;
    } else if (ch == ',' && depth == 0) {
      out.emplace_back();
      continue;
    }
    out.back() += ch;
  }
  if (depth != 0 || in_string) {
    throw ConfigError("--vary '" + spec +
                      "': a JSON value is not closed (check its brackets and quotes)");
  }
  return out;
}

double parse_number(const std::string& text, const std::string& spec) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v)) {
    throw ConfigError("--vary '" + spec + "': '" + text +
                      "' is not a number (a range is START:STOP:STEP)");
  }
  return v;
}

// Range values print with 10 significant digits so 0.1:0.5:0.1 reads 0.3, not the shortest
// round-trip text of the accumulated float (csv_line's format_number).
std::string format_range_value(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// Columns every output shares; NaN prints as an empty field.
struct Column {
  const char* name;
  double (*get)(const SweepPoint&);
  const char* format;  // printf format for the table and CSV
};

const Column kColumns[] = {
    {"gpus", [](const SweepPoint& p) { return static_cast<double>(p.num_gpus); }, "%.0f"},
    {"req_per_s", [](const SweepPoint& p) { return p.result.summary.request_throughput; }, "%.3f"},
    {"output_tok_per_s", [](const SweepPoint& p) { return p.result.summary.output_throughput; },
     "%.1f"},
    {"output_tok_per_s_per_gpu",
     [](const SweepPoint& p) { return p.result.summary.output_throughput_per_gpu; }, "%.1f"},
    {"ttft_p50_ms", [](const SweepPoint& p) { return p.result.summary.ttft.p50_s * 1e3; }, "%.1f"},
    {"ttft_p99_ms", [](const SweepPoint& p) { return p.result.summary.ttft.p99_s * 1e3; }, "%.1f"},
    {"tpot_p50_ms", [](const SweepPoint& p) { return p.result.summary.tpot.p50_s * 1e3; }, "%.2f"},
    {"tpot_p99_ms", [](const SweepPoint& p) { return p.result.summary.tpot.p99_s * 1e3; }, "%.2f"},
    {"itl_p99_ms", [](const SweepPoint& p) { return p.result.summary.itl.p99_s * 1e3; }, "%.2f"},
    {"e2e_p50_ms", [](const SweepPoint& p) { return p.result.summary.e2e.p50_s * 1e3; }, "%.0f"},
    {"e2e_p99_ms", [](const SweepPoint& p) { return p.result.summary.e2e.p99_s * 1e3; }, "%.0f"},
    {"goodput_req_per_s", [](const SweepPoint& p) { return p.result.summary.goodput; }, "%.3f"},
    {"error_rate", [](const SweepPoint& p) { return p.result.summary.error_rate; }, "%.4f"},
    {"usd_per_million_tokens",
     [](const SweepPoint& p) { return p.result.summary.cost_per_million_tokens; }, "%.4f"},
    {"preemptions",
     [](const SweepPoint& p) { return static_cast<double>(p.result.summary.preemptions); }, "%.0f"},
};

// Forwards the sweep's stop request to a point's running simulation.
class StopObserver final : public Observer {
 public:
  explicit StopObserver(const std::function<bool()>& stop_requested)
      : stop_requested_(stop_requested) {}
  bool should_stop() override { return stop_requested_(); }

 private:
  const std::function<bool()>& stop_requested_;
};

std::string cell(const Column& c, const SweepPoint& p) {
  if (!p.error.empty()) return "";
  const double v = c.get(p);
  if (std::isnan(v)) return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, c.format, v);
  return buf;
}

}  // namespace

SweepAxis parse_sweep_axis(const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    throw ConfigError("--vary '" + spec + "': expected KEY=V1,V2,... or KEY=START:STOP:STEP");
  }
  SweepAxis axis;
  axis.key = spec.substr(0, eq);
  const std::string rhs = spec.substr(eq + 1);
  const std::vector<std::string> range = split(rhs, ':');
  // JSON objects and arrays hold colons of their own: never a range.
  const bool json_value = rhs.find_first_of("{[\"") != std::string::npos;
  if (!json_value && range.size() == 3 && rhs.find(',') == std::string::npos) {
    const double start = parse_number(range[0], spec);
    const double stop = parse_number(range[1], spec);
    const double step = parse_number(range[2], spec);
    if (!(step > 0)) throw ConfigError("--vary '" + spec + "': STEP must be > 0");
    if (stop < start) throw ConfigError("--vary '" + spec + "': STOP must be >= START");
    // Counting steps (not accumulating) keeps 0.1-sized steps from drifting past STOP.
    const double n = std::floor((stop - start) / step + 1e-9);
    if (n + 1 > static_cast<double>(kMaxSweepPoints)) {
      throw ConfigError("--vary '" + spec + "': more than " + std::to_string(kMaxSweepPoints) +
                        " values; use a larger STEP");
    }
    for (int64_t k = 0; k <= static_cast<int64_t>(n); ++k) {
      axis.values.push_back(format_range_value(start + static_cast<double>(k) * step));
    }
  } else if (!json_value && range.size() != 1 && rhs.find(',') == std::string::npos) {
    throw ConfigError("--vary '" + spec + "': a range is START:STOP:STEP (three numbers)");
  } else {
    for (const std::string& v : split_values(rhs, spec)) {
      if (v.empty()) throw ConfigError("--vary '" + spec + "': empty value in the list");
      axis.values.push_back(v);
    }
  }
  return axis;
}

std::vector<std::vector<std::string>> sweep_points(const std::vector<SweepAxis>& axes) {
  std::set<std::string> keys;
  size_t total = 1;
  for (const SweepAxis& a : axes) {
    if (!keys.insert(a.key).second) {
      throw ConfigError("--vary: key '" + a.key + "' is given twice; list all its values in one");
    }
    if (a.values.empty()) throw ConfigError("--vary " + a.key + ": no values");
    total *= a.values.size();
    if (total > kMaxSweepPoints) {
      throw ConfigError("--vary: the grid has more than " + std::to_string(kMaxSweepPoints) +
                        " points; vary fewer keys or fewer values");
    }
  }
  std::vector<std::vector<std::string>> points;
  points.reserve(total);
  std::vector<size_t> digit(axes.size(), 0);
  for (size_t i = 0; i < total; ++i) {
    std::vector<std::string> overrides;
    for (size_t a = 0; a < axes.size(); ++a) {
      overrides.push_back(axes[a].key + "=" + axes[a].values[digit[a]]);
    }
    points.push_back(std::move(overrides));
    // Odometer increment: the last axis turns fastest.
    for (size_t a = axes.size(); a-- > 0;) {
      if (++digit[a] < axes[a].values.size()) break;
      digit[a] = 0;
    }
  }
  return points;
}

namespace {

// A point finished when it started (its values are set) and ran to the end or failed with its
// reason.
bool finished(const SweepPoint& p) {
  return !p.values.empty() && (!p.error.empty() || !p.result.stopped);
}

// The sweep of a scenario in memory, shared among the ranks of `share`; nullopt when
// control.should_stop() stopped it.
std::optional<SweepReport> run_shared_sweep(const nlohmann::json& scenario,
                                            const std::string& base_dir, const std::string& origin,
                                            const SweepOptions& options, const Catalog& catalog,
                                            const SweepControl& control, WorkShare& share) {
  nlohmann::json base = scenario;
  apply_overrides(base, options.overrides);
  const std::vector<std::vector<std::string>> points = sweep_points(options.axes);

  SweepReport report;
  report.axes = options.axes;
  report.scenario = parse_scenario(base, base_dir, origin, catalog).name;
  report.points.resize(points.size());
  std::vector<std::string> parse_errors(points.size());
  // Latched: once a stop is asked for, every later point is skipped and the report is void.
  std::atomic<bool> stopped{false};
  const std::function<bool()> stop_requested = [&] {
    if (stopped) return true;
    if (!control.should_stop || !control.should_stop()) return false;
    stopped = true;
    return true;
  };
  std::atomic<size_t> done{0};
  auto run_point = [&](size_t i) {
    if (stop_requested()) return;
    SweepPoint& point = report.points[i];
    for (const std::string& o : points[i]) point.values.push_back(o.substr(o.find('=') + 1));
    nlohmann::json j = base;
    Scenario parsed;
    try {
      apply_overrides(j, points[i]);
      parsed = parse_scenario(j, base_dir, origin, catalog);
    } catch (const ConfigError& e) {
      parse_errors[i] = e.what();
      if (control.on_point) control.on_point(++done, points.size());
      return;
    }
    parsed.config.sample_interval_s = 0;  // no time series: a sweep reports aggregates
    const SimulationConfig& c = parsed.config;
    point.num_gpus =
        c.disaggregation.enabled ? c.disaggregation.total_gpus() : c.parallel.total_gpus();
    for (const DeploymentSpec& d : c.deployments) point.num_gpus += d.parallel.total_gpus();
    try {
      Simulation simulation(parsed.config);
      StopObserver observer(stop_requested);
      point.result = simulation.run(observer);
    } catch (const ConfigError& e) {
      point.error = e.what();
    }
    if (control.on_point) control.on_point(++done, points.size());
  };
  // Everything run_point writes, for the ranks that did not run it (a field added to
  // SweepPoint or SimulationResult must be added here).
  auto point_fields = [&](size_t i, auto&& field) {
    SweepPoint& p = report.points[i];
    SimulationResult& r = p.result;
    field(parse_errors[i]);
    field(p.values);
    field(p.error);
    field(p.num_gpus);
    field(r.summary);
    field(r.by_step);
    field(r.replicas);
    field(r.fingerprint);
    field(r.events);
    field(r.simulated_s);
    field(r.stopped);
    field(r.extrapolated_steps);
  };
  share_for(
      share, points.size(), options.threads, run_point,
      [&](size_t i, ByteWriter& out) { point_fields(i, [&](const auto& v) { out.write(v); }); },
      [&](size_t i, ByteReader& in) { point_fields(i, [&](auto& v) { in.read(v); }); });
  for (size_t i = 0; i < points.size(); ++i) {
    if (!parse_errors[i].empty()) {
      std::string where;
      for (const std::string& o : points[i]) where += (where.empty() ? "" : " ") + o;
      throw ConfigError("--vary point [" + where + "]: " + parse_errors[i]);
    }
  }
  report.grid_points = points.size();
  // Decided from the gathered fields, not this rank's flag, so every rank agrees.
  if (std::all_of(report.points.begin(), report.points.end(), finished)) return report;
  if (!control.keep_finished) return std::nullopt;
  std::erase_if(report.points, [](const SweepPoint& p) { return !finished(p); });
  return report;
}

}  // namespace

SweepReport run_sweep(const std::string& scenario_path, const SweepOptions& options,
                      const Catalog& catalog) {
  SoloWorkShare alone;
  return run_sweep(scenario_path, options, catalog, alone);
}

SweepReport run_sweep(const std::string& scenario_path, const SweepOptions& options,
                      const Catalog& catalog, WorkShare& share, const SweepControl& control) {
  const std::string base_dir = std::filesystem::path(scenario_path).parent_path().string();
  SweepControl keeping = control;
  keeping.keep_finished = true;  // hence always a report
  return *run_shared_sweep(load_json_file(scenario_path), base_dir, scenario_path, options, catalog,
                           keeping, share);
}

std::optional<SweepReport> run_sweep(const nlohmann::json& scenario, const std::string& base_dir,
                                     const std::string& origin, const SweepOptions& options,
                                     const Catalog& catalog, const SweepControl& control) {
  SoloWorkShare alone;
  return run_shared_sweep(scenario, base_dir, origin, options, catalog, control, alone);
}

nlohmann::json SweepReport::to_json() const {
  nlohmann::json j;
  j["scenario"] = scenario;
  nlohmann::json axes_json = nlohmann::json::array();
  for (const SweepAxis& a : axes) axes_json.push_back({{"key", a.key}, {"values", a.values}});
  j["axes"] = axes_json;
  nlohmann::json rows = nlohmann::json::array();
  for (const SweepPoint& p : points) {
    nlohmann::json row;
    nlohmann::json set = nlohmann::json::object();
    for (size_t a = 0; a < axes.size(); ++a) set[axes[a].key] = p.values[a];
    row["set"] = set;
    if (!p.error.empty()) {
      row["error"] = p.error;
    } else {
      for (const Column& c : kColumns) {
        const double v = c.get(p);
        row[c.name] = std::isnan(v) ? nlohmann::json() : nlohmann::json(v);
      }
      row["fingerprint"] = p.result.fingerprint;
    }
    rows.push_back(row);
  }
  j["points"] = rows;
  if (!complete())
    j["interrupted"] = {{"points_run", points.size()}, {"points_total", grid_points}};
  return j;
}

std::string SweepReport::to_csv() const {
  std::string out;
  for (const SweepAxis& a : axes) out += csv_escape(a.key) + ",";
  for (const Column& c : kColumns) out += std::string(c.name) + ",";
  out += "fingerprint,error\n";
  for (const SweepPoint& p : points) {
    for (const std::string& v : p.values) out += csv_escape(v) + ",";
    for (const Column& c : kColumns) out += cell(c, p) + ",";
    out += p.result.fingerprint + "," + csv_escape(p.error) + "\n";
  }
  return out;
}

std::string SweepReport::to_table() const {
  // The latency and throughput columns people compare first; the CSV has them all.
  static const char* const kShown[] = {"gpus",        "req_per_s",   "output_tok_per_s_per_gpu",
                                       "ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms",
                                       "tpot_p99_ms", "e2e_p99_ms",  "usd_per_million_tokens"};
  std::vector<const Column*> shown;
  for (const char* name : kShown) {
    for (const Column& c : kColumns) {
      if (std::string(c.name) == name) shown.push_back(&c);
    }
  }
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header;
  for (const SweepAxis& a : axes) header.push_back(a.key);
  for (const Column* c : shown) header.push_back(c->name);
  rows.push_back(header);
  for (const SweepPoint& p : points) {
    std::vector<std::string> row = p.values;
    if (!p.error.empty()) {
      row.push_back("error: " + p.error);
    } else {
      for (const Column* c : shown) row.push_back(cell(*c, p));
    }
    rows.push_back(row);
  }
  std::vector<size_t> width(header.size(), 0);
  for (const auto& row : rows) {
    // An error message spans the metric columns; it does not widen them.
    const size_t n = row.size() == header.size() ? row.size() : row.size() - 1;
    for (size_t i = 0; i < n; ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      const bool last = i + 1 == row.size();
      out += row[i];
      if (!last) out += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out += "\n";
  }
  return out;
}

}  // namespace servesim
