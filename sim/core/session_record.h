// SessionRecord: the outcome of one agent session (sim/agent) — a user task that became many
// LLM and tool calls — as the session metrics and sessions.csv see it. A plain value; the
// agent source fills it when the session's last step ends.
//
// Critical path: the chain of calls whose ends started the next ones up to the session's end;
// its segments (LLM queueing, prefill, decode, the service path around the engine, tools) sum
// to the session's E2E. Invariant for an ok record: start_s <= first_token_s <= finish_s.
//
// Spans (opt-in: only when the run's Observer asks, Observer::wants_session_spans, so large
// runs store none): one per call of the session, in issue order. Invariants for an ok record
// with spans: every span lies within [start_s, finish_s]; the spans marked critical are the
// path's calls, back to back, so their durations sum to the E2E and the last ends at finish_s.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/request_record.h"

namespace servesim {

// Seconds of the critical path by kind; they sum to the session's E2E.
struct CriticalPath {
  double llm_queue_s = 0;  // engine queue of the LLM calls on the path
  double prefill_s = 0;    // their first scheduled to first token
  double decode_s = 0;     // their first token to last
  double service_s = 0;    // their time outside the engine: network, gateway, API server, retries
  double tool_s = 0;       // tool calls on the path, retries included
  double cache_s = 0;      // tool-result and LLM-response cache lookups on the path
  int llm_calls = 0;       // calls on the path
  int tool_calls = 0;
  // With spans recorded: the index in SessionRecord::spans of the path's last call, which
  // links back to the one before it (the sessions keep those links); -1 otherwise.
  int last_span = -1;

  double total_s() const {
    return llm_queue_s + prefill_s + decode_s + service_s + tool_s + cache_s;
  }
};

enum class SpanKind : uint8_t {
  kLlm,     // a call to the deployment
  kTool,    // a tool step's attempts, retries included
  kLookup,  // a tool-result or LLM-response cache lookup
};

struct SessionSpan {
  static constexpr double kNever = std::numeric_limits<double>::quiet_NaN();

  SpanKind kind = SpanKind::kLlm;
  // The workflow step's id, else its path ("workflows[0].steps[1]"); "<step> (summary)" for a
  // context summary; a replayed trace's call index ("calls[3]").
  std::string step;
  double start_s = 0;     // seconds, simulated: the call sent, the tool or lookup started
  double end_s = kNever;  // seconds; NaN: still in flight when the session failed
  // LLM calls: when the engine first scheduled it and made its first token (NaN when it did
  // not), and its time split as the critical path splits it — engine wait, prefill, decode;
  // the rest of end_s - start_s is the service path around the engine.
  double scheduled_s = kNever;
  double first_token_s = kNever;
  double queue_s = 0;     // seconds
  double prefill_s = 0;   // seconds
  double decode_s = 0;    // seconds
  bool critical = false;  // on the session's critical path (ok records only)
  bool ok = true;         // LLM: answered; tool: an attempt succeeded; lookup: always
  bool hit = false;       // lookups: the cache answered

  double duration_s() const { return end_s - start_s; }
};

struct SessionRecord {
  static constexpr double kNever = std::numeric_limits<double>::quiet_NaN();

  uint64_t id = 0;       // 0, 1, 2, ... in start order
  std::string workflow;  // the workflow's name
  uint32_t user = 0;     // closed-loop user; 0 for open loop
  bool ok = true;        // false: an LLM call failed (rejected, timed out) and ended it
  FailureCause cause = FailureCause::kNone;  // the failed call's cause
  double start_s = 0;                        // seconds, simulated
  double finish_s = kNever;                  // seconds; last step's end (or the failure)
  // The first token the user sees: the first streamed token of the session's last LLM call
  // to finish, or that call's end when it does not stream; NaN without an LLM call.
  double first_token_s = kNever;
  int llm_calls = 0;          // every call, context summaries included
  int tool_calls = 0;         // tool steps run (a retried tool counts once)
  int tool_attempts = 0;      // attempts, retries included
  int tool_failures = 0;      // tool steps that failed after their retries
  int skipped_steps = 0;      // optional LLM steps whose call failed, skipped
  int fallback_calls = 0;     // LLM calls re-sent to their step's fallback deployment
  int64_t input_tokens = 0;   // prompt tokens over the LLM calls
  int64_t output_tokens = 0;  // generated tokens over the LLM calls
  int64_t cached_tokens = 0;  // prompt tokens served from the prefix cache
  // Caches (sim/agent/cache_spec.h): a hit answers without running the tool or calling the
  // deployment, so a hit LLM step is no llm_call and adds no input or output tokens.
  int tool_cache_lookups = 0;
  int tool_cache_hits = 0;
  int llm_cache_lookups = 0;
  int llm_exact_hits = 0;
  int llm_semantic_hits = 0;
  double cache_lookup_s = 0;  // seconds of lookups, on the critical path or not
  // The session's line of the JSONL session trace (sim/agent/session_trace.h) when the
  // workload records one (agent.record_trace); empty otherwise.
  std::string trace_json;
  CriticalPath path;               // ok records only
  std::vector<SessionSpan> spans;  // only when the run asked for them (see the top)

  double e2e_s() const { return finish_s - start_s; }
  double ttft_s() const { return first_token_s - start_s; }
};

// sessions.csv: the header line and one record's line (each without its newline).
std::string_view session_csv_header();
std::string session_csv_line(const SessionRecord& record);

}  // namespace servesim
