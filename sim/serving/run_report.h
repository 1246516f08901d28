// RunReport: what a serving loop reports as it runs — every request's record and inter-token
// gap into the metrics (and per load step, for stepped workloads, and per tenant, with
// service.tenants), each record to the
// Observer — and the summaries it ends with: MetricsSummary, per-step summaries, TimeSamples
// and ReplicaSummaries from SchedulerStats. Shared by the Simulation and the real-time
// EngineServer, so `servesim simulate` and `servesim engine run` report alike.
//
// Owns its metrics; borrows the Observer, which must outlive it. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/sched/scheduler_config.h"
#include "engine/sched/scheduler_output.h"
#include "models/cost_model.h"
#include "sim/core/observer.h"
#include "sim/core/request_record.h"
#include "sim/metrics/metrics.h"
#include "sim/metrics/replica_summary.h"
#include "sim/metrics/stepwise_metrics.h"
#include "sim/metrics/tenant_metrics.h"
#include "sim/workload/request_source.h"
#include "sim/workload/workload.h"

namespace servesim {

class RunReport {
 public:
  // Throws ConfigError for invalid metrics options. step_warmup_s: seconds left out at each
  // load step's start (stepped workloads).
  // tenants: the service's tenants (records carry their index); empty without tenants.
  RunReport(const MetricsOptions& metrics, const WorkloadSpec& workload, double step_warmup_s,
            Observer& observer, std::vector<TenantLabel> tenants = {});

  void inter_token_gap(const RequestSpec& request, double gap_s);
  // A request left (finished or rejected) with this record.
  void request_left(const RequestRecord& record);

  MetricsSummary summary() const { return metrics_.summary(); }
  // One summary per load step; empty unless the workload is stepped.
  std::vector<MetricsSummary> by_step() const;
  // One summary per tenant (`whole`: the run's summary()); empty without tenants.
  std::vector<TenantSummary> tenants(const MetricsSummary& whole) const;

  // A time-series sample of one replica's scheduler at now_s.
  static TimeSample sample(double now_s, int replica, const SchedulerStats& stats,
                           int tokens_in_step);
  // Counts one step that schedule() just produced (step_tokens tokens, lasting step_s seconds)
  // into `counters`.
  static void count_admission(const SchedulerStats& stats, const SchedulerConfig& config,
                              int step_tokens, double step_s, AdmissionCounters& counters);
  // What a replica did over the run: its steps, seconds in steps, per-op totals, the
  // scheduler's caps, preemption and prefix-cache counters, and its admission counters.
  static ReplicaSummary replica_summary(const SchedulerStats& stats, const SchedulerConfig& config,
                                        int64_t steps, double busy_s, const StepTime& op_totals,
                                        const AdmissionCounters& admission = {});

 private:
  Observer& observer_;
  MetricsCollector metrics_;
  std::unique_ptr<StepwiseMetrics> by_step_;  // stepped workloads only
  std::unique_ptr<TenantMetrics> by_tenant_;  // with tenants only
};

}  // namespace servesim
