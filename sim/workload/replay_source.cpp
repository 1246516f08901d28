#include "sim/workload/replay_source.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/config_error.h"
#include "sim/core/csv_line.h"
#include "sim/core/rng.h"

namespace servesim {
namespace {

// Rng::fork stream of the open-loop gaps (the other workloads' streams are their own).
constexpr uint64_t kReplayArrivalStream = 0x7265706c6179ULL;  // "replay"

[[noreturn]] void fail(const std::string& field, const std::string& what) {
  throw ConfigError("replay." + field + ": " + what);
}

std::string request_field(size_t i, const char* name) {
  return "requests[" + std::to_string(i) + "]." + name;
}

// vllm bench serve's send times (vLLM >= 0.10 get_request, without a ramp-up): cumulative gamma
// gaps of shape b and mean 1/rate, the first included, rescaled so the last is at n / rate.
std::vector<double> open_loop_sends(size_t n, double rate, double burstiness, uint64_t seed) {
  std::vector<double> t(n, 0.0);
  if (!std::isfinite(rate) || n == 0) return t;
  Rng rng = Rng(seed).fork(kReplayArrivalStream);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    sum +=
        std::isfinite(burstiness) ? rng.gamma(burstiness, 1.0 / (rate * burstiness)) : 1.0 / rate;
    t[i] = sum;
  }
  if (sum > 0) {
    const double scale = static_cast<double>(n) / rate / sum;
    for (double& s : t) s *= scale;
  }
  return t;
}

}  // namespace

void ReplaySpec::validate() const {
  if (requests.empty()) fail("requests", "none to replay (the measured run has no requests)");
  for (size_t i = 0; i < requests.size(); ++i) {
    const ReplayRequest& r = requests[i];
    if (r.prompt_tokens < 1) fail(request_field(i, "prompt_tokens"), "must be >= 1");
    if (r.output_tokens < 1) fail(request_field(i, "output_tokens"), "must be >= 1");
    if (!recorded_arrivals) continue;
    if (!(std::isfinite(r.arrival_s) && r.arrival_s >= 0)) {
      fail(request_field(i, "arrival_s"), "must be a finite number of seconds >= 0");
    }
    if (i > 0 && r.arrival_s < requests[i - 1].arrival_s) {
      fail(request_field(i, "arrival_s"), "goes back in time; give the requests in send order");
    }
  }
  if (max_concurrency && *max_concurrency < 1) fail("max_concurrency", "must be >= 1");
  if (!(request_rate_per_s > 0)) {
    fail("request_rate_per_s", "must be > 0, got " + format_number(request_rate_per_s));
  }
  if (!(burstiness > 0)) fail("burstiness", "must be > 0, got " + format_number(burstiness));
}

ReplaySource::ReplaySource(const ReplaySpec& spec, uint64_t seed)
    : requests_(spec.requests), cap_(spec.max_concurrency) {
  spec.validate();
  if (spec.recorded_arrivals) {
    for (const ReplayRequest& r : requests_) planned_s_.push_back(r.arrival_s);
  } else {
    planned_s_ = open_loop_sends(requests_.size(), spec.request_rate_per_s, spec.burstiness, seed);
  }
}

std::optional<double> ReplaySource::next_arrival_s() {
  if (next_ == planned_s_.size()) return std::nullopt;
  if (cap_ && in_flight_ >= *cap_) return std::nullopt;
  return std::max(planned_s_[next_], slot_free_s_);
}

RequestSpec ReplaySource::pop() {
  RequestSpec r;
  r.id = next_;
  r.arrival_s = *next_arrival_s();
  r.prompt_tokens = requests_[next_].prompt_tokens;
  r.output_tokens = requests_[next_].output_tokens;
  r.session = r.id;
  ++next_;
  ++in_flight_;
  return r;
}

void ReplaySource::on_request_done(const RequestSpec& request, double now_s) {
  (void)request;
  // The request that was waiting for this slot goes now, not at its planned time.
  if (cap_ && in_flight_ == *cap_) slot_free_s_ = std::max(slot_free_s_, now_s);
  --in_flight_;
}

}  // namespace servesim
