#include "engine/sched/scheduler.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace servesim {
namespace {

const SchedulerConfig& validated(const SchedulerConfig& config) {
  config.validate();
  return config;
}

}  // namespace

Scheduler::Scheduler(const SchedulerConfig& config)
    : config_(validated(config)),
      kv_(config.num_gpu_blocks, config.block_size, config.enable_prefix_caching),
      host_(config.num_host_kv_blocks),
      id_to_slot_(static_cast<size_t>(config.max_num_seqs) * 4),
      waiting_(config.queue_order),
      static_pending_(static_cast<size_t>(config.effective_static_batch_size())) {
  const size_t seqs = static_cast<size_t>(config_.max_num_seqs);
  slab_.reserve(seqs * 2);
  free_slots_.reserve(seqs * 2);
  running_.reserve(seqs);
  waiting_.reserve(seqs * 2);
  output_.sequences.reserve(seqs);
  output_.preempted_ids.reserve(seqs);
  output_refs_.reserve(seqs);
  output_index_of_slot_.reserve(seqs * 2);
  hit_blocks_.reserve(static_cast<size_t>(kv_.blocks_for_tokens(config_.max_model_len)));
  finished_.reserve(seqs);
  spec_counters_.num_accepted_per_position.assign(
      static_cast<size_t>(config_.num_speculative_tokens), 0);
}

int32_t Scheduler::acquire_slot() {
  if (!free_slots_.empty()) {
    const int32_t s = free_slots_.back();
    free_slots_.pop_back();
    return s;
  }
  slab_.emplace_back();
  output_index_of_slot_.push_back(-1);
  return static_cast<int32_t>(slab_.size() - 1);
}

void Scheduler::release_slot(int32_t s) {
  ++slab_[s].generation;
  free_slots_.push_back(s);
}

void Scheduler::reject(const Request& request, std::string reason) {
  FinishedRequest f;
  f.id = request.id;
  f.status = RequestStatus::kRejected;
  f.finish_reason = FinishReason::kRejected;
  f.reason = std::move(reason);
  f.num_prompt_tokens = static_cast<int>(request.prompt_token_ids.size());
  finished_.push_back(std::move(f));
  ++num_rejected_;
}

std::optional<std::string> Scheduler::refusal(const Request& request) const {
  const int64_t prompt = static_cast<int64_t>(request.prompt_token_ids.size());
  const int64_t max_len = config_.max_model_len;
  if (prompt == 0) return "prompt is empty";
  if (request.max_output_tokens < 1) {
    return "max_output_tokens must be at least 1 (got " +
           std::to_string(request.max_output_tokens) + ")";
  }
  if (prompt >= max_len) {
    return "prompt of " + std::to_string(prompt) + " tokens does not fit max_model_len " +
           std::to_string(max_len) + " with room for an output token";
  }
  const Extent e = extent_of(request);
  if (e.blocks > kv_.pool().num_usable_blocks()) {
    return "needs up to " + std::to_string(e.blocks) + " KV blocks (" + std::to_string(prompt) +
           " prompt + " + std::to_string(e.longest - prompt) +
           " output tokens) but num_gpu_blocks leaves only " +
           std::to_string(kv_.pool().num_usable_blocks());
  }
  return std::nullopt;
}

Scheduler::Extent Scheduler::extent_of(const Request& request) const {
  // The longest the sequence can become; the KV cache holds all but its last token, plus the
  // slots of drafts verified on top of it (never beyond max_model_len - 1).
  const int64_t max_len = config_.max_model_len;
  Extent e;
  e.longest = std::min(
      static_cast<int64_t>(request.prompt_token_ids.size()) + request.max_output_tokens, max_len);
  e.blocks =
      kv_.blocks_for_tokens(std::min(e.longest - 1 + config_.num_speculative_tokens, max_len - 1));
  return e;
}

