// EventLoop: the run loop of a simulation — owns the simulated clock, the EventQueue and the
// Fingerprint, and hands each event to an EventHandler. Split into step() (take and execute
// one event) and run() (until drained, a time limit, or a stop request) so front ends can
// single-step, run until a time, or stop, as OMNeT++'s kernel allows.
//
// Time: simulated only; the wall clock is never read.
// Ownership: the loop borrows the handler and observer for the duration of a call.
// Thread-safety: none, except that the observer's should_stop() may be backed by an atomic
// set from another thread.
// Invariants: (1) now_s() never decreases; (2) every executed event is folded into the
// fingerprint in execution order; (3) scheduling into the past is a programming error
// (std::logic_error), never silently reordered.
#pragma once

#include <cstdint>
#include <limits>

#include "sim/core/event_queue.h"
#include "sim/core/fingerprint.h"
#include "sim/core/observer.h"

namespace servesim {

class EventHandler {
 public:
  struct Progress {
    uint64_t done = 0;   // requests finished
    uint64_t total = 0;  // requests expected; 0 when unknown
  };

  virtual ~EventHandler() = default;
  virtual void handle(const Event& event) = 0;
  // What on_progress reports; the default reports nothing useful.
  virtual Progress progress() const { return {}; }
};

struct RunOptions {
  static constexpr double kForever = std::numeric_limits<double>::infinity();

  double until_s = kForever;         // seconds; events after this stay queued
  uint64_t stop_check_every = 4096;  // events between should_stop() polls
  double progress_every_s = 1.0;     // seconds of simulated time between on_progress
};

enum class StopReason {
  kDrained,    // no events left
  kTimeLimit,  // the next event lies after until_s
  kStopped,    // request_stop() or Observer::should_stop()
};

class EventLoop {
 public:
  // REQUIRES: time_s >= now_s() (and finite). Returns the event's seq.
  uint64_t schedule(double time_s, EventKind kind, uint32_t target = 0, uint64_t payload = 0);
  // Schedules at now_s() + delay_s. REQUIRES: delay_s >= 0.
  uint64_t schedule_in(double delay_s, EventKind kind, uint32_t target = 0, uint64_t payload = 0);

  // Executes the earliest event; false if there was none.
  bool step(EventHandler& handler);
  // Executes events until drained, past options.until_s (the clock then advances to
  // until_s), or asked to stop. Reports on_progress at start, every progress_every_s of
  // simulated time and at the end.
  StopReason run(EventHandler& handler, Observer& observer, const RunOptions& options = {});
  // Makes run() return kStopped before the next event; safe to call from a handler.
  void request_stop() { stop_requested_ = true; }

  double now_s() const { return now_s_; }
  bool empty() const { return queue_.empty(); }
  size_t pending() const { return queue_.size(); }
  uint64_t events_executed() const { return fingerprint_.events(); }
  const Fingerprint& fingerprint() const { return fingerprint_; }
  Fingerprint& fingerprint() { return fingerprint_; }

 private:
  void execute(EventHandler& handler);

  EventQueue queue_;
  Fingerprint fingerprint_;
  double now_s_ = 0.0;
  bool stop_requested_ = false;
};

}  // namespace servesim
