#include "sim/core/event_loop.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace servesim {

uint64_t EventLoop::schedule(double time_s, EventKind kind, uint32_t target, uint64_t payload) {
  if (!(time_s >= now_s_) || !std::isfinite(time_s)) {
    throw std::logic_error("EventLoop::schedule: " + std::string(to_string(kind)) + " event at " +
                           std::to_string(time_s) + " s is before now (" + std::to_string(now_s_) +
                           " s) or not finite");
  }
  return queue_.push(time_s, kind, target, payload);
}

uint64_t EventLoop::schedule_in(double delay_s, EventKind kind, uint32_t target, uint64_t payload) {
  return schedule(now_s_ + delay_s, kind, target, payload);
}

void EventLoop::execute(EventHandler& handler) {
  const Event event = queue_.pop();
  now_s_ = event.time_s;
  fingerprint_.add(event);
  handler.handle(event);
}

bool EventLoop::step(EventHandler& handler) {
  if (queue_.empty()) return false;
  execute(handler);
  return true;
}

StopReason EventLoop::run(EventHandler& handler, Observer& observer, const RunOptions& options) {
  stop_requested_ = false;
  auto report = [&] {
    const EventHandler::Progress p = handler.progress();
    observer.on_progress(now_s_, p.done, p.total);
  };
  report();
  double next_report_s = now_s_ + options.progress_every_s;
  const uint64_t check_every = options.stop_check_every == 0 ? 1 : options.stop_check_every;
  uint64_t until_check = check_every;
  StopReason reason = StopReason::kDrained;
  for (;;) {
    if (stop_requested_) {
      reason = StopReason::kStopped;
      break;
    }
    if (queue_.empty()) {
      reason = StopReason::kDrained;
      break;
    }
    if (queue_.top().time_s > options.until_s) {
      now_s_ = std::max(now_s_, options.until_s);
      reason = StopReason::kTimeLimit;
      break;
    }
    if (--until_check == 0) {
      until_check = check_every;
      if (observer.should_stop()) {
        reason = StopReason::kStopped;
        break;
      }
    }
    execute(handler);
    if (now_s_ >= next_report_s) {
      report();
      // Skip empty stretches in one go rather than reporting each missed interval.
      next_report_s = now_s_ + options.progress_every_s;
    }
  }
  report();
  return reason;
}

}  // namespace servesim