bool Scheduler::add_request(Request request) {
  if (id_to_slot_.find(request.id) != FlatIdMap::kNotFound) {
    throw std::invalid_argument("Scheduler::add_request: request id " + std::to_string(request.id) +
                                " is already live");
  }
  if (std::optional<std::string> why = refusal(request)) {
    reject(request, std::move(*why));
    return false;
  }
  const int64_t prompt = static_cast<int64_t>(request.prompt_token_ids.size());
  const auto [longest, blocks] = extent_of(request);

  const int32_t s = acquire_slot();
  Sequence& seq = slab_[s];
  seq.request_id = request.id;
  seq.tokens.reserve(static_cast<size_t>(longest));
  seq.tokens.assign(request.prompt_token_ids.begin(), request.prompt_token_ids.end());
  seq.stop_token_ids.assign(request.stop_token_ids.begin(), request.stop_token_ids.end());
  seq.num_prompt_tokens = static_cast<int>(prompt);
  seq.max_output_tokens = request.max_output_tokens;
  seq.num_computed_tokens = 0;
  seq.priority = request.priority;
  seq.arrival_s = request.arrival_s;
  seq.arrival_order = next_arrival_order_++;
  seq.ignore_eos = request.ignore_eos;
  seq.status = RequestStatus::kWaiting;
  seq.num_preemptions = 0;
  seq.admitted_once = false;
  seq.num_cached_prompt_tokens = 0;
  seq.in_static_batch = false;
  seq.spec_token_ids.clear();
  seq.kv_transfer = request.kv_transfer;
  seq.kv_held = false;
  seq.num_host_offered_blocks = 0;
  seq.host_load_blocks = 0;
  seq.last_host_store_step = 0;
  seq.skip_host_load = false;
  seq.kv.reset(mix64(config_.hash_salt) ^ request.cache_salt);
  seq.kv.block_ids.reserve(static_cast<size_t>(blocks));
  seq.kv.block_hashes.reserve(static_cast<size_t>(blocks));
  id_to_slot_.insert(request.id, s);
  waiting_.add(s, key_of(seq));
  ++num_live_;
  return true;
}

const SchedulerOutput& Scheduler::schedule() {
  if (awaiting_update_) {
    throw std::logic_error("Scheduler::schedule: update() was not called for the previous step");
  }
  output_.sequences.clear();
  output_.preempted_ids.clear();
  output_.kv_loads.clear();
  output_refs_.clear();
  output_.total_num_tokens = 0;
  output_.num_prefill_sequences = 0;
  output_.num_decode_sequences = 0;
  output_.num_host_store_blocks = 0;
  output_.step = ++num_steps_;

  int budget = config_.max_num_batched_tokens;
  bool preempted = false;
  switch (config_.policy) {
    case SchedulingPolicy::kContinuous:
    case SchedulingPolicy::kStatic:
      schedule_running(RunFilter::kAll, budget, preempted);
      if (!preempted) schedule_waiting(budget);
      break;
    case SchedulingPolicy::kPrefillFirst:
      if (has_prefill_work()) {
        schedule_running(RunFilter::kPrefillOnly, budget, preempted);
        if (!preempted) schedule_waiting(budget);
      }
      if (output_.sequences.empty()) schedule_running(RunFilter::kDecodeOnly, budget, preempted);
      break;
  }
  if (host_.enabled()) {
    for (const OutputRef& ref : output_refs_) offer_to_host(slab_[ref.slot]);
    if (output_.num_host_store_blocks > 0) {
      host_store_batches_.push_back(HostStoreBatch{output_.step, host_store_hashes_.size()});
    }
  }
  awaiting_update_ = !output_.sequences.empty();
  return output_;
}

bool Scheduler::has_prefill_work() const {
  if (!waiting_.empty()) return true;
  for (int32_t s : running_) {
    if (is_prefill_phase(slab_[s])) return true;
  }
  return false;
}

void Scheduler::schedule_running(RunFilter filter, int& budget, bool& preempted) {
  const int threshold = config_.long_prefill_token_threshold;
  const bool speculative = config_.num_speculative_tokens > 0;
  size_t i = 0;
  while (i < running_.size() && budget > 0) {
    const int32_t s = running_[i];
    Sequence& seq = slab_[s];
    if (filter != RunFilter::kAll && is_prefill_phase(seq) != (filter == RunFilter::kPrefillOnly)) {
      ++i;
      continue;
    }
    int n = seq.num_uncomputed_tokens();
    // Checked on the config first: without speculation the drafts' cache line stays untouched.
    const bool drafts = speculative && !seq.spec_token_ids.empty();
    if (drafts) n += static_cast<int>(seq.spec_token_ids.size());
    if (threshold > 0 && n > threshold) n = threshold;
    n = std::min(n, budget);
    const int num_spec = drafts ? spec_tokens_fitting(seq, n) : 0;
    if (n <= 0) {
      ++i;
      continue;
    }
    bool scheduled = true;
    while (!kv_.allocate_slots(seq.kv, seq.tokens, seq.num_computed_tokens, n - num_spec, {},
                               num_spec)) {
      // Out of blocks: preempt by recompute until this sequence fits or is itself preempted.
      const size_t v = static_cast<size_t>(pick_victim());
      const int32_t victim = running_[v];
      preempt(v, budget);
      preempted = true;
      if (victim == s) {
        scheduled = false;
        break;
      }
      if (v < i) --i;
    }
    if (!scheduled) break;  // vLLM stops the running pass once the request preempted itself
    emit(s, n, 0, /*admitted=*/false, num_spec);
    budget -= n;
    ++i;
  }
}

int32_t Scheduler::pick_victim() const {
  if (config_.queue_order == QueueOrder::kFcfs) {
    return static_cast<int32_t>(running_.size() - 1);  // the most recently admitted
  }
  size_t best = 0;  // the largest (priority, arrival): lowest priority, latest arrival
  for (size_t j = 1; j < running_.size(); ++j) {
    if (key_of(slab_[running_[best]]) < key_of(slab_[running_[j]])) best = j;
  }
  return static_cast<int32_t>(best);
}

