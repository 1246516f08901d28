// AgentSession: one running session of a workflow — the interpreter of its step tree. It
// issues LLM calls (RequestSpecs) and starts timers (tool calls) through its SessionHost,
// and advances when the host reports a call's end (with its RequestRecord) or a timer.
//
// Each active step is a Frame (arena-allocated, indices, freed with the session). A frame
// starts with the critical path that led to it — that of the step whose end started it: the
// previous step of a sequence, the group's start for a parallel child, or the child whose end
// freed a parallel slot — and ends with it plus its own time, so the path of the root's end
// sums to the session's E2E. LLM calls split their time as their records do (engine queue,
// prefill, decode; the rest is the service path); tools count whole, retries included; cache
// lookups count apart. A step with a cache looks it up first (lookup_s, a timer): a hit
// answers at the lookup's end — a tool's result, or an LLM step's answer (new and output
// tokens drawn as for a call, entering the context as a call's would, in a token stream the
// engine has not seen) — a miss then runs the tool or calls the deployment; a tool run that
// succeeded stores its key at its end.
// Failure: an LLM call that fails (rejected, timed out) ends the session as failed at that
// time; its calls still in flight are waited for (done() stays false) but change nothing.
// Spans (opt-in): each call, tool run and lookup becomes a SessionSpan that remembers the span
// whose end started it — the last span of the critical path it began with (last_span) — so
// the end walks the root's path back through those links and marks the very calls the path
// summed as critical.
// Memory: O(steps run + context segments) per session. Thread-safety: none.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "sim/agent/agent_context.h"
#include "sim/agent/session_run.h"
#include "sim/agent/session_trace.h"
#include "sim/agent/tool_result_cache.h"
#include "sim/agent/workflow_spec.h"
#include "sim/core/rng.h"
#include "sim/core/session_record.h"
#include "sim/workload/request_source.h"

namespace servesim {

// What a session needs from the source that runs it. Random draws come from streams the host
// owns, one per purpose, so sessions stay reproducible from the seed.
class SessionHost {
 public:
  enum class Purpose {
    kLlmNewTokens,
    kLlmOutput,
    kToolLatency,
    kToolFailure,
    kToolResult,
    kBranch,
    kCacheKey,     // a cached tool's key
    kCacheHit,     // whether an LLM response cache answers
    kCacheLookup,  // lookup times
  };

  virtual ~SessionHost() = default;
  // Sends an LLM call at spec.arrival_s, the session's own now (which a call's failure seen
  // after the client's turnaround can put ahead of other sessions'); the host fills id and
  // reports its end with session.on_call_done(frame, ...).
  virtual void issue_call(SessionRun& session, int frame, RequestSpec spec) = 0;
  // Calls session.on_timer(frame, at_s) at simulated time at_s.
  virtual void start_timer(SessionRun& session, int frame, double at_s) = 0;
  virtual uint64_t new_stream() = 0;  // a token stream no other call or tool uses
  virtual Rng& rng(Purpose purpose) = 0;
  // The run's cache of a tool step whose cache is enabled, shared by every session.
  virtual ToolResultCache& tool_cache(const StepSpec& step) = 0;
  // Session traces: the id of a block of kTraceBlockTokens tokens by the hash of its content
  // (and everything before it), numbered in order of first appearance across the run.
  virtual uint64_t trace_block_id(uint64_t hash_lo, uint64_t hash_hi) = 0;
  // Replaying a trace: where the tokens of block `block_id` come from — the (stream, offset)
  // of the first call that named it, which is (stream, offset) itself when this call is.
  virtual std::pair<uint64_t, uint64_t> replay_block(uint64_t block_id, uint64_t stream,
                                                     uint64_t offset) = 0;
};

// An LLM call's span times from its record: sent at spec.arrival_s, answered at now_s, and
// the engine's waits, prefill and decode as the record's segments give them. The critical
// path adds these very figures (add_llm_call), so a span and the path cannot disagree.
void set_llm_times(SessionSpan& span, const RequestSpec& spec, const RequestRecord& record,
                   double now_s);
// Adds an ok call of `span`'s times to `path`: its engine wait, prefill and decode, and the
// rest of its send-to-answer time as the service path.
void add_llm_call(const SessionSpan& span, CriticalPath& path);

// Marks the spans on the path that ends with span `last` as critical, following `after`
// (per span: the span whose end started it).
void mark_critical(std::vector<SessionSpan>& spans, const std::vector<int>& after, int last);

class AgentSession final : public SessionRun {
 public:
  // `workflow_group` is the prefix group of the workflow's system prompt. With `trace`, the
  // session also records its calls, their dependencies and prompt blocks (TracedSession),
  // written into record().trace_json when it ends. With `spans`, record().spans holds its
  // calls (SessionRecord).
  AgentSession(uint64_t id, const WorkflowSpec& workflow, uint64_t workflow_group, uint32_t user,
               SessionHost& host, bool trace = false, bool spans = false);

