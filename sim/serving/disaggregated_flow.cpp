#include "sim/serving/disaggregated_flow.h"

namespace servesim {

void DisaggregatedFlow::arrived(const RequestSpec& spec, double now_s) {
  Flow& f = flows_[spec.id];
  f = Flow{};
  f.arrival_s = now_s;
}

RequestSpec DisaggregatedFlow::prefill_request(const RequestSpec& spec) {
  RequestSpec p = spec;
  p.output_tokens = 1;
  return p;
}

bool DisaggregatedFlow::prefilled(const RequestRecord& prefill, double now_s) {
  const auto it = flows_.find(prefill.id);
  if (it == flows_.end()) return false;
  Flow& f = it->second;
  f.prefill_start_s = prefill.first_scheduled_s;
  f.prefill_end_s = now_s;
  f.prefill_replica = prefill.replica;
  f.cached_prompt_tokens = prefill.cached_prompt_tokens;
  f.preemptions = prefill.preemptions;
  return true;
}

void DisaggregatedFlow::load_started(uint64_t id, double now_s) {
  if (const auto it = flows_.find(id); it != flows_.end()) it->second.load_start_s = now_s;
}

void DisaggregatedFlow::loaded(uint64_t id, double now_s) {
  if (const auto it = flows_.find(id); it != flows_.end()) it->second.loaded_s = now_s;
}

int DisaggregatedFlow::prefill_replica(uint64_t id) const {
  const auto it = flows_.find(id);
  return it == flows_.end() ? -1 : it->second.prefill_replica;
}

double DisaggregatedFlow::prefill_start_s(uint64_t id) const {
  const auto it = flows_.find(id);
  return it == flows_.end() ? RequestRecord::kNever : it->second.prefill_start_s;
}

RequestRecord DisaggregatedFlow::finish(const RequestRecord& decode) {
  const auto it = flows_.find(decode.id);
  if (it == flows_.end()) return decode;
  const Flow f = it->second;
  flows_.erase(it);
  RequestRecord r = decode;
  r.preemptions += f.preemptions;
  r.cached_prompt_tokens = f.cached_prompt_tokens;
  if (r.status != RequestOutcome::kOk) return r;
  // A preempted decode instance recomputes the prompt itself: its own first scheduling is
  // then later than the load, and the recompute counts as its prefill.
  const double decode_start_s = std::max(f.loaded_s, decode.first_scheduled_s);
  r.first_scheduled_s = f.prefill_start_s;
  RequestSegments& s = r.segments;
  s.engine_queue_s = f.prefill_start_s - f.arrival_s;
  s.prefill_s = (f.prefill_end_s - f.prefill_start_s) + (decode.first_token_s - decode_start_s);
  s.decode_queue_s = (f.load_start_s - f.prefill_end_s) + (decode_start_s - f.loaded_s);
  s.kv_transfer_s = f.loaded_s - f.load_start_s;
  return r;
}

}  // namespace servesim
