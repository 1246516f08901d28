// SimulationResult: what one run reports — the request metrics (by load step, per tenant, per
// deployment), every replica's summary, the service path's stations, an agent workload's
// sessions, and the fingerprint of the event trace. The simulator and the real-time engine
// server both fill it, so one set of writers prints either. Plain value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/agent/session_metrics.h"
#include "sim/metrics/metrics.h"
#include "sim/metrics/replica_summary.h"
#include "sim/metrics/station_stats.h"
#include "sim/metrics/tenant_metrics.h"

namespace servesim {

// One deployment's share of a run with several: the requests sent to it, as MetricsSummary
// counts them (its own GPUs and price per GPU for the per-GPU and cost figures).
struct DeploymentResult {
  std::string name;  // the scenario's own model name, or the deployment's "name"
  MetricsSummary summary;
};

struct SimulationResult {
  MetricsSummary summary;
  std::vector<MetricsSummary> by_step;  // stepped-concurrency workloads: one per step
  std::vector<ReplicaSummary> replicas;
  std::string fingerprint;  // hex digest of the event trace
  uint64_t events = 0;
  double simulated_s = 0;  // simulated time at the end of the run
  bool stopped = false;    // the observer asked to stop before the end
  // Calibrated cost model with extrapolate: steps beyond the profile's range (else 0).
  int64_t extrapolated_steps = 0;
  std::vector<StationStats> stations;      // the service path's stations; empty without one
  std::optional<SessionSummary> sessions;  // agent workloads: the sessions' metrics
  std::vector<TenantSummary> tenants;      // per service tenant; empty without tenants
  // With more deployments: each one's requests, the scenario's own first; else empty.
  std::vector<DeploymentResult> deployments;
};

}  // namespace servesim
