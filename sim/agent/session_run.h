// SessionRun: one running agent session as its SessionHost (the AgentSource) drives it —
// started at its start time, told when each of its LLM calls left the deployment and when each
// of its timers fired, and asked whether it has ended. AgentSession (a workflow interpreted
// step by step) and TraceSession (a recorded session replayed) are the two kinds.
// Interface; implementations are single-threaded and owned by the host.
#pragma once

#include "sim/core/session_record.h"
#include "sim/workload/request_source.h"

namespace servesim {

class SessionRun {
 public:
  virtual ~SessionRun() = default;
  virtual void start(double now_s) = 0;
  // `frame` is what the run passed to issue_call / start_timer.
  virtual void on_call_done(int frame, const RequestSpec& spec, const RequestRecord& record,
                            double now_s) = 0;
  virtual void on_timer(int frame, double now_s) = 0;
  // The outcome is known (record() is final); calls may still be in flight.
  virtual bool ended() const = 0;
  // Nothing of the session is in flight any more.
  virtual bool done() const = 0;
  virtual const SessionRecord& record() const = 0;
};

}  // namespace servesim
