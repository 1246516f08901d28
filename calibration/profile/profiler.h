// Profiler: `servesim calibrate profile` — runs the engine's ModelRunner over a ProfileGrid
// of batch shapes (warm-up, then repeats), recording each step's time and per-op times into
// a run directory (profile_run.h), with the environment: model, backend, device, threads,
// dtypes, grid, servesim version and git revision, date, and the device's measured read
// bandwidth and GEMM rate.
//
// Repeats run in rounds: each round measures every shape once, in its own shuffled order
// (seeded), so a slow stretch of a shared machine costs one repeat of many shapes — which the
// fitter's medians drop — instead of every repeat of a few. A shape's warm-up steps run
// before its first measured step.
//
// Safe to interrupt: samples are appended and flushed one line at a time. Resumable: run
// again with the same options and directory and it measures only what is missing; with
// other options it refuses (one line saying which differs) rather than mixing runs.
//
// The shapes are built directly (block tables over a private KV cache, deterministic token
// ids), not through the scheduler, so each grid point is exactly the shape it names. Not
// thread-safe; one profile per directory at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "calibration/profile/profile_grid.h"
#include "models/model_spec.h"

namespace servesim {

class Catalog;

struct ProfilerOptions {
  std::string model;  // catalog name or model JSON. REQUIRES: set, unless model_spec is
  std::optional<ModelSpec> model_spec;  // the model itself (a scenario's); overrides `model`
  std::string backend = "cpu";          // "cpu" (or "cuda" in a CUDA build)
  std::string out_dir;                  // run directory, created when missing
  int threads = 1;                      // CPU threads. REQUIRES: >= 1
  int repeats = 3;                      // measured steps per shape. REQUIRES: >= 1
  int warmup = 1;                       // unmeasured steps per shape first. REQUIRES: >= 0
  int block_size = 16;                  // tokens per KV block
  uint64_t seed = 0;                    // random weights
  bool measure_device = true;           // bandwidth and GEMM rate (a few seconds)
  ProfileGridOptions grid;
};

struct ProfilerSummary {
  int shapes = 0;           // grid points
  int samples_written = 0;  // measured now
  int samples_resumed = 0;  // already in the directory
  double wall_s = 0;        // seconds this call took
};

// (steps measured or resumed, steps in all: shapes x repeats); called after each step.
using ProfileProgress = std::function<void(int done, int total)>;

// Throws ConfigError for bad options, an unsupported model or backend, or a directory that
// holds a profile of other options or of another grid (an older servesim's).
ProfilerSummary run_profile(const ProfilerOptions& options, const Catalog& catalog,
                            const ProfileProgress& progress = {});

}  // namespace servesim