void Scheduler::preempt(size_t running_index, int& budget) {
  const int32_t s = running_[running_index];
  Sequence& seq = slab_[s];
  if (output_index_of_slot_[s] >= 0) {
    // Scheduled earlier in this step (priority victims): take the step back, including the
    // blocks allocate_slots() cached for tokens that will now not be computed.
    unemit(s, budget);
    kv_.uncache_uncomputed(seq.kv, seq.num_computed_tokens);
  }
  kv_.free(seq.kv);
  seq.status = RequestStatus::kPreempted;
  seq.num_computed_tokens = 0;
  seq.spec_token_ids.clear();  // drafts are for decodes; the recompute proposes anew
  ++seq.num_preemptions;
  ++num_preemptions_total_;
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(running_index));
  output_.preempted_ids.push_back(seq.request_id);
  if (seq.in_static_batch) {
    static_pending_.push_front(s);
  } else {
    waiting_.prepend(s, key_of(seq));
  }
}

int Scheduler::spec_tokens_fitting(const Sequence& seq, int& n) const {
  // vLLM V1 (scheduler.py, 0.11): never past max_model_len - 1, drafts cut to what fits.
  n = std::min(n, config_.max_model_len - 1 - seq.num_computed_tokens);
  return std::max(0, seq.num_computed_tokens + n - seq.num_tokens());
}

void Scheduler::emit(int32_t s, int num_new_tokens, int num_hit, bool admitted, int num_spec) {
  const Sequence& seq = slab_[s];
  output_index_of_slot_[s] = static_cast<int32_t>(output_.sequences.size());
  // Filled in place: building a temporary and copying it stalls on store forwarding.
  ScheduledSequence& e = output_.sequences.emplace_back();
  e.request_id = seq.request_id;
  e.num_new_tokens = num_new_tokens;
  e.num_computed_tokens = seq.num_computed_tokens;
  e.num_prompt_tokens = seq.num_prompt_tokens;
  e.is_prefill = admitted || is_prefill_phase(seq);
  e.samples = seq.num_computed_tokens + num_new_tokens >= seq.num_tokens();
  e.num_cached_tokens_hit = num_hit;
  e.num_spec_tokens = num_spec;
  e.block_table = std::span<const int32_t>(seq.kv.block_ids);
  output_refs_.push_back(OutputRef{s, seq.generation});
  output_.total_num_tokens += num_new_tokens;
  ++(e.is_prefill ? output_.num_prefill_sequences : output_.num_decode_sequences);
}

void Scheduler::unemit(int32_t s, int& budget) {
  const size_t idx = static_cast<size_t>(output_index_of_slot_[s]);
  const ScheduledSequence& e = output_.sequences[idx];
  budget += e.num_new_tokens;
  output_.total_num_tokens -= e.num_new_tokens;
  --(e.is_prefill ? output_.num_prefill_sequences : output_.num_decode_sequences);
  const auto at = static_cast<std::ptrdiff_t>(idx);
  output_.sequences.erase(output_.sequences.begin() + at);
  output_refs_.erase(output_refs_.begin() + at);
  for (size_t j = idx; j < output_refs_.size(); ++j) {
    output_index_of_slot_[output_refs_[j].slot] = static_cast<int32_t>(j);
  }
  output_index_of_slot_[s] = -1;
}

void Scheduler::form_static_batch() {
  const size_t batch = static_cast<size_t>(config_.effective_static_batch_size());
  if (waiting_.empty()) return;
  if (waiting_.size() < batch && !static_release_ && !static_no_more_arrivals_) return;
  static_release_ = false;
  const size_t n = std::min(batch, waiting_.size());
  for (size_t j = 0; j < n; ++j) {
    const int32_t s = waiting_.pop_front();
    slab_[s].in_static_batch = true;
    static_pending_.push_back(s);
  }
  static_members_ = static_cast<int>(n);
}

