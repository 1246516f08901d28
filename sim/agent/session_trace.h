// SessionTrace: the JSONL session trace — one agent session a line, so a recorded run (a
// simulated one, or one logged from a real agent) can be replayed against any deployment as
// a regression sample (docs/agents.md#session-traces has the format).
//
// A line: {"session", "workflow", "user", "start_s", "calls": [...]}; calls in issue order,
// each {"type": "llm" | "tool" | "lookup", "after": [earlier call indices it waited for]}:
//   llm:    input_tokens, output_tokens, stream, prompt_blocks, output_blocks (block ids of
//           the prompt's full kTraceBlockTokens-token blocks and of the full blocks its answer
//           completed; equal ids mean equal tokens, and equal everything before them);
//   tool:   wait_s (start to end, retries and its cache lookup included), attempts, ok, and
//           with a result cache: cached true, lookup_s (the lookup's share), cache_hit;
//   lookup: wait_s, hit ("exact", "semantic" or "miss") — an LLM step's response cache.
// A call starts when every call in its "after" has ended (at the session's start if none).
// Parsing is strict: each bad line is one ConfigError naming file:line and the field.
// Value types; stateless functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace servesim {

constexpr int kTraceBlockTokens = 16;  // tokens per prompt block id (vLLM's default block)

enum class TraceCallKind { kLlm, kTool, kLookup };

struct TraceCall {
  TraceCallKind kind = TraceCallKind::kLlm;
  std::vector<int> after;  // indices of earlier calls of the session
  // kLlm
  int input_tokens = 0;
  int output_tokens = 0;
  bool stream = true;
  std::vector<uint64_t> prompt_blocks;
  std::vector<uint64_t> output_blocks;
  // kTool, kLookup
  double wait_s = 0;    // seconds
  double lookup_s = 0;  // kTool: seconds of wait_s that were a cache lookup
  int attempts = 1;     // kTool
  bool ok = true;       // kTool
  bool cached = false;  // kTool: the tool had a result cache
  bool cache_hit = false;
  std::string hit = "miss";  // kLookup: exact, semantic or miss
};

struct TracedSession {
  uint64_t session = 0;
  std::string workflow;
  uint32_t user = 0;
  double start_s = 0;  // seconds, simulated (or since the recording began)
  std::vector<TraceCall> calls;
};

// The line (no newline) for one session.
std::string session_trace_line(const TracedSession& session);

// `where` prefixes errors ("trace.jsonl:12"). Throws ConfigError.
TracedSession parse_session_trace_line(const std::string& line, const std::string& where);

// Every line of the file (blank lines skipped); at least one session. Throws ConfigError.
std::vector<TracedSession> read_session_trace(const std::string& path);

}  // namespace servesim
