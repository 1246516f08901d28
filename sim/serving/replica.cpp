#include "sim/serving/replica.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/serving/run_report.h"
#include "sim/workload/synthetic_prompt.h"

namespace servesim {

Replica::Replica(int index, const SchedulerConfig& config, const CostModel& cost_model,
                 const ReplicaOptions& options)
    : index_(index),
      options_(options),
      scheduler_(config),
      executor_(cost_model, options.sliding_window),
      ledger_(index, config.max_model_len, options.vocab_size) {
  if (options.speculative) executor_.enable_speculation(options.speculative, options.seed);
  if (options.async_scheduling) executor_.enable_async_scheduling(options.async_host_overlap);
}

void Replica::admit(const RequestSpec& spec, double now_s, ReplicaListener& listener,
                    KvTransfer kv_transfer) {
  RequestRecord rejected;
  std::optional<Request> request = ledger_.admit(spec, rejected);
  if (!request) {
    listener.on_request_left(spec, rejected);
    return;
  }
  request->kv_transfer = kv_transfer;
  if (options_.async_scheduling && busy_ && !scheduler_.refusal(*request)) {
    held_.push_back({std::move(*request), steps_ + 1});
    return;
  }
  if (!scheduler_.add_request(std::move(*request))) {
    for (const FinishedRequest& done : scheduler_.finished()) {
      if (done.id == spec.id) report_left(done, now_s, listener);
    }
  }
}

void Replica::release_held(bool all) {
  if (held_.empty()) return;
  size_t kept = 0;
  for (size_t i = 0; i < held_.size(); ++i) {
    Held& h = held_[i];
    if (!all && h.during_step == steps_) {
      if (kept != i) held_[kept] = std::move(h);
      ++kept;
      continue;
    }
    // admit() held only requests the scheduler takes.
    const uint64_t id = h.request.id;
    if (!scheduler_.add_request(std::move(h.request))) {
      throw std::logic_error("held request " + std::to_string(id) + " refused on release");
    }
  }
  held_.resize(kept);
}

void Replica::close_empty_schedule(const SchedulerOutput& out) {
  kv_loads_.insert(kv_loads_.end(), out.kv_loads.begin(), out.kv_loads.end());
  // The scheduler still expects an update, with no speculative step's counts left over in it.
  result_.clear();
  scheduler_.update(out, result_);
}

bool Replica::abort(uint64_t id) {
  const auto held =
      std::find_if(held_.begin(), held_.end(), [id](const Held& h) { return h.request.id == id; });
  if (held != held_.end()) {
    held_.erase(held);
    ledger_.forget(id);
    return true;
  }
  if (!scheduler_.abort(id)) return false;
  ledger_.forget(id);
  return true;
}

std::optional<double> Replica::begin_step(double now_s) {
  kv_loads_.clear();
  if (busy_) return std::nullopt;
  release_held(scheduler_.running_slots().empty());
  if (!scheduler_.has_unfinished()) return std::nullopt;
  const SchedulerOutput* first = &scheduler_.schedule();
  if (first->empty() && !first->preempted_ids.empty()) {
    // The step preempted every running request, and a step that preempts admits nothing (vLLM
    // V1 Scheduler.schedule); vLLM's engine core then schedules again at once. Before that,
    // loaded prompts waiting with blocks give them up: else the preempted request takes back
    // only the blocks it gave up and runs out again, for ever (a decode instance with one
    // sequence and a small KV cache; invariants seeds 3073 and 4179). A KV load that step
    // started is under way all the same, and the driver must still move its bytes (else its
    // request waits for them for ever; invariants seed 101612).
    close_empty_schedule(*first);
    scheduler_.release_waiting_blocks();
    first = &scheduler_.schedule();
  }
  if (first->empty() && !held_.empty()) {
    // The running requests could not go on (preempted, or waiting on KV loads): the step the
    // held requests waited for is empty, and vLLM schedules them at once.
    close_empty_schedule(*first);
    release_held(true);
    first = &scheduler_.schedule();
  }
  const SchedulerOutput& out = *first;
  host_store_step_ = out.step;
  host_store_blocks_ = out.num_host_store_blocks;
  if (out.empty()) {
    // Nothing runnable (a static batch gathering, a decode instance's only request still
    // pulling its KV).
    close_empty_schedule(out);
    return std::nullopt;
  }
  kv_loads_.insert(kv_loads_.end(), out.kv_loads.begin(), out.kv_loads.end());
  current_ = &out;
  busy_ = true;
  step_start_s_ = now_s;
  last_step_tokens_ = out.total_num_tokens;
  for (const ScheduledSequence& s : out.sequences) {
    ledger_.on_scheduled(s.request_id, s.is_prefill, now_s);
  }
  const double duration_s = executor_.step_time_s(out);
  for (size_t op = 0; op < kNumOps; ++op) op_totals_.op_s[op] += executor_.last_step().op_s[op];
  op_totals_.total_s += duration_s;
  RunReport::count_admission(scheduler_.stats(), scheduler_.config(), out.total_num_tokens,
                             duration_s, admission_);
  if (executor_.last_step().extrapolated) ++extrapolated_steps_;
  return duration_s;
}

void Replica::end_step(double now_s, ReplicaListener& listener) {
  if (executor_.speculative()) {
    end_speculative_step(now_s, listener);
    return;
  }
  const SchedulerOutput& out = *current_;
  result_.sampled_token_ids.clear();
  for (const ScheduledSequence& s : out.sequences) {
    if (!s.samples) continue;
    const RequestLedger::TokenTime t = ledger_.on_token(s.request_id, now_s);
    if (!t.spec) {
      // Aborted during the step: update() consumes and ignores its token.
      result_.sampled_token_ids.push_back(0);
      continue;
    }
    const uint64_t position = static_cast<uint64_t>(s.num_computed_tokens + s.num_new_tokens);
    result_.sampled_token_ids.push_back(
        synthetic_stream_token(t.spec->session, position, options_.vocab_size));
    listener.on_token(*t.spec, t.gap_s);
  }
  close_step(now_s, listener);
}

void Replica::end_speculative_step(double now_s, ReplicaListener& listener) {
  const SchedulerOutput& out = *current_;
  const int k = executor_.num_speculative_tokens();
  result_.clear();
  for (const ScheduledSequence& s : out.sequences) {
    if (!s.samples) continue;
    const RequestLedger::TokenTime t = ledger_.on_token(s.request_id, now_s);
    // The target's tokens are those of plain decoding (synthetic, by position); speculation
    // changes only how many arrive per step. Drafts' ids do not matter to the scheduler.
    const uint64_t first =
        static_cast<uint64_t>(s.num_computed_tokens + s.num_new_tokens - s.num_spec_tokens);
    const uint64_t stream = t.spec ? t.spec->session : 0;
    const int n = 1 + (s.num_spec_tokens > 0 && t.spec
                           ? executor_.accepted_drafts(stream, first, s.num_spec_tokens)
                           : 0);
    result_.num_sampled_tokens.push_back(n);
    for (int i = 0; i < n; ++i) {
      result_.sampled_token_ids.push_back(
          synthetic_stream_token(stream, first + static_cast<uint64_t>(i), options_.vocab_size));
    }
    const int drafts = executor_.drafts_follow(stream, first + static_cast<uint64_t>(n)) ? k : 0;
    result_.num_draft_tokens.push_back(drafts);
    result_.draft_token_ids.insert(result_.draft_token_ids.end(), static_cast<size_t>(drafts), 0);
    // Every token reaches the listener (the service path streams and counts them); the step's
    // tokens arrive together, one inter-token gap per step as vLLM's stream shows them.
    if (t.spec) {
      listener.on_token(*t.spec, t.gap_s);
      for (int i = 1; i < n; ++i) listener.on_token(*t.spec, std::nullopt);
    }
  }
  close_step(now_s, listener);
}

void Replica::close_step(double now_s, ReplicaListener& listener) {
  scheduler_.update(*current_, result_);
  busy_ = false;
  current_ = nullptr;
  ++steps_;
  busy_s_ += now_s - step_start_s_;
  // Transfers that finished during the step are seen at its end (vLLM 0.11: the worker's
  // get_finished() reports them with the step's output).
  for (uint64_t id : loads_seen_at_step_end_) scheduler_.finish_kv_load(id);
  loads_seen_at_step_end_.clear();
  if (stores_seen_at_step_end_ > 0) scheduler_.complete_host_stores(stores_seen_at_step_end_);
  stores_seen_at_step_end_ = 0;
  for (const FinishedRequest& done : scheduler_.finished()) report_left(done, now_s, listener);
}

void Replica::host_load_started(uint64_t id, double load_s) {
  ledger_.on_host_load(id, load_s);
}

bool Replica::host_load_done(uint64_t id) {
  if (busy_) {
    loads_seen_at_step_end_.push_back(id);
    return false;
  }
  return scheduler_.finish_kv_load(id);
}

bool Replica::host_stores_done(uint64_t step) {
  if (busy_) {
    stores_seen_at_step_end_ = std::max(stores_seen_at_step_end_, step);
    return false;
  }
  scheduler_.complete_host_stores(step);
  return true;
}

void Replica::report_left(const FinishedRequest& done, double now_s, ReplicaListener& listener) {
  if (const std::optional<RequestLedger::Left> left = ledger_.leave(done, now_s)) {
    listener.on_request_left(left->spec, left->record);
  }
}

ReplicaLoad Replica::load() const {
  ReplicaLoad l;
  l.outstanding = ledger_.outstanding();
  l.kv_usage = scheduler_.stats().kv_usage;
  return l;
}

}  // namespace servesim
