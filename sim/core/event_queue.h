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

// What an event means; the handler interprets target and payload per kind.
enum class EventKind : uint8_t {
  kArrival,          // a request arrives at the front door (payload: request id or unused)
  kDispatch,         // a routed request reaches a replica (target: replica)
  kStepEnd,          // a replica's forward step finishes (target: replica)
  kRequestDone,      // a request completed; workloads may schedule follow-ups
  kClientWake,       // a closed-loop client or session ends its think time (target: client)
  kTimeout,          // a request's deadline passes (payload: request id)
  kSample,           // take a time-series sample
  kNetworkDelivery,  // a message crosses the simulated network (payload: message id)
  kUser,             // reserved for front ends and tests
  kStationDone,      // a service station finishes a job (target: station, payload: job id)
  kDeadline,         // a service-path request's client or gateway deadline (payload: request id)
  kKvHandoff,        // a prefilled request reaches the decode side (payload: request id)
  kKvLoaded,         // a request's prompt KV is in (target: decode replica, payload: request id)
  kHostKvLoaded,     // KV offload: a load from host memory is in (target: replica, payload: id)
  kHostKvStored,     // KV offload: a step's stores are in host memory (payload: step number)
};

std::string_view to_string(EventKind kind);

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
