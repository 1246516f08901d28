// ProfileRun: the run directory `servesim calibrate profile` writes and `calibrate fit` reads.
//   DIR/environment.json  model, backend, device, threads, dtypes, grid, versions, date,
//                         the device's measured bandwidth and GEMM rate
//   DIR/samples.jsonl     one measured step per line:
//     {"shape":3,"repeat":0,"seqs":[[new,context,prefill],...],"step_s":..,"ops_s":{..}}
// Lines are appended and flushed one at a time, so an interrupted profile leaves at worst a
// partial last line, which loading drops (and counts); any other malformed line is a
// corrupt directory and a one-line ConfigError naming the line.
//
// Plain values; functions are thread-safe on distinct directories.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibration/profile/profile_grid.h"
#include "engine/runtime/model_runner.h"

namespace servesim {

inline constexpr const char* kEnvironmentFile = "environment.json";
inline constexpr const char* kSamplesFile = "samples.jsonl";

struct ProfileSample {
  int shape = 0;   // index into the grid
  int repeat = 0;  // 0-based
  ProfileShape seqs;
  double step_s = 0;  // seconds: the forward pass and sampling
  OpSeconds op_s{};   // seconds per op
};

struct ProfileRun {
  nlohmann::json environment;
  std::vector<ProfileSample> samples;
  int dropped_partial_lines = 0;  // an interrupted write at the end (0 or 1)
};

std::string sample_to_json_line(const ProfileSample& sample);  // no newline

// Throws ConfigError when the directory, its environment or a sample line is missing or
// malformed, saying what to re-run.
ProfileRun load_profile_run(const std::string& dir);

}  // namespace servesim
