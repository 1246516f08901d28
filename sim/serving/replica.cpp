#include "sim/serving/replica.h"

#include <cmath>
#include <string>

#include "sim/workload/request_prompt.h"
#include "sim/workload/synthetic_prompt.h"

namespace servesim {

Replica::Replica(int index, const SchedulerConfig& config, const CostModel& cost_model,
                 const ReplicaOptions& options)
    : index_(index),
      options_(options),
      scheduler_(config),
      executor_(cost_model, options.sliding_window) {}

void Replica::admit(const RequestSpec& spec, double now_s, ReplicaListener& listener) {
  const int max_len = scheduler_.config().max_model_len;
  if (static_cast<int64_t>(spec.prompt_tokens) + spec.output_tokens > max_len) {
    // vLLM's API server refuses prompt + max_tokens beyond max_model_len before scheduling.
    RequestRecord r;
    r.id = spec.id;
    r.replica = index_;
    r.arrival_s = spec.arrival_s;
    r.prompt_tokens = spec.prompt_tokens;
    r.status = RequestOutcome::kRejected;
    r.step_index = spec.step_index;
    listener.on_request_left(spec, r);
    return;
  }
  Request request;
  request.id = spec.id;
  request_prompt_into(spec, options_.vocab_size, request.prompt_token_ids);
  request.max_output_tokens = spec.output_tokens;
  request.ignore_eos = true;
  request.arrival_s = spec.arrival_s;
  in_flight_.emplace(spec.id, InFlightRequest{spec});
  if (!scheduler_.add_request(std::move(request))) {
    for (const FinishedRequest& done : scheduler_.finished()) {
      if (done.id == spec.id) report_left(done, now_s, listener);
    }
  }
}

std::optional<double> Replica::begin_step(double now_s) {
  if (busy_ || !scheduler_.has_unfinished()) return std::nullopt;
  const SchedulerOutput& out = scheduler_.schedule();
  if (out.empty()) {
    // Nothing runnable (a static batch gathering); the scheduler still expects an update.
    result_.sampled_token_ids.clear();
    scheduler_.update(out, result_);
    return std::nullopt;
  }
  current_ = &out;
  busy_ = true;
  step_start_s_ = now_s;
  last_step_tokens_ = out.total_num_tokens;
  for (const ScheduledSequence& s : out.sequences) {
    if (!s.is_prefill) continue;
    auto it = in_flight_.find(s.request_id);
    if (it != in_flight_.end() && std::isnan(it->second.first_scheduled_s)) {
      it->second.first_scheduled_s = now_s;
    }
  }
  const double duration_s = executor_.step_time_s(out);
  for (size_t op = 0; op < kNumOps; ++op) op_totals_.op_s[op] += executor_.last_step().op_s[op];
  op_totals_.total_s += duration_s;
  if (executor_.last_step().extrapolated) ++extrapolated_steps_;
  return duration_s;
}

void Replica::end_step(double now_s, ReplicaListener& listener) {
  const SchedulerOutput& out = *current_;
  result_.sampled_token_ids.clear();
  for (const ScheduledSequence& s : out.sequences) {
    if (!s.samples) continue;
    auto it = in_flight_.find(s.request_id);
    InFlightRequest& f = it->second;
    const uint64_t position = static_cast<uint64_t>(s.num_computed_tokens + s.num_new_tokens);
    result_.sampled_token_ids.push_back(
        synthetic_stream_token(f.spec.session, position, options_.vocab_size));
    if (std::isnan(f.first_token_s)) {
      f.first_token_s = now_s;
    } else {
      listener.on_inter_token_gap(f.spec, now_s - f.last_token_s);
    }
    f.last_token_s = now_s;
  }
  scheduler_.update(out, result_);
  busy_ = false;
  current_ = nullptr;
  ++steps_;
  busy_s_ += now_s - step_start_s_;
  for (const FinishedRequest& done : scheduler_.finished()) report_left(done, now_s, listener);
}

void Replica::report_left(const FinishedRequest& done, double now_s, ReplicaListener& listener) {
  auto it = in_flight_.find(done.id);
  if (it == in_flight_.end()) return;
  const RequestRecord record = it->second.to_record(done, index_, now_s);
  const RequestSpec spec = std::move(it->second.spec);
  in_flight_.erase(it);
  listener.on_request_left(spec, record);
}

ReplicaLoad Replica::load() const {
  ReplicaLoad l;
  l.outstanding = static_cast<int64_t>(in_flight_.size());
  l.kv_usage = scheduler_.stats().kv_usage;
  return l;
}

}  // namespace servesim
