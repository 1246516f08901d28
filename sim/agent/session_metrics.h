// SessionMetrics: collects the SessionRecords of an agent run into a SessionSummary — session
// counts, E2E and user-visible time-to-first-token percentiles (the request metrics'
// definitions: numpy-style linear interpolation), and per-session means of calls, tokens and
// the critical path's breakdown. Means and percentiles cover the sessions that completed;
// failed ones are counted apart. Memory: two floats per session. Thread-safety: none.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/session_record.h"
#include "sim/metrics/metrics.h"

namespace servesim {

struct SessionSummary {
  uint64_t sessions = 0;  // ended (completed + failed)
  uint64_t completed = 0;
  uint64_t failed = 0;
  LatencyStats e2e;   // seconds, completed sessions
  LatencyStats ttft;  // seconds: start to the first token the user sees
  // Means per completed session.
  double llm_calls = 0;
  double tool_calls = 0;
  double input_tokens = 0;
  double output_tokens = 0;
  double cached_tokens = 0;
  double skipped_steps = 0;   // optional steps skipped
  double fallback_calls = 0;  // calls re-sent to a fallback deployment
  // Dollars: the run's GPU time (every deployment's GPUs at their price, over the request
  // metrics' duration) per completed session; NaN without a price or a completed session.
  double cost_usd = MetricsSummary::kNone;
  CriticalPath path;  // mean seconds per kind (llm_calls, tool_calls: rounded means)
  double path_llm_calls = 0;
  double path_tool_calls = 0;
  // Caches, over completed sessions: lookups per session, and hits / lookups (NaN without
  // lookups); lookup_s is the mean seconds of lookups a session made, on its path or not.
  double tool_cache_lookups = 0;
  double tool_cache_hit_rate = 0;
  double llm_cache_lookups = 0;
  double llm_exact_hit_rate = 0;
  double llm_semantic_hit_rate = 0;
  double cache_lookup_s = 0;
};

class SessionMetrics {
 public:
  void add(const SessionRecord& record);
  SessionSummary summary() const;

 private:
  std::vector<float> e2e_s_;
  std::vector<float> ttft_s_;
  double e2e_sum_s_ = 0;
  double ttft_sum_s_ = 0;
  uint64_t failed_ = 0;
  double llm_calls_ = 0;
  double tool_calls_ = 0;
  double input_tokens_ = 0;
  double output_tokens_ = 0;
  double cached_tokens_ = 0;
  double skipped_steps_ = 0;
  double fallback_calls_ = 0;
  CriticalPath path_;  // sums
  double path_llm_calls_ = 0;
  double path_tool_calls_ = 0;
  double tool_cache_lookups_ = 0;
  double tool_cache_hits_ = 0;
  double llm_cache_lookups_ = 0;
  double llm_exact_hits_ = 0;
  double llm_semantic_hits_ = 0;
  double cache_lookup_s_ = 0;
};

}  // namespace servesim
