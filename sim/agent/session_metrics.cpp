#include "sim/agent/session_metrics.h"

#include <cmath>
#include <limits>

#include "sim/metrics/latency_summary.h"

namespace servesim {

void SessionMetrics::add(const SessionRecord& r) {
  if (!r.ok) {
    ++failed_;
    return;
  }
  e2e_s_.push_back(static_cast<float>(r.e2e_s()));
  e2e_sum_s_ += r.e2e_s();
  if (!std::isnan(r.ttft_s())) {
    ttft_s_.push_back(static_cast<float>(r.ttft_s()));
    ttft_sum_s_ += r.ttft_s();
  }
  llm_calls_ += r.llm_calls;
  tool_calls_ += r.tool_calls;
  input_tokens_ += static_cast<double>(r.input_tokens);
  output_tokens_ += static_cast<double>(r.output_tokens);
  cached_tokens_ += static_cast<double>(r.cached_tokens);
  skipped_steps_ += r.skipped_steps;
  fallback_calls_ += r.fallback_calls;
  path_.llm_queue_s += r.path.llm_queue_s;
  path_.prefill_s += r.path.prefill_s;
  path_.decode_s += r.path.decode_s;
  path_.service_s += r.path.service_s;
  path_.tool_s += r.path.tool_s;
  path_.cache_s += r.path.cache_s;
  tool_cache_lookups_ += r.tool_cache_lookups;
  tool_cache_hits_ += r.tool_cache_hits;
  llm_cache_lookups_ += r.llm_cache_lookups;
  llm_exact_hits_ += r.llm_exact_hits;
  llm_semantic_hits_ += r.llm_semantic_hits;
  cache_lookup_s_ += r.cache_lookup_s;
  path_llm_calls_ += r.path.llm_calls;
  path_tool_calls_ += r.path.tool_calls;
}

SessionSummary SessionMetrics::summary() const {
  SessionSummary s;
  s.completed = e2e_s_.size();
  s.failed = failed_;
  s.sessions = s.completed + s.failed;
  s.e2e = latency_stats_of(e2e_s_, e2e_sum_s_);
  s.ttft = latency_stats_of(ttft_s_, ttft_sum_s_);
  if (s.completed == 0) return s;
  const double n = static_cast<double>(s.completed);
  s.llm_calls = llm_calls_ / n;
  s.tool_calls = tool_calls_ / n;
  s.input_tokens = input_tokens_ / n;
  s.output_tokens = output_tokens_ / n;
  s.cached_tokens = cached_tokens_ / n;
  s.skipped_steps = skipped_steps_ / n;
  s.fallback_calls = fallback_calls_ / n;
  s.path.llm_queue_s = path_.llm_queue_s / n;
  s.path.prefill_s = path_.prefill_s / n;
  s.path.decode_s = path_.decode_s / n;
  s.path.service_s = path_.service_s / n;
  s.path.tool_s = path_.tool_s / n;
  s.path.cache_s = path_.cache_s / n;
  auto rate = [](double hits, double lookups) {
    return lookups > 0 ? hits / lookups : std::numeric_limits<double>::quiet_NaN();
  };
  s.tool_cache_lookups = tool_cache_lookups_ / n;
  s.tool_cache_hit_rate = rate(tool_cache_hits_, tool_cache_lookups_);
  s.llm_cache_lookups = llm_cache_lookups_ / n;
  s.llm_exact_hit_rate = rate(llm_exact_hits_, llm_cache_lookups_);
  s.llm_semantic_hit_rate = rate(llm_semantic_hits_, llm_cache_lookups_);
  s.cache_lookup_s = cache_lookup_s_ / n;
  s.path_llm_calls = path_llm_calls_ / n;
  s.path_tool_calls = path_tool_calls_ / n;
  s.path.llm_calls = static_cast<int>(std::lround(s.path_llm_calls));
  s.path.tool_calls = static_cast<int>(std::lround(s.path_tool_calls));
  return s;
}

}  // namespace servesim
