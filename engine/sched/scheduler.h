// Scheduler: decides, step by step, which sequences run and how many tokens each computes,
// and keeps their KV blocks (vLLM vllm/v1/core/sched/scheduler.py). Both the engine and the
// simulator drive it the same way:
//
//   scheduler.add_request(std::move(req));          // any time; may reject at once
//   const SchedulerOutput& out = scheduler.schedule();
//   ... run the step (model or cost model) ...
//   scheduler.update(out, result);                  // sampled tokens -> stops, frees
//   for (const FinishedRequest& f : scheduler.finished()) ...
//
// The scheduler never reads a clock. Policies (SchedulerConfig::policy, queue_order) are
// described in docs/scheduler.md. schedule() + update() cost O(scheduled sequences) and do not
// allocate once the slab, queues and output have reached their peak sizes.
//
// Contract:
//  - update() must be given the output of the latest schedule() and be called once per
//    schedule(); schedule() may not be called twice without an update() in between.
//  - The SchedulerOutput reference and the block_table spans in it stay valid until the next
//    schedule() call.
// Not thread-safe: one thread drives one Scheduler.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/sched/host_kv_tier.h"
#include "engine/sched/kv_cache_manager.h"
#include "engine/sched/request.h"
#include "engine/sched/scheduler_config.h"
#include "engine/sched/scheduler_output.h"
#include "engine/sched/sequence.h"
#include "engine/sched/waiting_queue.h"

namespace servesim {

class Scheduler {
 public:
  // Throws ConfigError (config.validate()).
  explicit Scheduler(const SchedulerConfig& config);

  const SchedulerConfig& config() const { return config_; }

  // Queues a request. Returns false if it was rejected at once (it then appears in
  // finished() with status kRejected and a reason): empty prompt, max_output_tokens < 1,
  // prompt not shorter than max_model_len, or a sequence that could never fit the KV cache
  // even alone. Throws std::invalid_argument if the id is already live.
  bool add_request(Request request);
  // Why add_request would refuse `request` (the reason it reports), nullopt if it would not.
  std::optional<std::string> refusal(const Request& request) const;

  const SchedulerOutput& schedule();
  void update(const SchedulerOutput& output, const StepResult& result);

  // Finishes a live request with reason kAbort and frees its blocks. Returns false when the
  // id is unknown (already finished). Between schedule() and update() the aborted sequence's
  // entry is skipped by update() (its sampled token, if any, is still consumed). A finished
  // request whose blocks are held for a decode instance has them freed (release_kv()).
  bool abort(uint64_t request_id);

  // Disaggregated prefill (Request::kv_transfer). The prompt KV of a kLoadPrompt request
  // announced in SchedulerOutput::kv_loads has arrived: it becomes schedulable, at the front of
  // the queue, with all but its last prompt token computed (vLLM recomputes that one to sample
  // the first output token). False when the id is not loading (aborted meanwhile).
  bool finish_kv_load(uint64_t request_id);
  // Frees the blocks a finished kSendAfterFinish request kept for its decode instance. False
  // when the id holds none.
  bool release_kv(uint64_t request_id);
  // A waiting request that cannot get blocks while nothing runs would wait for ever if the
  // blocks it needs are held by requests that finished a KV load and wait in the queue (it
  // may be one of them): those give their blocks up, to be loaded or computed again. Only
  // while nothing runs and no step is pending; true when any did. Called by schedule() and by
  // a driver whose step preempted every running request (sim/serving/replica.cpp).
  bool release_waiting_blocks();

  // KV offload (SchedulerConfig::num_host_kv_blocks > 0). A request admitted with blocks after
  // its GPU prefix hit in the host tier loads them (a from_host entry of kv_loads, then
  // finish_kv_load()) instead of computing them; every block a step fills is offered to the
  // host tier (SchedulerOutput::num_host_store_blocks). The stores of output `step` and of
  // every step before it are done: their blocks become loadable, and finished requests that
  // kept their blocks for them are freed (vLLM 0.11 frees them only once stored).
  void complete_host_stores(uint64_t step);
  const HostKvTier& host_kv() const { return host_; }

  // Static policy: the caller's gather timeout expired, start a batch with what is waiting
  // (even if fewer than static_batch_size). With no_more_arrivals, every later batch also
  // starts without waiting to fill up (the caller knows nothing else will arrive). No effect
  // under the other policies.
  void release_static_batch(bool no_more_arrivals = false);
  // Static policy: true while requests wait for a batch to start (no batch running, no release
  // pending); the caller's gather timer runs during this time.
  bool static_batch_gathering() const;

  // Live requests (waiting, loading KV or running); held blocks of finished ones do not count.
  bool has_unfinished() const { return num_live_ > 0; }
  SchedulerStats stats() const;
  const SpecDecodeCounters& spec_decode_counters() const { return spec_counters_; }

  // After update(): the requests that left in it, plus those rejected or aborted since the
  // previous update() returned; a caller reading it after every update() sees each request
  // once. Entries are dropped at the start of the next update(); rejections and aborts in
  // between are appended at once (so right after add_request() the list also still holds the
  // previous update's entries).
  const std::vector<FinishedRequest>& finished() const { return finished_; }

  // Inspection (tests, traces). nullptr when the id is not live; the pointer is valid until the
  // next add_request() (the slab may grow).
  const Sequence* find(uint64_t request_id) const;
  const KVCacheManager& kv_cache() const { return kv_; }
  std::span<const int32_t> running_slots() const { return running_; }
  // Speculative decoding: the draft ids output entry i verifies (num_spec_tokens of them),
  // in position order after the entry's known tokens. Valid until update().
  std::span<const int32_t> scheduled_spec_tokens(size_t i) const;
  const Sequence& slot(int32_t s) const { return slab_[s]; }

