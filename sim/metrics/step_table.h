// The per-step report of a stepped load test as `servesim simulate` and `servesim loadtest`
// print it: one row per step (clients, counted requests, throughput, TTFT/TPOT/E2E p50, p95
// and p99, error rate), a note for each step too short for its percentiles to be stable (the
// rule is in sim/metrics/knee.h) and the knee line. summary.json carries the same figures
// ("steps", "knee"); each step's full summary is there.
//
// Stateless functions; thread-safe as far as the FILE* is.
#pragma once

#include <cstdio>
#include <vector>

#include "sim/metrics/knee.h"
#include "sim/metrics/metrics.h"

namespace servesim {

// How the steps were held, for the table's heading.
struct StepSchedule {
  std::vector<int> clients;    // per step
  double step_duration_s = 0;  // seconds each step is held
  double step_warmup_s = 0;    // seconds left out at each step's start
};

// The table and the short-step notes. REQUIRES: schedule.clients has an entry per step.
void print_step_table(std::FILE* out, const std::vector<MetricsSummary>& by_step,
                      const StepSchedule& schedule);

// "knee: step K (N clients): REASON", or that no step broke.
void print_knee(std::FILE* out, const Knee& knee, const std::vector<int>& clients);

}  // namespace servesim
