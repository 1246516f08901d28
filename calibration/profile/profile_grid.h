// ProfileGrid: the batch shapes `servesim calibrate profile` measures — prefill chunks of
// growing size (with the first size past the small-batch GEMM kernel) at several cached
// contexts (one and several sequences per step), decode
// batches at several contexts, and decodes mixed with a prefill chunk — so every feature of
// every op (models/cost_features.h) varies independently across the grid and the fit is
// well posed. Shapes are listed in a fixed order; their index identifies them in a run
// directory, so a grid must be rebuilt from the same options to resume.
//
// Plain values; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "models/batch_shape.h"
#include "models/profile_shape.h"

namespace servesim {

struct ProfileGridOptions {
  int max_tokens = 512;    // largest prefill chunk, tokens. REQUIRES: >= 16
  int max_seqs = 32;       // largest decode batch. REQUIRES: >= 1
  int max_context = 1024;  // largest context + new tokens of one sequence. REQUIRES: >= 64
  bool quick = false;      // fewer points per axis (CI, smoke runs)

  nlohmann::json to_json() const;
  // Throws ConfigError naming the --max-* flag that is out of range.
  void validate() const;
};

std::vector<ProfileShape> make_profile_grid(const ProfileGridOptions& options);

// Every sequence samples (a prefill chunk as the last one of its prompt).
BatchShape to_batch_shape(const ProfileShape& shape);

}  // namespace servesim
