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
// no control. Thread-safety: run_sweep is re-entrant; SweepReport is a plain value.
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
  std::vector<SweepPoint> points;  // in sweep_points() order

  nlohmann::json to_json() const;
  std::string to_csv() const;    // header + one line per point
  std::string to_table() const;  // aligned, for the terminal
};

// Loads the scenario once, then runs every point. Throws ConfigError for a bad scenario,
// axis or override.
SweepReport run_sweep(const std::string& scenario_path, const SweepOptions& options,
                      const Catalog& catalog);

// The same sweep computed by every rank of `share` together (point i runs on rank
// i % size); every rank gets the whole report, or the same ConfigError.
SweepReport run_sweep(const std::string& scenario_path, const SweepOptions& options,
                      const Catalog& catalog, WorkShare& share);

// Progress and stopping for the in-memory run_sweep. Both callbacks run on the sweep's worker
// threads, several at once, so they must be thread-safe; should_stop is polled every few
// thousand events of each running point, so it must be cheap (an atomic load). Either may be
// empty.
struct SweepControl {
  // After each point (run or failed): points done so far, and the grid's size.
  std::function<void(size_t done, size_t total)> on_point;
  // True stops the sweep: points not yet started are skipped, running ones stop early.
  std::function<bool()> should_stop;
};

// The same sweep over a scenario already in memory (as read from its file, before
// `options.overrides`): `base_dir` resolves its relative paths and `origin` names it in error
// messages, as parse_scenario takes them. Returns nullopt when control.should_stop() stopped
// it (no partial report). Throws ConfigError like the file form.
std::optional<SweepReport> run_sweep(const nlohmann::json& scenario, const std::string& base_dir,
                                     const std::string& origin, const SweepOptions& options,
                                     const Catalog& catalog, const SweepControl& control);

}  // namespace servesim
