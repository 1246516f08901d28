#include "engine/runtime/shape_batch.h"

namespace servesim {

ShapeBatch::ShapeBatch(const ProfileShape& shape, int block_size, int vocab) {
  int32_t next_block = 1;  // block 0 is the null block
  tables_.resize(shape.size());
  tokens_.resize(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    const ShapeSequence& s = shape[i];
    const int total = s.context + s.new_tokens;
    const int blocks = (total + block_size - 1) / block_size;
    for (int b = 0; b < blocks; ++b) tables_[i].push_back(next_block++);
    for (int t = 0; t < total; ++t) {
      tokens_[i].push_back(static_cast<int32_t>((7 * t + 13 * static_cast<int>(i)) % vocab));
    }
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    const ShapeSequence& s = shape[i];
    ScheduledSequence q;
    q.request_id = i + 1;
    q.num_new_tokens = s.new_tokens;
    q.num_computed_tokens = s.context;
    q.num_prompt_tokens = s.prefill ? s.context + s.new_tokens : s.context;
    q.is_prefill = s.prefill;
    q.samples = true;
    q.block_table = tables_[i];
    output_.sequences.push_back(q);
    output_.total_num_tokens += s.new_tokens;
    (s.prefill ? output_.num_prefill_sequences : output_.num_decode_sequences) += 1;
    spans_.emplace_back(tokens_[i]);
  }
  output_.step = 1;
}

int64_t ShapeBatch::blocks_needed(const ProfileShape& shape, int block_size) {
  int64_t n = 0;
  for (const ShapeSequence& s : shape)
    n += (s.context + s.new_tokens + block_size - 1) / block_size;
  return n;
}

}  // namespace servesim
