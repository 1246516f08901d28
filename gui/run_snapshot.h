// RunSnapshot: everything the GUI shows about one finished simulation run, as a plain value
// built on the worker thread and handed to the GUI thread whole (never shared mutably).
// Views keep their own copies; nothing in it points back into the simulation.
// Units: seconds unless a name says otherwise. Memory: bounded — the timeline and the CDF are
// thinned, and agent runs keep the records (with their calls' spans) of the first
// kMaxSessionRecords sessions to end; result.sessions summarises every session.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/memory_plan.h"
#include "sim/core/session_record.h"
#include "sim/metrics/diagnosis.h"
#include "sim/metrics/metrics.h"
#include "sim/run/simulation.h"

namespace servesim::gui {

// One time-series sample of the whole deployment (all replicas at one simulated time).
struct TimelinePoint {
  double time_s = 0.0;
  int running = 0;            // sequences in running batches, all replicas
  int waiting = 0;            // sequences waiting, all replicas
  double kv_usage = 0.0;      // fraction of KV blocks in use, mean over replicas, 0..1
  int tokens_in_step = 0;     // tokens computed by the replicas' last steps, summed
  int preemptions_total = 0;  // preemptions since the start, all replicas
};

// The latency distributions at evenly spaced quantiles (the x of a CDF plot).
struct CdfPoint {
  double quantile = 0.0;  // 0..1
  double ttft_s = 0.0;
  double tpot_s = 0.0;
  double e2e_s = 0.0;
};

struct RunSnapshot {
  static constexpr size_t kMaxSessionRecords = 2000;

  uint64_t job = 0;
  std::string name;  // the scenario's name, as the run was started with it
  SimulationResult result;
  SloSpec slo;
  MemoryPlan plan;
  std::vector<TimelinePoint> timeline;  // downsampled to a bounded number of points
  std::vector<CdfPoint> cdf;            // empty when no request completed
  double wall_s = 0.0;                  // wall-clock seconds the run took
  std::vector<Finding> diagnosis;       // diagnose() of the result, as `simulate` prints it
  // Agent workloads: the first sessions to end, in order of their end, with spans and without
  // their trace lines; empty otherwise.
  std::vector<SessionRecord> sessions;
};

}  // namespace servesim::gui
