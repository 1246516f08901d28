// Observer: the one seam through which a running simulation reports to whatever drives it
// (CLI, GUI worker, tests), in the spirit of OMNeT++'s cEnvir. Every method has a no-op
// default, so a front end overrides only what it shows; NullObserver is the do-nothing one.
//
// Threading: callbacks run on the simulation's thread, synchronously; an observer that
// forwards to another thread (the GUI) copies what it needs. should_stop() is polled every
// few thousand events, so it must be cheap (an atomic load).
// Ownership: the simulation borrows the observer for the duration of a run.
#pragma once

#include <cstdint>

#include "sim/core/request_record.h"
#include "sim/core/session_record.h"

namespace servesim {

struct TimeSample {
  double time_s = 0.0;        // seconds, simulated
  int replica = 0;            // replica index
  int running = 0;            // sequences in the running batch
  int waiting = 0;            // sequences waiting to be scheduled
  double kv_usage = 0.0;      // fraction of KV blocks in use, 0..1
  int tokens_in_step = 0;     // tokens computed by the last step (prefill + decode)
  int preemptions_total = 0;  // preemptions since the run started
};

class Observer {
 public:
  virtual ~Observer() = default;
  // done/total in requests; total is 0 when unknown (an open-ended trace).
  virtual void on_progress(double sim_time_s, uint64_t done, uint64_t total) {
    (void)sim_time_s, (void)done, (void)total;
  }
  virtual void on_request_done(const RequestRecord& record) { (void)record; }
  virtual void on_sample(const TimeSample& sample) { (void)sample; }
  // An agent session ended (agent workloads only, sim/agent).
  virtual void on_session_done(const SessionRecord& record) { (void)record; }
  // Whether the sessions starting now should record their calls' spans (SessionRecord::spans):
  // asked as each agent session starts, so an observer that keeps a bounded number of them
  // can stop the recording cost once it has enough.
  virtual bool wants_session_spans() { return false; }
  // True asks the run to stop at the next check; the partial results stay valid.
  virtual bool should_stop() { return false; }
};

class NullObserver final : public Observer {};

}  // namespace servesim
