#include "sim/serving/request_ledger.h"

#include <cmath>

#include "sim/workload/request_prompt.h"

namespace servesim {

RequestLedger::RequestLedger(int replica, int max_model_len, int vocab_size)
    : replica_(replica), max_model_len_(max_model_len), vocab_size_(vocab_size) {}

std::optional<Request> RequestLedger::admit(const RequestSpec& spec, RequestRecord& rejected) {
  if (static_cast<int64_t>(spec.prompt_tokens) + spec.output_tokens > max_model_len_) {
    rejected = RequestRecord{};
    rejected.id = spec.id;
    rejected.replica = replica_;
    rejected.arrival_s = spec.arrival_s;
    rejected.prompt_tokens = spec.prompt_tokens;
    rejected.status = RequestOutcome::kRejected;
    rejected.cause = FailureCause::kTooLong;
    rejected.step_index = spec.step_index;
    return std::nullopt;
  }
  Request request;
  request.id = spec.id;
  request_prompt_into(spec, vocab_size_, request.prompt_token_ids);
  request.max_output_tokens = spec.output_tokens;
  request.ignore_eos = true;
  request.arrival_s = spec.arrival_s;
  request.priority = spec.priority;  // vLLM's request priority (the tenant's, if any)
  in_flight_.emplace(spec.id, InFlightRequest{spec});
  return request;
}

void RequestLedger::on_scheduled(uint64_t id, bool is_prefill, double start_s) {
  if (!is_prefill) return;
  auto it = in_flight_.find(id);
  if (it != in_flight_.end() && std::isnan(it->second.first_scheduled_s)) {
    it->second.first_scheduled_s = start_s;
  }
}

void RequestLedger::on_host_load(uint64_t id, double load_s) {
  const auto it = in_flight_.find(id);
  if (it == in_flight_.end() || !std::isnan(it->second.first_scheduled_s)) return;
  it->second.host_load_s += load_s;
}

RequestLedger::TokenTime RequestLedger::on_token(uint64_t id, double now_s) {
  auto it = in_flight_.find(id);
  if (it == in_flight_.end()) return {};
  InFlightRequest& f = it->second;
  TokenTime t{&f.spec, std::nullopt};
  if (std::isnan(f.first_token_s)) {
    f.first_token_s = now_s;
  } else {
    t.gap_s = now_s - f.last_token_s;
  }
  f.last_token_s = now_s;
  return t;
}

std::optional<RequestLedger::Left> RequestLedger::leave(const FinishedRequest& done, double now_s) {
  auto it = in_flight_.find(done.id);
  if (it == in_flight_.end()) return std::nullopt;
  Left left{std::move(it->second.spec), it->second.to_record(done, replica_, now_s)};
  in_flight_.erase(it);
  return left;
}

}  // namespace servesim
