#include "sim/workload/trace_source.h"

#include <algorithm>
#include <utility>

namespace servesim {

TraceSource::TraceSource(const WorkloadSpec& spec)
    : reader_(spec.trace->path, spec.trace->options),
      num_requests_(spec.num_requests),
      duration_s_(spec.duration_s) {}

void TraceSource::fill() {
  if (has_row_ || done_) return;
  if (num_requests_ > 0 && issued_ >= num_requests_) {
    done_ = true;
    return;
  }
  if (!reader_.next(row_) || !(row_.arrival_s < duration_s_)) {
    done_ = true;
    return;
  }
  has_row_ = true;
}

std::optional<double> TraceSource::next_arrival_s() {
  fill();
  if (!has_row_) return std::nullopt;
  return row_.arrival_s;
}

RequestSpec TraceSource::pop() {
  fill();
  RequestSpec r;
  r.id = issued_++;
  r.arrival_s = row_.arrival_s;
  r.prompt_tokens = std::max(1, row_.prompt_tokens);
  r.output_tokens = std::max(1, row_.output_tokens);
  r.session = r.id;
  r.block_hashes = std::move(row_.block_hashes);
  row_.block_hashes = {};
  has_row_ = false;
  return r;
}

void TraceSource::on_request_done(const RequestSpec& request, double now_s) {
  // A replayed trace is open loop: completions never change what arrives.
  (void)request, (void)now_s;
}

}  // namespace servesim
