// ReplaySpec and ReplaySource: a measured run's requests played into the simulator one for
// one — the recorded prompt and output lengths in the recorded order, output lengths exact —
// under the load the run was measured with:
//   recorded arrivals   each request at its recorded send time (seconds since the first send)
//   closed loop         at most max_concurrency in flight, in order; the next request goes
//                       when one finishes (vllm bench serve --max-concurrency)
//   open loop           at request_rate_per_s with gamma(burstiness) gaps drawn from the
//                       workload seed, as vllm bench serve draws them (vLLM >= 0.10,
//                       vllm/benchmarks/serve.py get_request since PR #21108: the first
//                       request also waits a gap, and the sends are rescaled so the last is
//                       at N / rate)
//   all at once         every request at t = 0 (request rate inf and no cap)
// A cap combines with either timing as in vllm bench: a request is sent at its planned time
// or when a slot frees, whichever is later.
// The conversion from a measured run (calibration/measured/measured_run.h) lives there
// (replay_spec_from), so this layer reads no measured formats.
// ReplaySpec is a plain value, shared read-only between the sources made from it;
// ReplaySource is not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "sim/workload/request_source.h"

namespace servesim {

struct ReplayRequest {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

  double arrival_s = kNone;  // seconds since the first send; NaN where not recorded
  int prompt_tokens = 1;     // tokens, >= 1
  int output_tokens = 1;     // tokens generated, exactly; >= 1
};

struct ReplaySpec {
  static constexpr double kUnlimited = std::numeric_limits<double>::infinity();

  std::vector<ReplayRequest> requests;  // in issue order
  // Send at the recorded arrival_s (every one finite, non-decreasing); else by the rate.
  bool recorded_arrivals = false;
  std::optional<int> max_concurrency;      // in flight at most; unset: no cap
  double request_rate_per_s = kUnlimited;  // requests per second, open loop
  double burstiness = 1.0;                 // gamma shape of the gaps: 1 Poisson; inf constant

  // Throws ConfigError naming the first bad field (no requests, a length < 1, an arrival that
  // is not finite or goes back in time, a cap < 1, a rate or burstiness <= 0).
  void validate() const;
};

class ReplaySource final : public RequestSource {
 public:
  // Validates `spec` (ConfigError) and plans every send; `seed` draws the open-loop gaps.
  ReplaySource(const ReplaySpec& spec, uint64_t seed);

  std::optional<double> next_arrival_s() override;
  RequestSpec pop() override;
  void on_request_done(const RequestSpec& request, double now_s) override;
  bool finished() override { return next_ == planned_s_.size(); }
  uint64_t expected_total() const override { return planned_s_.size(); }

 private:
  std::vector<ReplayRequest> requests_;
  std::vector<double> planned_s_;  // when each request goes out without a cap, seconds
  std::optional<int> cap_;
  size_t next_ = 0;           // the next request to send
  int in_flight_ = 0;         // sent and not yet done
  double slot_free_s_ = 0.0;  // seconds; when the cap last let a request through
};

}  // namespace servesim