  void start(double now_s) override;
  void on_call_done(int frame, const RequestSpec& spec, const RequestRecord& record,
                    double now_s) override;
  void on_timer(int frame, double now_s) override;

  bool ended() const override { return ended_; }
  bool done() const override { return ended_ && in_flight_ == 0; }
  const SessionRecord& record() const override { return record_; }

 private:
  struct Frame {
    const StepSpec* step = nullptr;
    int parent = -1;
    int context = 0;    // index into contexts_
    CriticalPath path;  // at its start
    // Sequences, loops: the child running; parallel groups: children started / finished.
    size_t next_child = 0;
    size_t finished_children = 0;
    int iteration = 0;
    std::vector<int> child_contexts;  // parallel: one per child, merged in order at the end
    CriticalPath last_path;           // parallel: the path of the child that ended last
    AgentContext::Mark subtask_mark;
    bool summarizing = false;  // llm: the context summary call is in flight
    bool tool_ok = true;
    double tool_s = 0;  // seconds, retries included
    int tool_result_tokens = 0;
    // Steps with a cache: the lookup's time and outcome, and an LLM step's drawn lengths.
    double lookup_s = 0;  // seconds
    bool cache_hit = false;
    int cache_key = -1;  // tools
    int new_tokens = 0;  // llm
    int deployment = 0;  // llm: where its call goes now (the step's, then its fallback)
    int output_tokens = 0;
    // Tracing only: the trace calls this step's start waited for; its own call (llm, tool) or
    // lookup; a parallel group's children's ends so far.
    std::vector<int> deps;
    int call = -1;
    int lookup_call = -1;
    std::vector<int> group_ends;
    // Spans only: this step's call or tool run, and its lookup (indices into record_.spans).
    int span = -1;
    int lookup_span = -1;
  };

  int new_frame(const StepSpec& step, int parent, int context, const CriticalPath& path,
                std::vector<int> deps);
  void begin(int frame, double now_s);
  void begin_llm(int frame, double now_s);
  void begin_tool(int frame, double now_s);
  void run_tool(int frame, double start_s);
  void tool_done(int frame, double now_s);
  void llm_lookup_done(int frame, double now_s);
  // The step's call failed on its deployment: sends it to the step's fallback deployment.
  void fall_back(int frame, const SessionSpan& failed, double now_s);
  // An LLM step's answer (from the deployment or its cache) joins the context.
  void answered(int frame, CriticalPath path, const PromptSegment& turn,
                const PromptSegment& answer, double first_token_s, double now_s);
  void begin_parallel(int frame, double now_s);
  void start_child(int frame, size_t child, int context, const CriticalPath& path,
                   const std::vector<int>& deps, double now_s);
  // Tracing: a call of the session's trace, waiting for `after`; its index.
  int trace_call(TraceCallKind kind, std::vector<int> after);
  void trace_blocks(const RequestSpec& spec, int output_tokens, TraceCall& call);
  void ends_at(int call);
  void trace_tool(int frame, int attempts);
  void run_deferred();
  void issue(int frame, int new_tokens, int output_tokens, double now_s);
  // Spans: a new span of the step, started by the end of span `after` (-1: the session's
  // start); its index.
  int add_span(SpanKind kind, const std::string& step, double start_s, double end_s, int after);
  void summarize(int frame);
  // The frame's step ended with `path`; its parent moves on.
  void finish(int frame, CriticalPath path, double now_s);
  void child_done(int frame, const CriticalPath& path, double now_s);
  void end(const CriticalPath& path, double now_s, bool ok, FailureCause cause);

  uint64_t workflow_group_;
  const WorkflowSpec& workflow_;
  SessionHost& host_;
  std::vector<Frame> frames_;
  std::vector<AgentContext> contexts_;
  std::vector<int8_t> outcomes_;  // per step index: -1 not run, 0 failed, 1 succeeded
  int llm_calls_since_summary_ = 0;
  int in_flight_ = 0;  // calls and timers outstanding
  bool ended_ = false;
  // Steps that complete at once (a zero-latency tool, an empty step, a loop body that takes no
  // time) start the next one from inside the call that finished them; past kMaxNesting levels
  // the next step waits in deferred_ (frame, start time) for the outermost start_child to run
  // it, so the stack stays bounded whatever the workflow. Timed steps never get that deep, so
  // the order of steps (and of their random draws) is the plain depth-first one.
  static constexpr int kMaxNesting = 64;
  int nesting_ = 0;
  std::deque<std::pair<int, double>> deferred_;
  double last_answer_s_ = -1;  // seconds; end of the last workflow LLM call so far
  SessionRecord record_;
  bool tracing_ = false;
  TracedSession trace_;
  // The trace calls whose ends the step that just finished stands for: set by a step as it
  // finishes, read by its parent in the same call chain (finish -> child_done).
  std::vector<int> ends_;
  bool spans_ = false;
  std::vector<int> span_after_;  // per span: the span whose end started it, -1 for none
};

}  // namespace servesim