void Scheduler::schedule_waiting(int& budget) {
  const bool is_static = config_.policy == SchedulingPolicy::kStatic;
  if (is_static && static_members_ == 0) form_static_batch();
  const int threshold = config_.long_prefill_token_threshold;
  const size_t max_running = static_cast<size_t>(config_.max_num_seqs);
  while (budget > 0 && running_.size() < max_running) {
    if (is_static ? static_pending_.empty() : waiting_.empty()) break;
    const int32_t s = is_static ? static_pending_.front() : waiting_.front();
    Sequence& seq = slab_[s];
    if (!seq.kv.block_ids.empty() || seq.kv_transfer == KvTransfer::kLoadPrompt) {
      // Only disaggregated requests wait while holding blocks (their KV has been loaded).
      const bool taken =
          seq.kv.block_ids.empty() ? start_kv_load(s) : resume_with_blocks(s, budget);
      if (!taken && !release_waiting_blocks()) break;
      continue;
    }
    const int hit = kv_.get_computed_blocks(seq.kv, seq.tokens, hit_blocks_);
    if (host_.enabled() && !seq.skip_host_load) {
      bool blocked = false;
      if (start_host_load(s, hit, blocked)) continue;
      if (blocked) {
        if (release_waiting_blocks()) continue;
        break;
      }
    }
    int n = seq.num_tokens() - hit;
    if (threshold > 0 && n > threshold) n = threshold;
    if (!config_.enable_chunked_prefill && n > budget) break;
    n = std::min(n, budget);
    // No preemption to admit: a request that does not fit blocks the queue (vLLM).
    if (!kv_.allocate_slots(seq.kv, seq.tokens, 0, n, hit_blocks_)) {
      if (release_waiting_blocks()) continue;
      break;
    }
    if (is_static) {
      static_pending_.pop_front();
    } else {
      waiting_.pop_front();
    }
    if (kv_.prefix_caching_enabled()) {
      kv_.record_prefix_lookup(seq.num_tokens(), hit, seq.admitted_once);
    }
    if (!seq.admitted_once) {
      seq.admitted_once = true;
      seq.num_cached_prompt_tokens = hit;
    }
    seq.num_computed_tokens = hit;
    seq.skip_host_load = false;
    seq.status = RequestStatus::kRunning;
    running_.push_back(s);
    emit(s, n, hit, /*admitted=*/true);
    budget -= n;
  }
}

bool Scheduler::start_kv_load(int32_t s) {
  Sequence& seq = slab_[s];
  if (seq.admitted_once) {
    // Preempted after its load: the prompt is recomputed here like any other.
    seq.kv_transfer = KvTransfer::kNone;
    return true;
  }
  const int hit = kv_.get_computed_blocks(seq.kv, seq.tokens, hit_blocks_);
  const int to_load = seq.num_prompt_tokens - hit;
  if (!kv_.allocate_slots(seq.kv, seq.tokens, 0, to_load, hit_blocks_)) return false;
  // Cached once their KV is in, not now (vLLM 0.11 Scheduler: delay_cache_blocks): the next
  // allocate_slots() caches them again.
  kv_.uncache_uncomputed(seq.kv, hit);
  waiting_.pop_front();
  if (kv_.prefix_caching_enabled()) kv_.record_prefix_lookup(seq.num_tokens(), hit, false);
  seq.admitted_once = true;
  seq.num_cached_prompt_tokens = hit;
  seq.status = RequestStatus::kWaitingForRemoteKv;
  ++num_loading_kv_;
  output_.kv_loads.push_back(KvLoad{seq.request_id, to_load});
  return true;
}

bool Scheduler::start_host_load(int32_t s, int hit, bool& blocked) {
  Sequence& seq = slab_[s];
  const int bs = kv_.block_size();
  const int first = hit / bs;
  // The same bound as the GPU lookup: the last token is always computed.
  const int last = (seq.num_tokens() - 1) / bs;
  if (first >= last) return false;
  const std::span<const BlockHash> after_hit(seq.kv.block_hashes.data() + first,
                                             static_cast<size_t>(last - first));
  const int hits = host_.lookup(after_hit);
  if (hits == 0) return false;
  if (num_loading_kv_ >= config_.max_num_seqs) {
    // vLLM's OffloadingConnectorScheduler (max_concurrent_loads, recent main): at most
    // max_num_seqs loads in flight; the request waits for a later step.
    blocked = true;
    return false;
  }
  const int to_load = hits * bs;
  // A load takes the blocks it fills but no token budget: nothing is computed until the KV
  // is in (vLLM allocates the external tokens' slots at admission).
  if (!kv_.allocate_slots(seq.kv, seq.tokens, 0, to_load, hit_blocks_)) {
    blocked = true;
    return false;
  }
  kv_.uncache_uncomputed(seq.kv, hit);  // cached once loaded (delay_cache_blocks)
  waiting_.pop_front();
  kv_.record_prefix_lookup(seq.num_tokens(), hit, seq.admitted_once);
  if (!seq.admitted_once) {
    seq.admitted_once = true;
    seq.num_cached_prompt_tokens = hit + to_load;
  }
  seq.num_computed_tokens = hit;
  seq.host_load_blocks = hits;
  host_.pin(after_hit.first(static_cast<size_t>(hits)));
  // Blocks loaded from the host are there already (vLLM sets _next_stored_block_idx past them).
  seq.num_host_offered_blocks = std::max(seq.num_host_offered_blocks, first + hits);
  seq.status = RequestStatus::kWaitingForRemoteKv;
  ++num_loading_kv_;
  host_hit_tokens_ += to_load;
  output_.kv_loads.push_back(KvLoad{seq.request_id, to_load, /*from_host=*/true});
  return true;
}

