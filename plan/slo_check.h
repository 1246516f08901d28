// SLO targets and the checks against them (phase 1 of plan(), plan/planner.h): a target
// parsed from --slo or read from a scenario's slo block, a finished run's summary held
// against the targets, and SloWatch, which stops a run as soon as it is sure to miss one.
// Ownership: a SloWatch borrows the targets it is built with; they must outlive it.
// Thread-safety: the functions are pure; a SloWatch observes one simulation, on its thread.
// Invariants: a target's percentile is 50, 90, 95 or 99; its limit is > 0 seconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/observer.h"
#include "sim/core/request_record.h"
#include "sim/metrics/metrics.h"

namespace servesim {

enum class SloMetric { kTtft, kTpot, kItl, kE2e };

struct SloTarget {
  SloMetric metric = SloMetric::kTtft;
  int percentile = 99;  // 50, 90, 95 or 99
  double limit_s = 0;   // seconds (per output token for TPOT and ITL)

  std::string name() const;  // "ttft:p99"
};

// "ttft:p99=0.5" (seconds; also "500ms"). Throws ConfigError naming --slo.
SloTarget parse_slo_target(const std::string& spec);

// Throws ConfigError when two targets share a name: one limit per metric and percentile.
void check_unique_slos(const std::vector<SloTarget>& slos);

// The scenario's slo block, each limit read as a p99 (it has no ITL limit).
std::vector<SloTarget> slos_from_scenario(const SloSpec& slo);

// The target's percentile of its metric in `summary`, seconds; NaN when nothing was measured.
double slo_value(const MetricsSummary& summary, const SloTarget& slo);

// The name of the first target `summary` misses (an unmeasured metric misses); "" if none.
std::string first_missed_slo(const MetricsSummary& summary, const std::vector<SloTarget>& slos);

// Stops a run as soon as its outcome is sure to miss an SLO or the error budget, which makes
// the failing half of a bisection cheap. Sure means: with n the most requests the run can
// count, more than (1 - q) n + 1 samples above the limit put the q-quantile's lower
// interpolation point above it (numpy's linear interpolation, sim/metrics/percentile.h).
// ITL gaps are per token and not seen here; they are checked on the finished summary only.
class SloWatch final : public Observer {
 public:
  // max_error_rate: fraction of the `requests` counted that may fail.
  SloWatch(const std::vector<SloTarget>& slos, double max_error_rate, uint64_t requests,
           const MetricsOptions& metrics);

  void on_request_done(const RequestRecord& r) override;
  bool should_stop() override { return !failed_.empty(); }
  // The first constraint sure to be missed: a target's name or "error rate"; "" if none.
  const std::string& failed() const { return failed_; }

 private:
  void stop(const std::string& why);

  const std::vector<SloTarget>& slos_;
  MetricsOptions metrics_;
  std::vector<uint64_t> violations_;  // per target: requests counted above its limit
  std::vector<uint64_t> threshold_;   // per target: violations that make the miss sure
  double error_budget_ = 0;           // requests that may fail
  uint64_t errors_ = 0;               // requests counted that failed
  std::string failed_;
};

}  // namespace servesim
