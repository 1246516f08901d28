#include "engine/runtime/flat_batch.h"

#include <stdexcept>

#include "models/config_error.h"

namespace servesim {
namespace {

template <typename T>
void grow(std::vector<T>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
}

// A speculative verify computes several rows of one sequence under a causal mask, as a
// prefill chunk does: it goes with the prefills.
bool in_prefill_half(const ScheduledSequence& s) {
  return s.is_prefill || s.num_spec_tokens > 0;
}

}  // namespace

void FlatBatch::build(const SchedulerOutput& output,
                      std::span<const std::span<const int32_t>> tokens, int block_size,
                      int64_t num_blocks, int max_positions, const std::string& model_name,
                      const char* caller) {
  const std::string where = std::string(caller) + ": ";
  if (tokens.size() != output.sequences.size()) {
    throw std::invalid_argument(where + "one token list per scheduled sequence");
  }
  int64_t prefill_rows = 0, rows = 0;
  int samples = 0;
  for (const ScheduledSequence& s : output.sequences) {
    rows += s.num_new_tokens;
    if (in_prefill_half(s)) prefill_rows += s.num_new_tokens;
    if (s.samples) samples += 1 + s.num_spec_tokens;
  }
  grow(token_ids, rows);
  grow(positions, rows);
  grow(slots, rows);
  num_rows = rows;
  num_prefill_rows = prefill_rows;
  num_samples = samples;
  prefill.clear();
  decode.clear();
  sample_rows.clear();

  int64_t next_prefill = 0, next_decode = prefill_rows;
  for (size_t i = 0; i < output.sequences.size(); ++i) {
    const ScheduledSequence& s = output.sequences[i];
    const std::span<const int32_t> toks = tokens[i];
    const int end = s.num_computed_tokens + s.num_new_tokens;
    if (static_cast<int64_t>(toks.size()) < end) {
      throw std::invalid_argument(where + "token list shorter than the step");
    }
    if (end > max_positions) {
      throw ConfigError("request " + std::to_string(s.request_id) + " reaches position " +
                        std::to_string(end - 1) + " beyond max_position_embeddings " +
                        std::to_string(max_positions) + " of model '" + model_name +
                        "'; lower max_model_len");
    }
    if (static_cast<int64_t>(s.block_table.size()) * block_size < end) {
      throw std::invalid_argument(where + "block table too short for the step");
    }
    for (int32_t b : s.block_table) {
      if (b < 0 || b >= num_blocks) {
        throw std::invalid_argument(where + "block id outside the KV cache");
      }
    }
    int64_t& row = in_prefill_half(s) ? next_prefill : next_decode;
    (in_prefill_half(s) ? prefill : decode)
        .push_back(AttentionSequence{row, s.num_new_tokens, end, s.block_table});
    for (int p = s.num_computed_tokens; p < end; ++p, ++row) {
      token_ids[static_cast<size_t>(row)] = toks[static_cast<size_t>(p)];
      positions[static_cast<size_t>(row)] = p;
      slots[static_cast<size_t>(row)] =
          static_cast<int64_t>(s.block_table[static_cast<size_t>(p / block_size)]) * block_size +
          p % block_size;
    }
    if (s.samples) {
      for (int64_t r = row - 1 - s.num_spec_tokens; r < row; ++r) sample_rows.push_back(r);
    }
  }
}

}  // namespace servesim