void Scheduler::unpin_host_load(Sequence& seq) {
  if (seq.host_load_blocks == 0) return;
  host_.unpin(std::span<const BlockHash>(seq.kv.block_hashes)
                  .subspan(static_cast<size_t>(seq.num_computed_tokens / kv_.block_size()),
                           static_cast<size_t>(seq.host_load_blocks)));
  seq.host_load_blocks = 0;
}

void Scheduler::offer_to_host(Sequence& seq) {
  // Every block full once this step ran (allocate_slots cached it) goes to the host tier,
  // in order, as vLLM 0.11-0.14's OffloadingConnector stores a request's blocks as they fill.
  const int target = seq.kv.num_cached_blocks;
  if (target <= seq.num_host_offered_blocks) return;
  const std::span<const BlockHash> fresh(seq.kv.block_hashes.data() + seq.num_host_offered_blocks,
                                         static_cast<size_t>(target - seq.num_host_offered_blocks));
  const int entered = host_.prepare_store(fresh, host_store_hashes_);
  if (entered < 0) return;  // no room now; vLLM retries the same blocks next step
  seq.num_host_offered_blocks = target;
  if (entered == 0) return;
  seq.last_host_store_step = output_.step;
  output_.num_host_store_blocks += entered;
  host_stored_blocks_ += entered;
}

void Scheduler::cancel_uncomputed_stores(Sequence& seq) {
  if (seq.last_host_store_step != output_.step) return;
  const int first = seq.num_computed_tokens / kv_.block_size();
  if (first >= seq.num_host_offered_blocks) return;
  host_.cancel_store(std::span<const BlockHash>(seq.kv.block_hashes)
                         .subspan(static_cast<size_t>(first),
                                  static_cast<size_t>(seq.num_host_offered_blocks - first)));
  seq.num_host_offered_blocks = first;
}

void Scheduler::complete_host_stores(uint64_t step) {
  size_t begin = host_store_head_ == 0 ? 0 : host_store_batches_[host_store_head_ - 1].end;
  while (host_store_head_ < host_store_batches_.size() &&
         host_store_batches_[host_store_head_].step <= step) {
    const size_t end = host_store_batches_[host_store_head_].end;
    host_.complete_store(
        std::span<const BlockHash>(host_store_hashes_).subspan(begin, end - begin));
    begin = end;
    ++host_store_head_;
  }
  host_stores_done_step_ = std::max(host_stores_done_step_, step);
  if (host_store_head_ == host_store_batches_.size()) {
    host_store_batches_.clear();
    host_store_hashes_.clear();
    host_store_head_ = 0;
  } else if (host_store_head_ * 2 > host_store_batches_.size()) {
    // Drop the finished front so a link that never drains does not grow these without bound.
    host_store_hashes_.erase(host_store_hashes_.begin(),
                             host_store_hashes_.begin() + static_cast<std::ptrdiff_t>(begin));
    host_store_batches_.erase(
        host_store_batches_.begin(),
        host_store_batches_.begin() + static_cast<std::ptrdiff_t>(host_store_head_));
    for (HostStoreBatch& b : host_store_batches_) b.end -= begin;
    host_store_head_ = 0;
  }
  size_t kept = 0;
  for (const auto& [s, id] : held_for_store_) {
    const Sequence& seq = slab_[s];
    if (seq.request_id != id || !seq.kv_held) continue;  // freed already
    if (seq.last_host_store_step <= host_stores_done_step_) {
      release_kv(id);
    } else {
      held_for_store_[kept++] = {s, id};
    }
  }
  held_for_store_.resize(kept);
}

bool Scheduler::resume_with_blocks(int32_t s, int& budget) {
  Sequence& seq = slab_[s];
  int n = std::min(seq.num_uncomputed_tokens(), budget);
  const int threshold = config_.long_prefill_token_threshold;
  if (threshold > 0) n = std::min(n, threshold);
  if (!kv_.allocate_slots(seq.kv, seq.tokens, seq.num_computed_tokens, n)) return false;
  waiting_.pop_front();
  seq.status = RequestStatus::kRunning;
  running_.push_back(s);
  emit(s, n, 0, /*admitted=*/true);
  budget -= n;
  return true;
}

