#include "sim/core/event_queue.h"

#include <utility>

namespace servesim {

namespace {

bool earlier(const Event& a, const Event& b) {
  return a.time_s < b.time_s || (a.time_s == b.time_s && a.seq < b.seq);
}

}  // namespace

std::string_view to_string(EventKind kind) {
  switch (kind) {
    case EventKind::kArrival:
      return "arrival";
    case EventKind::kDispatch:
      return "dispatch";
    case EventKind::kStepEnd:
      return "step_end";
    case EventKind::kClientWake:
      return "client_wake";
    case EventKind::kTimeout:
      return "timeout";
    case EventKind::kSample:
      return "sample";
    case EventKind::kNetworkDelivery:
      return "network_delivery";
    case EventKind::kStationDone:
      return "station_done";
    case EventKind::kDeadline:
      return "deadline";
    case EventKind::kKvHandoff:
      return "kv_handoff";
    case EventKind::kKvLoaded:
      return "kv_loaded";
    case EventKind::kHostKvLoaded:
      return "host_kv_loaded";
    case EventKind::kHostKvStored:
      return "host_kv_stored";
    case EventKind::kUser:
      return "user";
  }
  return "unknown";
}

uint64_t EventQueue::push(double time_s, EventKind kind, uint32_t target, uint64_t payload) {
  const uint64_t seq = next_seq_++;
  heap_.push_back(Event{time_s, seq, kind, target, payload});
  sift_up(heap_.size() - 1);
  return seq;
}

Event EventQueue::pop() {
  Event first = heap_.front();
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
  return first;
}

void EventQueue::clear() {
  heap_.clear();
  next_seq_ = 0;
}

// Hand-written sifts move the hole instead of swapping, one copy per level.
void EventQueue::sift_up(size_t i) {
  Event moving = heap_[i];
  while (i > 0) {
    const size_t parent = (i - 1) / 2;
    if (!earlier(moving, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = moving;
}

void EventQueue::sift_down(size_t i) {
  const size_t n = heap_.size();
  Event moving = heap_[i];
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && earlier(heap_[child + 1], heap_[child])) ++child;
    if (!earlier(heap_[child], moving)) break;
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = moving;
}

}  // namespace servesim
