// Sweep: a grid of what-ifs over one scenario. Each axis is a scenario key and its values
// (`--vary engine.max_num_seqs=32,64,128`, `--vary workload.arrival.rate_qps=1:9:2`); the
// points are the cartesian product, first axis slowest, and each point is the scenario with
// one `--set key=value` per axis applied (so any scenario key can vary and obeys the same
// checks as `simulate --set`).
//
// Points run on a thread pool (parallel_for); each builds its own Simulation from its own
// parsed config, and results are stored by point index, so the report is byte-identical
// whatever the thread count — or the number of ranks of a WorkShare (mpirun) sharing them. A
// point whose deployment cannot run (does not fit in memory, TP does not divide the heads) is
// reported with its one-line reason; a point whose overrides do not parse (misspelt key, bad
// value) aborts the sweep with a ConfigError. A front end that shows progress and can stop a
// sweep (the GUI) runs the in-memory form with a SweepControl; the CLI's file form is that with
// a control that keeps the points finished before a Ctrl-C. Thread-safety: run_sweep is re-entrant;
// SweepReport is a plain value.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/catalog.h"
#include "plan/work_share.h"
#include "sim/run/simulation.h"

namespace servesim {

inline constexpr size_t kMaxSweepPoints = 100000;

struct SweepAxis {
  std::string key;                  // scenario path, e.g. "engine.max_num_seqs"
  std::vector<std::string> values;  // as --set would take them, in the order given
};

// "KEY=V1,V2,..." or "KEY=START:STOP:STEP" (inclusive of STOP when the steps land on it;
// STEP > 0). Throws ConfigError naming --vary.
SweepAxis parse_sweep_axis(const std::string& spec);

// Override lists ("key=value", one per axis) of every point, first axis slowest. Throws
// ConfigError when an axis key repeats or the grid exceeds kMaxSweepPoints.
std::vector<std::vector<std::string>> sweep_points(const std::vector<SweepAxis>& axes);

struct SweepOptions {
  std::vector<SweepAxis> axes;
  std::vector<std::string> overrides;  // applied before the axes (--set)
  int threads = 0;                     // <= 0: all cores
};

struct SweepPoint {
  std::vector<std::string> values;  // one per axis
  std::string error;                // empty when the point ran
  int num_gpus = 0;                 // GPUs of the deployment (all replicas)
  SimulationResult result;          // meaningful when error is empty
};

struct SweepReport {
  std::string scenario;  // the scenario's name
  std::vector<SweepAxis> axes;
  // In sweep_points() order. A sweep stopped with SweepControl::keep_finished holds only the
  // points that ran to the end, still in that order.
  std::vector<SweepPoint> points;
  // Points in the grid; more than points.size() when the sweep was stopped (0 in a report
  // built by hand: read as complete).
  size_t grid_points = 0;

  bool complete() const { return points.size() >= grid_points; }

  nlohmann::json to_json() const;
  std::string to_csv() const;    // header + one line per point
  std::string to_table() const;  // aligned, for the terminal
};

// Progress and stopping for the in-memory run_sweep. Both callbacks run on the sweep's worker
// threads, several at once, so they must be thread-safe; should_stop is polled every few
// thousand events of each running point, so it must be cheap (an atomic load). Either may be
// empty.
struct SweepControl {
  // After each point (run or failed): points done so far, and the grid's size.
  std::function<void(size_t done, size_t total)> on_point;
  // True stops the sweep: points not yet started are skipped, running ones stop early.
  std::function<bool()> should_stop;
  // What a stopped sweep returns: false, nothing (the GUI discards it); true, the points that
  // finished before the stop (an incomplete report; the CLI's Ctrl-C). Points stopped while
  // running are left out either way: their numbers describe part of a run.
  bool keep_finished = false;
};

// Loads the scenario once, then runs every point. Throws ConfigError for a bad scenario,
// axis or override.
SweepReport run_sweep(const std::string& scenario_path, const SweepOptions& options,
                      const Catalog& catalog);

// The same sweep computed by every rank of `share` together (point i runs on rank
// i % size); every rank gets the whole report, or the same ConfigError. Stopped by
// `control` (the CLI's Ctrl-C), it returns the points that finished (complete() false), as
// keep_finished does, whatever that flag says.
SweepReport run_sweep(const std::string& scenario_path, const SweepOptions& options,
                      const Catalog& catalog, WorkShare& share, const SweepControl& control = {});

// The same sweep over a scenario already in memory (as read from its file, before
// `options.overrides`): `base_dir` resolves its relative paths and `origin` names it in error
// messages, as parse_scenario takes them. Returns nullopt when control.should_stop() stopped
// it, unless control.keep_finished. Throws ConfigError like the file form.
std::optional<SweepReport> run_sweep(const nlohmann::json& scenario, const std::string& base_dir,
                                     const std::string& origin, const SweepOptions& options,
                                     const Catalog& catalog, const SweepControl& control);

}  // namespace servesim