bool Scheduler::finish_kv_load(uint64_t request_id) {
  const int32_t s = id_to_slot_.find(request_id);
  if (s == FlatIdMap::kNotFound) return false;
  Sequence& seq = slab_[s];
  if (seq.status != RequestStatus::kWaitingForRemoteKv) return false;
  --num_loading_kv_;
  if (seq.host_load_blocks > 0) {
    const int loaded = seq.host_load_blocks * kv_.block_size();
    unpin_host_load(seq);
    seq.num_computed_tokens += loaded;
  } else {
    // vLLM 0.11 _update_waiting_for_remote_kv: a prompt loaded whole has its last token
    // recomputed, which samples the first output token.
    seq.num_computed_tokens = seq.num_prompt_tokens - 1;
  }
  seq.status = RequestStatus::kWaiting;
  waiting_.prepend(s, key_of(seq));
  if (waiting_with_blocks_.size() >= 2 * static_cast<size_t>(config_.max_num_seqs)) {
    std::erase_if(waiting_with_blocks_, [this](const auto& entry) {
      return !waits_with_blocks(entry.first, entry.second);
    });
  }
  waiting_with_blocks_.emplace_back(s, seq.generation);
  return true;
}

bool Scheduler::waits_with_blocks(int32_t s, uint32_t generation) const {
  const Sequence& seq = slab_[s];
  return seq.generation == generation && seq.status == RequestStatus::kWaiting &&
         !seq.kv.block_ids.empty();
}

bool Scheduler::release_waiting_blocks() {
  // Only when nothing runs: a running request will free blocks, so the queue can wait.
  if (!running_.empty() || !output_.sequences.empty()) return false;
  bool released = false;
  for (const auto& [s, generation] : waiting_with_blocks_) {
    if (!waits_with_blocks(s, generation)) continue;  // left, or resumed meanwhile
    Sequence& seq = slab_[s];
    // Its loaded KV is dropped as a preemption drops KV; it is loaded or computed again.
    kv_.free(seq.kv);
    seq.num_computed_tokens = 0;
    seq.kv_transfer = KvTransfer::kNone;
    seq.skip_host_load = true;
    released = true;
  }
  waiting_with_blocks_.clear();
  return released;
}

bool Scheduler::release_kv(uint64_t request_id) {
  const int32_t s = id_to_slot_.find(request_id);
  if (s == FlatIdMap::kNotFound || !slab_[s].kv_held) return false;
  Sequence& seq = slab_[s];
  kv_.free(seq.kv);
  seq.kv_held = false;
  --num_held_kv_;
  id_to_slot_.erase(request_id);
  release_slot(s);
  return true;
}

void Scheduler::update(const SchedulerOutput& output, const StepResult& result) {
  if (&output != &output_) {
    throw std::invalid_argument("Scheduler::update: not the output of this scheduler");
  }
  if (!awaiting_update_ && !output_.sequences.empty()) {
    throw std::logic_error("Scheduler::update: called twice for one schedule()");
  }
  size_t num_samples = 0;
  for (const ScheduledSequence& e : output_.sequences) num_samples += e.samples ? 1 : 0;
  const bool speculative = !result.num_sampled_tokens.empty() || !result.num_draft_tokens.empty();
  if (speculative) {
    check_speculative_result(result, num_samples);
  } else if (result.sampled_token_ids.size() != num_samples) {
    throw std::invalid_argument(
        "Scheduler::update: " + std::to_string(result.sampled_token_ids.size()) +
        " sampled tokens for " + std::to_string(num_samples) + " sampling sequences");
  }
  finished_.erase(finished_.begin(),
                  finished_.begin() + static_cast<std::ptrdiff_t>(finished_reported_));

  bool any_finished = false;
  size_t k = 0;
  SpecCursor cursor;
  for (size_t i = 0; i < output_.sequences.size(); ++i) {
    const ScheduledSequence& e = output_.sequences[i];
    const int32_t s = output_refs_[i].slot;
    Sequence& seq = slab_[s];
    output_index_of_slot_[s] = -1;
    FinishReason reason = FinishReason::kNone;
    if (speculative) {
      if (seq.generation != output_refs_[i].generation) {
        if (e.samples) update_speculative(i, seq, result, cursor);  // only advances the cursor
        continue;
      }
      seq.num_computed_tokens += e.num_new_tokens;
      if (!e.samples) continue;
      reason = update_speculative(i, seq, result, cursor);
    } else {
      const int32_t token = e.samples ? result.sampled_token_ids[k++] : 0;
      if (seq.generation != output_refs_[i].generation) continue;  // aborted meanwhile
      seq.num_computed_tokens += e.num_new_tokens;
      if (!e.samples) continue;
      seq.tokens.push_back(token);
      reason = check_stop(seq, token);
    }
    if (reason != FinishReason::kNone) {
      finish(s, reason);
      any_finished = true;
    }
  }
  if (any_finished) {
    std::erase_if(running_,
                  [this](int32_t s) { return slab_[s].status != RequestStatus::kRunning; });
  }
  awaiting_update_ = false;
  finished_reported_ = finished_.size();
}

