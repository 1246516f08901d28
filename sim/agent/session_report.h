// How agent sessions' metrics are shown: summary.json's "sessions" object and the sessions
// table of the text summary. Latencies in JSON are milliseconds (keys end in _ms), with the
// request metrics' fields (count, mean_ms, p50_ms, p90_ms, p95_ms, p99_ms, max_ms).
// Stateless functions; thread-safe.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>

#include "sim/agent/session_metrics.h"

namespace servesim {

// {"sessions", "completed", "failed", "e2e", "ttft", "per_session": {llm_calls, tool_calls,
// input_tokens, output_tokens, cached_tokens}, "critical_path": {llm_queue_ms, prefill_ms,
// decode_ms, service_ms, tool_ms, cache_ms, llm_calls, tool_calls}, "caches": {tool_lookups,
// tool_hit_rate, llm_lookups, llm_exact_hit_rate, llm_semantic_hit_rate, lookup_ms}}
// (per-session means; hit rates are hits / lookups over the run, null without lookups).
// The table's cache line shows only for runs that looked a cache up.
nlohmann::json session_summary_json(const SessionSummary& summary);

void print_session_summary(std::FILE* out, const SessionSummary& summary);

}  // namespace servesim
