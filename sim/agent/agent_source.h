// AgentSource: the RequestSource of an agent workload. Sessions start by the workload's
// open-loop arrival or from closed-loop users (each runs one session after another, thinking
// think_time_s between them); each picks a workflow by weight and runs as an AgentSession,
// whose LLM calls become the requests the simulator pops and whose tool calls are timers this
// source owns. next_arrival_s() covers both: the simulator calls advance_to(now) before
// popping (request_source.h), which fires the timers due, so a tool's end may issue the next
// call at that very time.
//
// Ids: popped requests are numbered 0, 1, 2, ...; sessions 0, 1, 2, ... in start order.
// Each session's end goes to the Observer (on_session_done) and into SessionMetrics.
// Determinism: one Rng stream per purpose (arrivals, workflow choice, think times, and each
// of the session purposes), all forked from the workload's seed; token streams are numbered
// in issue order. A trace workload replays its recorded sessions (TraceSession) in order of
// their start, at their recorded starts or by the arrival. Memory: O(sessions in flight + their
// steps and context segments + timers), plus one double per key of each cached tool step (the
// tool-result caches, shared by all sessions). Ownership: owns its sessions; borrows the AgentSpec
// and the Observer, which must outlive it. Thread-safety: none.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sim/agent/agent_session.h"
#include "sim/agent/agent_spec.h"
#include "sim/agent/session_metrics.h"
#include "sim/agent/trace_session.h"
#include "sim/core/observer.h"
#include "sim/core/rng.h"
#include "sim/workload/workload.h"

namespace servesim {

class AgentSource final : public RequestSource, public SessionHost {
 public:
  // REQUIRES: workload.kind == kAgent; `agent` parsed from workload.agent.
  AgentSource(const WorkloadSpec& workload, const AgentSpec& agent, Observer& observer);
  ~AgentSource() override;

  std::optional<double> next_arrival_s() override;
  RequestSpec pop() override;
  void on_request_done(const RequestSpec& request, double now_s) override;
  void on_request_left(const RequestSpec& request, const RequestRecord& record,
                       double now_s) override;
  void advance_to(double now_s) override;
  bool finished() override;
  uint64_t expected_total() const override { return 0; }

  const SessionMetrics& metrics() const { return metrics_; }

  // SessionHost, for the sessions it runs.
  void issue_call(SessionRun& session, int frame, RequestSpec spec) override;
  void start_timer(SessionRun& session, int frame, double at_s) override;
  uint64_t new_stream() override { return next_stream_++; }
  Rng& rng(Purpose purpose) override;
  ToolResultCache& tool_cache(const StepSpec& step) override;
  uint64_t trace_block_id(uint64_t hash_lo, uint64_t hash_hi) override;
  std::pair<uint64_t, uint64_t> replay_block(uint64_t block_id, uint64_t stream,
                                             uint64_t offset) override;

 private:
  enum class TimerKind { kTool, kUserStart };
  struct Timer {
    double at_s;  // seconds
    uint64_t seq;
    TimerKind kind;
    uint64_t session;  // kTool
    int frame;         // kTool
    uint32_t user;     // kUserStart
  };
  struct Later {
    bool operator()(const Timer& a, const Timer& b) const {
      return a.at_s > b.at_s || (a.at_s == b.at_s && a.seq > b.seq);
    }
  };
  struct Call {
    uint64_t session;
    int frame;
  };

  void push_timer(Timer t);
  bool may_start(double at_s) const;
  void start_session(uint32_t user, double now_s);
  // The session may have ended: report it once, free it once nothing of it is in flight.
  void settle(uint64_t session);
  void draw_open_start();

  const WorkloadSpec& workload_;
  const AgentSpec& agent_;
  Observer& observer_;
  std::vector<Rng> rngs_;  // one per SessionHost::Purpose
  Rng arrival_rng_;
  Rng workflow_rng_;
  Rng think_rng_;
  ArrivalProcess arrival_;
  double total_weight_ = 0;
  std::optional<double> next_open_s_;  // open loop: the next session start, drawn lazily
  bool open_exhausted_ = false;
  std::vector<Timer> timers_;  // a min-heap by (at_s, seq)
  uint64_t next_seq_ = 0;
  struct ReadyCall {
    RequestSpec spec;
    Call call;  // its session and frame
  };
  std::deque<ReadyCall> ready_;  // issued calls not yet popped, by arrival_s then issue order
  std::unordered_map<uint64_t, Call> in_flight_;  // popped request id -> its step
  std::unordered_map<uint64_t, std::unique_ptr<SessionRun>> sessions_;
  std::unordered_set<uint64_t> reported_;  // sessions in flight whose end was reported
  // Sessions whose workflow names a service tenant: session -> tenant index.
  std::unordered_map<uint64_t, int> session_tenants_;
  std::unordered_map<const StepSpec*, ToolResultCache> tool_caches_;  // by cached tool step
  struct PairHash {
    size_t operator()(const std::pair<uint64_t, uint64_t>& p) const {
      return static_cast<size_t>(p.first ^ (p.second * 0x9e3779b97f4a7c15ULL));
    }
  };
  // Recording traces: block hash -> id. Replaying: block id -> (stream, offset).
  std::unordered_map<std::pair<uint64_t, uint64_t>, uint64_t, PairHash> trace_block_ids_;
  std::unordered_map<uint64_t, std::pair<uint64_t, uint64_t>> replay_blocks_;
  uint64_t next_request_ = 0;
  uint64_t next_session_ = 0;
  uint64_t next_stream_ = 1;
  SessionMetrics metrics_;
};

}  // namespace servesim
