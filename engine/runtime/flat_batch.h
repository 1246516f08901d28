// FlatBatch: a SchedulerOutput laid out as the rows of one forward pass — prefill entries
// first, then decodes, so each attention call sees contiguous rows — with every row's token
// id, position and KV-cache slot, the attention sequences of both halves, and the row of each
// sequence that samples. Speculative verifies (1 + k rows) go with the prefills. Both runners (CPU
// and CUDA) build their step from it, so their batches agree row for row.
//
// Ownership: a value; `prefill` and `decode` borrow the block tables of the SchedulerOutput
// it was built from (valid until that output changes). Not thread-safe. Capacities only grow.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/sched/scheduler.h"
#include "kernels/paged_attention.h"

namespace servesim {

struct FlatBatch {
  int64_t num_rows = 0;
  int64_t num_prefill_rows = 0;            // rows [0, num_prefill_rows) belong to prefills
  int num_samples = 0;                     // rows that sample (sample_rows.size())
  std::vector<int32_t> token_ids;          // (num_rows)
  std::vector<int32_t> positions;          // (num_rows)
  std::vector<int64_t> slots;              // (num_rows) KV cache slot of each row
  std::vector<AttentionSequence> prefill;  // prefill entries, rows in order
  std::vector<AttentionSequence> decode;   // decode entries, after all prefill rows
  // (num_samples) rows whose logits are wanted: the last row of each sampling entry, and all
  // 1 + num_spec_tokens rows of a speculative verify (their order in the batch).
  std::vector<int64_t> sample_rows;

  // Lays out `output`; tokens[i] is the full token list of output.sequences[i]. Throws
  // ConfigError for a position at or beyond max_positions (naming `model_name`), and
  // std::invalid_argument (prefixed by `caller`) for a token list or block table too short or
  // a block id outside [0, num_blocks).
  void build(const SchedulerOutput& output, std::span<const std::span<const int32_t>> tokens,
             int block_size, int64_t num_blocks, int max_positions, const std::string& model_name,
             const char* caller);
};

}  // namespace servesim
