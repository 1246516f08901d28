// What one scheduling step hands the executors and what they hand back: the data seam between
// the Scheduler and whatever runs the step (the engine's Runner, the simulator's
// SimulatedExecutor, cost-model batch shapes), plus the scheduler's running statistics.
// Executors need only this header, not the scheduler's internals.
//
// Plain values. A ScheduledSequence's block_table points into the scheduler's KV-cache
// manager and is valid until the next Scheduler::schedule().
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace servesim {

struct ScheduledSequence {
  uint64_t request_id = 0;
  int num_new_tokens = 0;       // tokens computed this step
  int num_computed_tokens = 0;  // context already in the KV cache before this step
  int num_prompt_tokens = 0;
  // The step computes already-known tokens: the prompt, or after a preemption the prompt and
  // earlier outputs (recompute). Always true in the step that admits the sequence (even when a
  // prefix hit leaves a single token); false for a plain one-token decode.
  bool is_prefill = false;
  // Produces a token this step: the step reaches the last known token.
  bool samples = false;
  int num_cached_tokens_hit = 0;  // prefix-cache hit applied at admission this step, else 0
  // Speculative decoding: draft tokens verified this step, the last num_spec_tokens of
  // num_new_tokens (Scheduler::scheduled_spec_tokens() has their ids); 0 otherwise.
  int num_spec_tokens = 0;
  // The sequence's block table (logical block -> physical block), covering at least
  // num_computed_tokens + num_new_tokens tokens. Valid until the next schedule().
  std::span<const int32_t> block_table;
};

// A KV load the scheduler started: blocks are allocated and `num_tokens` tokens of KV must
// arrive before Scheduler::finish_kv_load(). From a prefill instance (disaggregated decode
// instance: the whole prompt but a local prefix-cache hit), or with from_host from the host
// KV tier (KV offload: the blocks after the GPU prefix hit that the host tier holds).
struct KvLoad {
  uint64_t request_id = 0;
  int num_tokens = 0;
  bool from_host = false;
};

struct SchedulerOutput {
  std::vector<ScheduledSequence> sequences;  // running first, then newly admitted
  std::vector<KvLoad> kv_loads;              // started this schedule(); may come with no step
  std::vector<uint64_t> preempted_ids;       // preempted this step (back in the queue)
  int total_num_tokens = 0;                  // sum of num_new_tokens
  int num_prefill_sequences = 0;             // entries with is_prefill
  int num_decode_sequences = 0;              // entries without is_prefill
  // KV offload: full blocks this step copies to the host tier (GPU to host, alongside the
  // step); Scheduler::complete_host_stores(step) once they are there.
  int num_host_store_blocks = 0;
  uint64_t step = 0;  // 1 for the first schedule()
  bool empty() const { return sequences.empty(); }
};

struct StepResult {
  StepResult() = default;
  // The plain (non-speculative) result: one token per sampling entry.
  StepResult(std::vector<int32_t> sampled) : sampled_token_ids(std::move(sampled)) {}

  // One per entry of SchedulerOutput::sequences with samples == true, in that order; with
  // num_sampled_tokens, each entry's tokens back to back.
  std::vector<int32_t> sampled_token_ids;
  // Speculative decoding only; empty means one token per sampling entry. Per sampling entry,
  // the tokens it produced: 1 + its accepted drafts, between 1 and 1 + num_spec_tokens (vLLM
  // ModelRunnerOutput.sampled_token_ids, one list per request).
  std::vector<int32_t> num_sampled_tokens;
  // Speculative decoding only; empty means no drafts. Per sampling entry, the draft tokens
  // proposed for its next step (cut to num_speculative_tokens), their ids back to back in
  // draft_token_ids (vLLM Scheduler.update_draft_token_ids).
  std::vector<int32_t> num_draft_tokens;
  std::vector<int32_t> draft_token_ids;

  void clear() {
    sampled_token_ids.clear();
    num_sampled_tokens.clear();
    num_draft_tokens.clear();
    draft_token_ids.clear();
  }
};

// Speculative decoding by draft position, as vLLM's SpecDecodingStats (v1/spec_decode/metrics.py
// of 0.11: num_drafts, num_accepted_tokens_per_pos), plus the decodes that could have carried
// drafts: n-gram lookup finds no match on some of them. Cumulative over the scheduler's life.
struct SpecDecodeCounters {
  int64_t num_decodes = 0;  // sampling decode entries (no prefill): each could verify drafts
  int64_t num_drafts = 0;   // of those, entries that verified at least one draft
  // [p]: entries whose draft p + 1 was accepted (drafts 1..p were too). Size
  // num_speculative_tokens.
  std::vector<int64_t> num_accepted_per_position;
};

struct SchedulerStats {
  int num_running = 0;
  int num_waiting = 0;  // queued, including preempted requests, a static batch's rest and KV loads
  int num_loading_kv = 0;       // of those, waiting for their prompt's KV (kWaitingForRemoteKv)
  int num_held_kv = 0;          // finished requests whose blocks are kept: for a decode instance,
                                // or (KV offload) until their host stores are done
  int64_t kv_blocks_used = 0;   // blocks referenced by sequences
  int64_t kv_blocks_total = 0;  // usable blocks (num_gpu_blocks - 1: block 0 is reserved)
  int64_t kv_blocks_cached_free = 0;  // free blocks still holding a prefix-cache entry
  double kv_usage = 0;                // kv_blocks_used / kv_blocks_total (vLLM kv_cache_usage)
  int64_t prefix_cache_queries_tokens = 0;  // prompt tokens looked up at first admissions
  int64_t prefix_cache_hit_tokens = 0;      // of those, served from the cache
  int64_t num_preemptions_total = 0;
  int64_t num_steps = 0;     // schedule() calls
  int64_t num_finished = 0;  // finished with kStop or kLength
  int64_t num_aborted = 0;
  int64_t num_rejected = 0;
  int64_t num_evicted_blocks = 0;  // cached blocks reused for other content
  // Speculative decoding (vLLM spec_decode_num_draft_tokens / _num_accepted_tokens).
  int64_t num_draft_tokens = 0;     // drafts verified
  int64_t num_accepted_tokens = 0;  // of those, accepted
  // KV offload (host tier; vLLM OffloadingConnector).
  int64_t host_kv_blocks_total = 0;    // host blocks (num_host_kv_blocks)
  int64_t host_kv_blocks_used = 0;     // of those, holding KV or being written
  int64_t host_kv_hit_tokens = 0;      // prompt tokens loaded from the host instead of computed
  int64_t host_kv_stored_blocks = 0;   // blocks copied to the host tier
  int64_t host_kv_evicted_blocks = 0;  // host blocks reused for other content
  double prefix_cache_hit_rate() const {
    return prefix_cache_queries_tokens > 0
               ? static_cast<double>(prefix_cache_hit_tokens) / prefix_cache_queries_tokens
               : 0.0;
  }
};

}  // namespace servesim
