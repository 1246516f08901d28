#include "sim/serving/in_flight_request.h"

namespace servesim {

RequestRecord InFlightRequest::to_record(const FinishedRequest& done, int replica,
                                         double now_s) const {
  RequestRecord r;
  r.id = spec.id;
  r.replica = replica;
  r.arrival_s = spec.arrival_s;
  r.prompt_tokens = done.num_prompt_tokens;
  r.output_tokens = done.num_output_tokens;
  r.cached_prompt_tokens = done.num_cached_prompt_tokens;
  r.preemptions = done.num_preemptions;
  r.step_index = spec.step_index;
  if (done.status == RequestStatus::kRejected) {
    r.status = RequestOutcome::kRejected;
    r.cause = FailureCause::kTooLong;
    return r;
  }
  r.first_scheduled_s = first_scheduled_s;
  r.first_token_s = first_token_s;
  r.finish_s = now_s;
  r.segments.engine_queue_s = first_scheduled_s - spec.arrival_s - host_load_s;
  r.segments.kv_transfer_s = host_load_s;
  r.segments.prefill_s = first_token_s - first_scheduled_s;
  r.segments.decode_s = now_s - first_token_s;
  return r;
}

}  // namespace servesim
