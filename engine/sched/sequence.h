// Sequence: the scheduler's live state of one request (vLLM's v1 Request object): its tokens
// (prompt then outputs), how many of them are in the KV cache, its blocks and its status.
//
// Sequences live in the Scheduler's slab, indexed by slot; a slot is reused after the request
// leaves and keeps the capacity of its vectors, so steady-state operation does not allocate.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/sched/kv_cache_manager.h"
#include "engine/sched/request.h"

namespace servesim {

struct Sequence {
  // Hot: read or written for every scheduled sequence in every step.
  uint64_t request_id = 0;
  int num_computed_tokens = 0;  // tokens whose KV is in the cache (or computed this step)
  int num_prompt_tokens = 0;
  int max_output_tokens = 0;
  uint32_t generation = 0;  // bumped each time the slot is released
  RequestStatus status = RequestStatus::kWaiting;
  bool ignore_eos = false;
  bool in_static_batch = false;  // static policy: member of the batch being run
  KvTransfer kv_transfer = KvTransfer::kNone;
  bool kv_held = false;         // finished, blocks kept for the decode instance (kSendAfterFinish)
  std::vector<int32_t> tokens;  // prompt, then sampled outputs
  KVSequenceState kv;
  std::vector<int32_t> stop_token_ids;
  // Cold: ordering and accounting.
  int priority = 0;
  double arrival_s = 0;
  uint64_t arrival_order = 0;  // add_request() counter: the final tie-breaker
  int num_preemptions = 0;
  bool admitted_once = false;
  int num_cached_prompt_tokens = 0;  // prefix hit at the first admission
  // Speculative decoding: drafts proposed after the last step, verified in the next one
  // (vLLM Request.spec_token_ids); empty otherwise, and cleared by preemption.
  std::vector<int32_t> spec_token_ids;
  // KV offload: full blocks offered to the host tier so far (vLLM's _next_stored_block_idx),
  // the host blocks a load in flight reads (pinned; they follow the num_computed_tokens of the
  // GPU hit), and the last step whose stores read this sequence's blocks (a finished sequence
  // keeps its blocks until they are done: vLLM delays the free).
  int num_host_offered_blocks = 0;
  int host_load_blocks = 0;
  uint64_t last_host_store_step = 0;
  // Gave up its loaded blocks (Scheduler::release_waiting_blocks): computes at its next
  // admission instead of loading again, which could repeat the same standstill.
  bool skip_host_load = false;

  int num_tokens() const { return static_cast<int>(tokens.size()); }
  int num_output_tokens() const { return num_tokens() - num_prompt_tokens; }
  // Tokens to compute before the sequence can sample again.
  int num_uncomputed_tokens() const { return num_tokens() - num_computed_tokens; }
};

}  // namespace servesim