 private:
  enum class RunFilter { kAll, kPrefillOnly, kDecodeOnly };
  struct SpecCursor {  // read positions in a speculative StepResult's flat arrays
    size_t entry = 0;  // sampling entries seen
    size_t token = 0;  // into sampled_token_ids
    size_t draft = 0;  // into draft_token_ids
  };

  int32_t acquire_slot();
  void release_slot(int32_t s);
  WaitingKey key_of(const Sequence& seq) const {
    return WaitingKey{seq.priority, seq.arrival_s, seq.arrival_order};
  }
  bool is_prefill_phase(const Sequence& seq) const {
    return seq.num_computed_tokens < seq.num_prompt_tokens ||
           seq.num_computed_tokens + 1 < seq.num_tokens();
  }
  // The most tokens a request's sequence can reach and the KV blocks it then holds.
  struct Extent {
    int64_t longest = 0;  // tokens
    int64_t blocks = 0;
  };
  Extent extent_of(const Request& request) const;
  void reject(const Request& request, std::string reason);
  void schedule_running(RunFilter filter, int& budget, bool& preempted);
  void schedule_waiting(int& budget);
  bool start_kv_load(int32_t s);
  // KV offload: starts loading the host tier's blocks after the GPU hit `hit` (tokens) and
  // returns true, or returns false (nothing changed) when the tier has none of them; with
  // `blocked` set the request must wait (no blocks for the load, or too many loads in flight).
  bool start_host_load(int32_t s, int hit, bool& blocked);
  void offer_to_host(Sequence& seq);
  void unpin_host_load(Sequence& seq);
  // Abort with the step in flight: frees the host blocks this step was going to fill.
  void cancel_uncomputed_stores(Sequence& seq);
  bool resume_with_blocks(int32_t s, int& budget);
  bool waits_with_blocks(int32_t s, uint32_t generation) const;
  void form_static_batch();
  int32_t pick_victim() const;  // index into running_
  void preempt(size_t running_index, int& budget);
  void emit(int32_t s, int num_new_tokens, int num_hit, bool admitted, int num_spec = 0);
  // Speculative decoding: caps n (tokens to schedule, drafts included) at max_model_len and
  // returns how many of them are drafts.
  int spec_tokens_fitting(const Sequence& seq, int& n) const;
  FinishReason check_stop(const Sequence& seq, int32_t token) const;
  // Speculative update of output entry i: accepts its sampled run (rolling back the KV of
  // rejected drafts), stops inside it, takes the next drafts. Returns the finish reason.
  FinishReason update_speculative(size_t i, Sequence& seq, const StepResult& result,
                                  SpecCursor& cursor);
  void check_speculative_result(const StepResult& result, size_t num_samples) const;
  void unemit(int32_t s, int& budget);
  void finish(int32_t s, FinishReason reason);
  bool has_prefill_work() const;

  SchedulerConfig config_;
  KVCacheManager kv_;
  HostKvTier host_;
  // KV offload: hashes of the stores in flight, step by step in order (FIFO, as one DMA
  // stream copies them); entries before host_store_head_ are done.
  struct HostStoreBatch {
    uint64_t step;
    size_t end;  // one past its last hash in host_store_hashes_
  };
  std::vector<BlockHash> host_store_hashes_;
  std::vector<HostStoreBatch> host_store_batches_;
  size_t host_store_head_ = 0;  // into host_store_batches_
  uint64_t host_stores_done_step_ = 0;
  std::vector<std::pair<int32_t, uint64_t>> held_for_store_;  // (slot, request id)
  // (slot, generation) of waiting requests that hold blocks after a KV load; entries go stale
  // when the request resumes or leaves.
  std::vector<std::pair<int32_t, uint32_t>> waiting_with_blocks_;
  int64_t host_hit_tokens_ = 0;
  int64_t host_stored_blocks_ = 0;
  std::vector<Sequence> slab_;
  std::vector<int32_t> free_slots_;
  FlatIdMap id_to_slot_;
  std::vector<int32_t> running_;  // slots in admission order
  WaitingQueue waiting_;
  int64_t num_live_ = 0;
  uint64_t next_arrival_order_ = 0;

  // Static policy.
  SlotDeque static_pending_;  // members of the current batch not (re)admitted yet
  int static_members_ = 0;    // members of the current batch not finished yet
  bool static_release_ = false;
  bool static_no_more_arrivals_ = false;

  // Per step.
  SchedulerOutput output_;
  struct OutputRef {
    int32_t slot;         // the sequence of each output entry
    uint32_t generation;  // its slot's generation at schedule(): detects an abort in between
  };
  std::vector<OutputRef> output_refs_;
  std::vector<int32_t> output_index_of_slot_;  // -1 when not scheduled this step
  std::vector<int32_t> hit_blocks_;
  bool awaiting_update_ = false;

  std::vector<FinishedRequest> finished_;
  size_t finished_reported_ = 0;  // entries present when the last update() returned

  int64_t num_steps_ = 0;
  int64_t num_preemptions_total_ = 0;
  int64_t num_finished_ = 0;
  int64_t num_aborted_ = 0;
  int64_t num_rejected_ = 0;
  int64_t num_draft_tokens_ = 0;
  int64_t num_accepted_tokens_ = 0;
  SpecDecodeCounters spec_counters_;
  int num_loading_kv_ = 0;
  int num_held_kv_ = 0;
};

}  // namespace servesim