FinishReason Scheduler::check_stop(const Sequence& seq, int32_t token) const {
  // The order of vLLM V1's check_stop (vllm/v1/core/sched/utils.py) in its v0.8-v0.10
  // releases: length limits first, then stop tokens. Later vLLM checks stop tokens first;
  // the two differ only in the finish reason of a stop token that lands on the length limit.
  if (seq.num_tokens() >= config_.max_model_len ||
      seq.num_output_tokens() >= seq.max_output_tokens) {
    return FinishReason::kLength;
  }
  if (!seq.ignore_eos) {
    for (int32_t stop : seq.stop_token_ids) {
      if (stop == token) return FinishReason::kStop;
    }
  }
  return FinishReason::kNone;
}

void Scheduler::check_speculative_result(const StepResult& result, size_t num_samples) const {
  const auto fail = [](const std::string& what) {
    throw std::invalid_argument("Scheduler::update: " + what);
  };
  const bool per_entry = !result.num_sampled_tokens.empty();
  if (per_entry && result.num_sampled_tokens.size() != num_samples) {
    fail(std::to_string(result.num_sampled_tokens.size()) + " sampled-token counts for " +
         std::to_string(num_samples) + " sampling sequences");
  }
  if (!result.num_draft_tokens.empty() && result.num_draft_tokens.size() != num_samples) {
    fail(std::to_string(result.num_draft_tokens.size()) + " draft counts for " +
         std::to_string(num_samples) + " sampling sequences");
  }
  size_t tokens = 0;
  size_t j = 0;
  for (const ScheduledSequence& e : output_.sequences) {
    if (!e.samples) continue;
    const int n = per_entry ? result.num_sampled_tokens[j] : 1;
    if (n < 1 || n > 1 + e.num_spec_tokens) {
      fail("request " + std::to_string(e.request_id) + " sampled " + std::to_string(n) +
           " tokens; 1 to " + std::to_string(1 + e.num_spec_tokens) + " allowed");
    }
    tokens += static_cast<size_t>(n);
    ++j;
  }
  if (result.sampled_token_ids.size() != tokens) {
    fail(std::to_string(result.sampled_token_ids.size()) +
         " sampled tokens where the counts add up to " + std::to_string(tokens));
  }
  size_t drafts = 0;
  for (int32_t d : result.num_draft_tokens) {
    if (d < 0) fail("negative draft count");
    drafts += static_cast<size_t>(d);
  }
  if (result.draft_token_ids.size() != drafts) {
    fail(std::to_string(result.draft_token_ids.size()) +
         " draft tokens where the counts add up to " + std::to_string(drafts));
  }
}

FinishReason Scheduler::update_speculative(size_t i, Sequence& seq, const StepResult& result,
                                           SpecCursor& cursor) {
  const ScheduledSequence& e = output_.sequences[i];
  const size_t j = cursor.entry++;
  const int num_sampled = result.num_sampled_tokens.empty() ? 1 : result.num_sampled_tokens[j];
  const int num_drafts = result.num_draft_tokens.empty() ? 0 : result.num_draft_tokens[j];
  const size_t first_token = cursor.token;
  const size_t first_draft = cursor.draft;
  cursor.token += static_cast<size_t>(num_sampled);
  cursor.draft += static_cast<size_t>(num_drafts);
  if (seq.generation != output_refs_[i].generation) return FinishReason::kNone;  // aborted
  // vLLM update_from_output: the KV of rejected drafts is rolled back, its slots kept.
  const int num_accepted = num_sampled - 1;
  seq.num_computed_tokens -= e.num_spec_tokens - num_accepted;
  num_draft_tokens_ += e.num_spec_tokens;
  num_accepted_tokens_ += num_accepted;
  if (!e.is_prefill) ++spec_counters_.num_decodes;
  if (e.num_spec_tokens > 0) {
    ++spec_counters_.num_drafts;
    for (int p = 0; p < num_accepted; ++p) {
      ++spec_counters_.num_accepted_per_position[static_cast<size_t>(p)];
    }
  }
  seq.spec_token_ids.clear();
  for (int t = 0; t < num_sampled; ++t) {
    const int32_t token = result.sampled_token_ids[first_token + static_cast<size_t>(t)];
    seq.tokens.push_back(token);
    // A stop inside the accepted run drops the tokens after it (vLLM _update_request_with_output).
    const FinishReason reason = check_stop(seq, token);
    if (reason != FinishReason::kNone) return reason;
  }
  const int keep = std::min(num_drafts, config_.num_speculative_tokens);
  const auto from = result.draft_token_ids.begin() + static_cast<std::ptrdiff_t>(first_draft);
  seq.spec_token_ids.assign(from, from + keep);
  return FinishReason::kNone;
}

std::span<const int32_t> Scheduler::scheduled_spec_tokens(size_t i) const {
  const Sequence& seq = slab_[output_refs_.at(i).slot];
  const size_t n = static_cast<size_t>(output_.sequences[i].num_spec_tokens);
  return std::span<const int32_t>(seq.spec_token_ids).first(std::min(n, seq.spec_token_ids.size()));
}

