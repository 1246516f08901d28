#include "plan/slo_check.h"

#include <cmath>
#include <limits>
#include <set>

#include "models/config_error.h"

namespace servesim {
namespace {

SloMetric parse_metric(const std::string& spec, const std::string& metric) {
  if (metric == "ttft") return SloMetric::kTtft;
  if (metric == "tpot") return SloMetric::kTpot;
  if (metric == "itl") return SloMetric::kItl;
  if (metric == "e2e") return SloMetric::kE2e;
  throw ConfigError("--slo '" + spec + "': unknown metric '" + metric +
                    "'; use ttft, tpot, itl or e2e");
}

int parse_percentile(const std::string& spec, const std::string& pct) {
  if (pct == "p50") return 50;
  if (pct == "p90") return 90;
  if (pct == "p95") return 95;
  if (pct == "p99") return 99;
  throw ConfigError("--slo '" + spec + "': unknown percentile '" + pct +
                    "'; use p50, p90, p95 or p99");
}

// "0.5", "0.5s" or "500ms" in seconds.
double parse_limit_s(const std::string& spec, std::string value) {
  double scale = 1;
  if (value.size() > 2 && value.ends_with("ms")) {
    value.resize(value.size() - 2);
    scale = 1e-3;
  } else if (value.size() > 1 && value.ends_with("s")) {
    value.resize(value.size() - 1);
  }
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || !(v > 0) || !std::isfinite(v)) {
    throw ConfigError("--slo '" + spec + "': the limit must be a positive number of seconds");
  }
  return v * scale;
}

double percentile_of(const LatencyStats& s, int p) {
  switch (p) {
    case 50:
      return s.p50_s;
    case 90:
      return s.p90_s;
    case 95:
      return s.p95_s;
    default:
      return s.p99_s;
  }
}

const LatencyStats& stats_of(const MetricsSummary& m, SloMetric metric) {
  switch (metric) {
    case SloMetric::kTtft:
      return m.ttft;
    case SloMetric::kTpot:
      return m.tpot;
    case SloMetric::kItl:
      return m.itl;
    case SloMetric::kE2e:
      break;
  }
  return m.e2e;
}

// The request's own value of a per-request metric, seconds; NaN for ITL (per token).
double request_value(const RequestRecord& r, SloMetric metric) {
  switch (metric) {
    case SloMetric::kTtft:
      return r.ttft_s();
    case SloMetric::kTpot:
      return r.tpot_s();
    case SloMetric::kE2e:
      return r.e2e_s();
    case SloMetric::kItl:
      break;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

std::string SloTarget::name() const {
  static const char* const kNames[] = {"ttft", "tpot", "itl", "e2e"};
  return std::string(kNames[static_cast<int>(metric)]) + ":p" + std::to_string(percentile);
}

SloTarget parse_slo_target(const std::string& spec) {
  const std::string usage = "expected METRIC:PERCENTILE=SECONDS, e.g. ttft:p99=0.5";
  const size_t colon = spec.find(':');
  const size_t eq = spec.find('=');
  if (colon == std::string::npos || eq == std::string::npos || eq < colon) {
    throw ConfigError("--slo '" + spec + "': " + usage);
  }
  SloTarget t;
  t.metric = parse_metric(spec, spec.substr(0, colon));
  t.percentile = parse_percentile(spec, spec.substr(colon + 1, eq - colon - 1));
  t.limit_s = parse_limit_s(spec, spec.substr(eq + 1));
  return t;
}

void check_unique_slos(const std::vector<SloTarget>& slos) {
  std::set<std::string> seen;
  for (const SloTarget& s : slos) {
    if (!seen.insert(s.name()).second) {
      throw ConfigError("--slo " + s.name() + " is given twice; keep one limit per metric");
    }
  }
}

std::vector<SloTarget> slos_from_scenario(const SloSpec& slo) {
  std::vector<SloTarget> out;
  if (slo.ttft_s) out.push_back({SloMetric::kTtft, 99, *slo.ttft_s});
  if (slo.tpot_s) out.push_back({SloMetric::kTpot, 99, *slo.tpot_s});
  if (slo.e2e_s) out.push_back({SloMetric::kE2e, 99, *slo.e2e_s});
  return out;
}

double slo_value(const MetricsSummary& summary, const SloTarget& slo) {
  return percentile_of(stats_of(summary, slo.metric), slo.percentile);
}

std::string first_missed_slo(const MetricsSummary& summary, const std::vector<SloTarget>& slos) {
  for (const SloTarget& s : slos) {
    const double v = slo_value(summary, s);
    if (std::isnan(v) || v > s.limit_s) return s.name();
  }
  return "";
}

SloWatch::SloWatch(const std::vector<SloTarget>& slos, double max_error_rate, uint64_t requests,
                   const MetricsOptions& metrics)
    : slos_(slos), metrics_(metrics), violations_(slos.size(), 0) {
  const double n = static_cast<double>(requests);
  for (const SloTarget& s : slos_) {
    threshold_.push_back(static_cast<uint64_t>(std::floor((1.0 - s.percentile / 100.0) * n)) + 2);
  }
  error_budget_ = max_error_rate * n;
}

void SloWatch::on_request_done(const RequestRecord& r) {
  if (r.arrival_s < metrics_.warmup_s || r.id < metrics_.warmup_requests) return;
  if (r.status != RequestOutcome::kOk) {
    if (static_cast<double>(++errors_) > error_budget_) stop("error rate");
    return;
  }
  for (size_t i = 0; i < slos_.size(); ++i) {
    const double v = request_value(r, slos_[i].metric);
    if (!std::isnan(v) && v > slos_[i].limit_s && ++violations_[i] >= threshold_[i]) {
      stop(slos_[i].name());
    }
  }
}

void SloWatch::stop(const std::string& why) {
  if (failed_.empty()) failed_ = why;
}

}  // namespace servesim
