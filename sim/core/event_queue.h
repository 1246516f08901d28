// EventQueue: the future event set of the simulation — a binary min-heap over a vector,
// ordered by (time_s, seq) so that events at equal simulated time run in the order they
// were scheduled (deterministic tie-breaking, as OMNeT++ does).
//
// Ownership: the queue owns its events by value; an Event is a 32-byte POD, so pushing never
// allocates once the vector has grown to the peak number of pending events.
// Thread-safety: none; one simulation owns one queue.
// Invariants: (1) top() is the pending event with the smallest (time_s, seq);
//             (2) seq is assigned by push() and strictly increases over the queue's lifetime.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace servesim {

// What an event means; the module that owns a kind interprets its target and payload. The
// numbers are part of every fingerprint (Fingerprint::add folds the kind in), so a kind keeps
// its number for ever: a new kind takes a new one, a retired one leaves a gap (3 was a
// request-done kind nothing scheduled).
enum class EventKind : uint8_t {
  // Simulation's driver.
  kArrival = 0,  // the workload's next request is due (target and payload unused)
  kSample = 6,   // take a time-series sample
  // Cluster (sim/serving): one deployment's replicas and links.
  kDispatch = 1,       // a lock-step (expert-parallel) group starts its next wave (target: group)
  kStepEnd = 2,        // a replica's forward step finishes (target: replica)
  kTimeout = 5,        // a replica's static batch stops gathering (target: replica)
  kKvHandoff = 11,     // a prefilled request reaches the decode side (target: deployment,
                       // payload: request id)
  kKvLoaded = 12,      // a request's prompt KV is in (target: decode replica, payload: request id)
  kHostKvLoaded = 13,  // KV offload: a load from host memory is in (target: replica, payload: id)
  kHostKvStored = 14,  // KV offload: a step's stores are in host memory (target: replica,
                       // payload: step number)
  // ServicePath (sim/service): the request path above the engine.
  kClientWake = 4,       // a client retries after its back-off (payload: attempt id)
  kNetworkDelivery = 7,  // a message crosses the simulated network (target: direction, payload: id)
  kStationDone = 9,      // a service station finishes a job (target: station, payload: job id)
  kDeadline = 10,        // a client, pool or gateway deadline, or a disconnect (payload: id)
  // Front ends and tests.
  kUser = 8,
};

std::string_view to_string(EventKind kind);

// The kind as one bit of a 32-bit set (an owner's `owns(kind)` test).
constexpr uint32_t event_bit(EventKind kind) {
  return 1u << static_cast<unsigned>(kind);
}

struct Event {
  double time_s;  // seconds of simulated time since the run started
  uint64_t seq;   // insertion order; breaks ties between equal times
  EventKind kind;
  uint32_t target;   // replica or client index, by kind
  uint64_t payload;  // request or message id, by kind
};

class EventQueue {
 public:
  // Schedules an event and returns its seq. The caller must not schedule into the past;
  // EventLoop enforces that, the queue itself accepts any time.
  uint64_t push(double time_s, EventKind kind, uint32_t target, uint64_t payload);

  // REQUIRES: !empty().
  const Event& top() const { return heap_.front(); }
  // Removes and returns the earliest event. REQUIRES: !empty().
  Event pop();

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  void reserve(size_t n) { heap_.reserve(n); }
  void clear();

 private:
  void sift_up(size_t i);
  void sift_down(size_t i);

  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace servesim
