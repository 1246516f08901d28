// TraceSession: one recorded session of a JSONL session trace replayed against the
// deployment — its calls issued as their dependencies end ("after"), tool and lookup waits as
// recorded, LLM calls with the recorded input and output lengths and their prompts rebuilt
// from the recorded block ids (SessionHost::replay_block: a block id seen before re-sends the
// very tokens it stood for, its first call's stream, so prefix caching follows the recording;
// an answer's blocks are the call's own stream, which the engine's output continues).
// Critical path: a call starts with the path of the dependency that ended last and adds its
// own time (LLM calls split as their records do, tools whole, lookups as cache time), so the
// path of the last call to end sums to the session's E2E. An LLM call that fails ends the
// session as failed, as in AgentSession. Spans (opt-in) as in AgentSession: a call's spans
// (a cached tool's lookup, then its run) link back to the last span of the path it started
// with, and the end marks the final path's spans. Memory: O(calls). Thread-safety: none.
#pragma once

#include <vector>

#include "sim/agent/agent_session.h"
#include "sim/agent/session_trace.h"

namespace servesim {

class TraceSession final : public SessionRun {
 public:
  // Borrows `trace`, which must outlive the session. With `spans`, record().spans holds its
  // calls (SessionRecord).
  TraceSession(uint64_t id, const TracedSession& trace, SessionHost& host, bool spans = false);

  void start(double now_s) override;
  void on_call_done(int frame, const RequestSpec& spec, const RequestRecord& record,
                    double now_s) override;
  void on_timer(int frame, double now_s) override;
  bool ended() const override { return ended_; }
  bool done() const override { return ended_ && in_flight_ == 0; }
  const SessionRecord& record() const override { return record_; }

 private:
  void begin(int call, double now_s);
  void issue(int call, double now_s);
  // Spans: the call's spans from now_s, after the span `after` ends; call_span_ is the last.
  void add_spans(int call, double now_s, int after);
  int add_span(SpanKind kind, int call, double start_s, double end_s, int after);
  void call_ended(int call, const CriticalPath& path, double now_s);
  void end(const CriticalPath& path, double now_s, bool ok, FailureCause cause);

  const TracedSession& trace_;
  SessionHost& host_;
  std::vector<int> waiting_;                  // per call: dependencies not ended yet
  std::vector<std::vector<int>> dependents_;  // per call: the calls that wait for it
  std::vector<CriticalPath> start_path_;      // per call: the path it started with
  std::vector<CriticalPath> end_path_;        // per call, once it ended
  std::vector<double> end_s_;                 // seconds; per call, once it ended
  size_t ended_calls_ = 0;
  int in_flight_ = 0;
  bool ended_ = false;
  double last_answer_s_ = -1;  // seconds
  SessionRecord record_;
  bool spans_ = false;
  std::vector<int> call_span_;   // spans: per call, its last span (-1 before it started)
  std::vector<int> span_after_;  // per span: the span whose end started it, -1 for none
};

}  // namespace servesim