void Scheduler::finish(int32_t s, FinishReason reason) {
  Sequence& seq = slab_[s];
  if (awaiting_update_ && output_index_of_slot_[s] >= 0) {
    // Aborted between schedule() and update(): the step's blocks may never be computed.
    kv_.uncache_uncomputed(seq.kv, seq.num_computed_tokens);
    cancel_uncomputed_stores(seq);
    output_index_of_slot_[s] = -1;
  }
  const bool store_pending = seq.last_host_store_step > host_stores_done_step_;
  const bool hold = reason != FinishReason::kAbort &&
                    (seq.kv_transfer == KvTransfer::kSendAfterFinish || store_pending);
  if (!hold) kv_.free(seq.kv);
  FinishedRequest& f = finished_.emplace_back();
  f.id = seq.request_id;
  f.status = RequestStatus::kFinished;
  f.finish_reason = reason;
  f.reason.assign(finish_reason_name(reason));
  f.num_prompt_tokens = seq.num_prompt_tokens;
  f.num_output_tokens = seq.num_output_tokens();
  f.num_preemptions = seq.num_preemptions;
  f.num_cached_prompt_tokens = seq.num_cached_prompt_tokens;
  if (seq.in_static_batch) {
    seq.in_static_batch = false;
    --static_members_;
  }
  if (reason == FinishReason::kAbort) {
    ++num_aborted_;
  } else {
    ++num_finished_;
  }
  seq.status = RequestStatus::kFinished;
  --num_live_;
  if (hold) {
    seq.kv_held = true;  // the slot and its id stay until release_kv()
    ++num_held_kv_;
    if (store_pending && seq.kv_transfer != KvTransfer::kSendAfterFinish) {
      // vLLM 0.11 OffloadingConnector.request_finished: freed once its stores are done.
      held_for_store_.emplace_back(s, seq.request_id);
    }
    return;
  }
  id_to_slot_.erase(seq.request_id);
  release_slot(s);
}

bool Scheduler::abort(uint64_t request_id) {
  const int32_t s = id_to_slot_.find(request_id);
  if (s == FlatIdMap::kNotFound) return false;
  Sequence& seq = slab_[s];
  if (seq.kv_held) return release_kv(request_id);
  if (seq.status == RequestStatus::kRunning) {
    running_.erase(std::find(running_.begin(), running_.end(), s));
  } else if (seq.status == RequestStatus::kWaitingForRemoteKv) {
    --num_loading_kv_;
    unpin_host_load(seq);
  } else if (!waiting_.erase(s)) {
    static_pending_.erase(s);
  }
  finish(s, FinishReason::kAbort);
  return true;
}

void Scheduler::release_static_batch(bool no_more_arrivals) {
  if (config_.policy != SchedulingPolicy::kStatic) return;
  if (no_more_arrivals) static_no_more_arrivals_ = true;
  if (static_members_ == 0 && !waiting_.empty()) static_release_ = true;
}

bool Scheduler::static_batch_gathering() const {
  return config_.policy == SchedulingPolicy::kStatic && static_members_ == 0 && !static_release_ &&
         !static_no_more_arrivals_ && !waiting_.empty();
}

SchedulerStats Scheduler::stats() const {
  SchedulerStats st;
  st.num_running = static_cast<int>(running_.size());
  st.num_waiting = static_cast<int>(waiting_.size() + static_pending_.size()) + num_loading_kv_;
  st.num_loading_kv = num_loading_kv_;
  st.num_held_kv = num_held_kv_;
  const BlockPool& pool = kv_.pool();
  st.kv_blocks_used = pool.num_used_blocks();
  st.kv_blocks_total = pool.num_usable_blocks();
  st.kv_blocks_cached_free = pool.num_cached_free_blocks();
  st.kv_usage = pool.usage();
  st.prefix_cache_queries_tokens = kv_.prefix_stats().queries_tokens;
  st.prefix_cache_hit_tokens = kv_.prefix_stats().hit_tokens;
  st.num_preemptions_total = num_preemptions_total_;
  st.num_steps = num_steps_;
  st.num_finished = num_finished_;
  st.num_aborted = num_aborted_;
  st.num_rejected = num_rejected_;
  st.num_evicted_blocks = static_cast<int64_t>(pool.num_evictions());
  st.num_draft_tokens = num_draft_tokens_;
  st.num_accepted_tokens = num_accepted_tokens_;
  st.host_kv_blocks_total = host_.num_blocks();
  st.host_kv_blocks_used = host_.num_used_blocks();
  st.host_kv_hit_tokens = host_hit_tokens_;
  st.host_kv_stored_blocks = host_stored_blocks_;
  st.host_kv_evicted_blocks = static_cast<int64_t>(host_.num_evictions());
  return st;
}

const Sequence* Scheduler::find(uint64_t request_id) const {
  const int32_t s = id_to_slot_.find(request_id);
  return s == FlatIdMap::kNotFound ? nullptr : &slab_[s];
}

}  // namespace servesim
