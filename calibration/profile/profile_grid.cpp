#include "calibration/profile/profile_grid.h"

#include <algorithm>

#include "models/config_error.h"
#include "models/cost_features.h"

namespace servesim {
namespace {

// start, 2 start, 4 start, ... below `max`, then `max`; quick: every fourfold step.
std::vector<int> doubling(int start, int max, bool quick) {
  std::vector<int> v;
  for (int x = start; x < max; x *= quick ? 4 : 2) v.push_back(x);
  v.push_back(max);
  return v;
}

// Prefill chunk sizes: the doubling steps and, unless quick, the 1.5x points between them —
// GEMM kernels block rows by powers of two, and real chunks are rarely one — and the first
// size past kSmallBatchRows, where the CPU engine leaves its small-batch kernel: a GEMM's
// row scale (models/row_scale.h) would otherwise interpolate across that step.
std::vector<int> chunk_sizes(int max, bool quick) {
  std::vector<int> v = doubling(16, max, quick);
  if (quick) return v;
  const size_t n = v.size();
  for (size_t i = 0; i + 1 < n; ++i) {
    const int mid = v[i] + v[i] / 2;
    if (mid < v[i + 1]) v.push_back(mid);
  }
  const int past_small = static_cast<int>(kSmallBatchRows) + 1;
  if (past_small < max && std::find(v.begin(), v.end(), past_small) == v.end()) {
    v.push_back(past_small);
  }
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

nlohmann::json ProfileGridOptions::to_json() const {
  return {{"max_tokens", max_tokens},
          {"max_seqs", max_seqs},
          {"max_context", max_context},
          {"quick", quick}};
}

void ProfileGridOptions::validate() const {
  if (max_tokens < 16) throw ConfigError("--max-tokens must be >= 16 (tokens per step)");
  if (max_seqs < 1) throw ConfigError("--max-seqs must be >= 1 (sequences per step)");
  if (max_context < 64) throw ConfigError("--max-context must be >= 64 (tokens)");
  if (max_tokens > max_context) {
    throw ConfigError("--max-tokens (" + std::to_string(max_tokens) +
                      ") must be <= --max-context (" + std::to_string(max_context) + ")");
  }
}

std::vector<ProfileShape> make_profile_grid(const ProfileGridOptions& o) {
  o.validate();
  std::vector<ProfileShape> grid;
  const std::vector<int> chunks = chunk_sizes(o.max_tokens, o.quick);
  const std::vector<int> batches = doubling(1, o.max_seqs, o.quick);
  const std::vector<int> prefill_contexts = {0, o.max_context / 4, o.max_context / 2};
  std::vector<int> decode_contexts = {32, o.max_context / 8, o.max_context / 2, o.max_context - 1};
  if (o.quick) decode_contexts = {32, o.max_context / 4, o.max_context - 1};

  // Prefill: one chunk at each cached context that leaves room for it.
  for (int ctx : prefill_contexts) {
    for (int n : chunks) {
      if (ctx + n <= o.max_context) grid.push_back({{n, ctx, true}});
    }
  }
  // Several prompts in one step: the per-sequence cost apart from the tokens.
  for (int parts : {2, 4}) {
    const int n = o.max_tokens / parts;
    if (n >= 1) grid.push_back(ProfileShape(static_cast<size_t>(parts), {n, 0, true}));
  }
  // Decode batches.
  for (int ctx : decode_contexts) {
    for (int b : batches) grid.push_back(ProfileShape(static_cast<size_t>(b), {1, ctx, false}));
  }
  // Mixed: decodes riding along with a prefill chunk, as chunked prefill schedules them.
  const int mixed_ctx = o.max_context / 4;
  for (int b : {std::max(1, o.max_seqs / 4), o.max_seqs}) {
    for (int n : {std::max(16, o.max_tokens / 4), o.max_tokens}) {
      ProfileShape s(static_cast<size_t>(b), {1, mixed_ctx, false});
      s.push_back({n, 0, true});
      grid.push_back(std::move(s));
    }
  }
  return grid;
}

BatchShape to_batch_shape(const ProfileShape& shape) {
  BatchShape b;
  for (const ShapeSequence& s : shape) b.add_sequence(s.new_tokens, s.context, s.prefill, true);
  return b;
}

}  // namespace servesim
