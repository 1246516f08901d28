// BatchShape: what a CostModel sees of one forward step — the sequences scheduled in it,
// aggregated into a handful of sums so that predicting the step costs O(1) however many
// sequences it holds. The caller builds it in O(sequences) with add_sequence().
//
// Plain value, no ownership, thread-compatible (one writer, or many readers).
//
// Invariants (kept by add_sequence; hold for a default-constructed shape):
//   1. num_seqs == num_prefill_seqs + num_decode_seqs.
//   2. num_tokens == prefill_tokens + decode_tokens.
//   3. The windowed_* sums are <= their unwindowed counterparts, and equal them when
//      sliding_window == 0.
#pragma once

#include <cstdint>

namespace servesim {

struct BatchShape {
  // Sliding attention window, tokens, of the model the shape is built for; 0 = none. Set it
  // (from ModelSpec::sliding_window) before adding sequences so the windowed sums below are
  // exact per sequence; clear() keeps it. With 0 on a sliding-window model the cost model
  // falls back to capping the mean context, which over-estimates mixed batches.
  int sliding_window = 0;

  int num_seqs = 0;
  int num_prefill_seqs = 0;  // sequences computing prompt tokens this step (chunks included)
  int num_decode_seqs = 0;   // sequences computing exactly one generated token
  int64_t num_tokens = 0;    // tokens computed this step (prefill + decode)
  int64_t prefill_tokens = 0;
  int64_t decode_tokens = 0;
  // Sum over prefill sequences of new * (context + (new + 1) / 2): the query-key pairs causal
  // attention scores, i.e. sum of the key counts seen by each new query position.
  double prefill_attention_pairs = 0;
  int64_t prefill_kv_tokens = 0;      // sum over prefill seqs of (context + new): KV read/written
  int64_t decode_context_tokens = 0;  // sum over decode seqs of (context + 1): KV read
  int num_sampled = 0;  // rows that sample a token (LM head + sampler): sequences + drafts

  // The same three sums with every query's keys capped at sliding_window.
  double windowed_prefill_attention_pairs = 0;
  int64_t windowed_prefill_kv_tokens = 0;
  int64_t windowed_decode_context_tokens = 0;

  // Adds one sequence: num_new_tokens computed this step on top of num_context_tokens already
  // in its KV cache. REQUIRES: num_new_tokens >= 1, num_context_tokens >= 0; a decode
  // (is_prefill false) computes one token plus num_spec_tokens speculative drafts it
  // verifies, each of which needs logits (num_sampled counts 1 + num_spec_tokens rows). Their
  // attention reads the sequence's KV once; decode attention FLOPs are counted per key, which
  // undercounts a verify's (k + 1) queries, still far below the compute roof at k <= 16.
  void add_sequence(int num_new_tokens, int num_context_tokens, bool is_prefill, bool samples,
                    int num_spec_tokens = 0);

  // Empties the shape for the next step; keeps sliding_window.
  void clear();
};

}  // namespace servesim
