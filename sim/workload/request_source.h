// RequestSource: where a simulation gets its requests. The simulator pulls: it asks for the
// earliest pending arrival, pops requests when their time comes, and tells the source when
// each request leaves, so closed-loop clients and multi-turn sessions can schedule their
// next request after a think time.
//
// Driving pattern (the source never touches the event queue):
//   if (auto t = src.next_arrival_s()) loop.schedule(*t, EventKind::kArrival);
//   on kArrival at now: while (src.next_arrival_s() && *src.next_arrival_s() <= now)
//                         admit(src.pop());
//                       then schedule the next arrival as above;
//   on a request leaving (any status): src.on_request_done(spec, now) — or, where the
//                         simulator has the request's record, src.on_request_left(spec,
//                         record, now), which forwards to it by default — then, if
//                         next_arrival_s() is earlier than the arrival already scheduled,
//                         schedule another kArrival (a stale one finds nothing due).
// Sources with timers of their own (agent tool calls, see sim/agent) wake the simulator
// through next_arrival_s() too: before popping at time now the simulator calls
// src.advance_to(now), which fires those timers (a no-op for the other sources).
// Ids: pop() numbers requests 0, 1, 2, ... in arrival order, whatever the workload.
// Ownership: the source owns its pending requests; pop() hands a RequestSpec over by value.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/core/request_record.h"

namespace servesim {

// A run of stream tokens inside a prompt: token k is synthetic_stream_token(stream,
// offset + k). Agent contexts are a list of these (a tool result, an earlier call's prompt and
// answer, a summary), so the same content keeps the same token ids wherever it sits.
struct PromptSegment {
  uint64_t stream = 0;
  uint64_t offset = 0;  // position in the stream of the segment's first token
  int tokens = 0;
};

struct RequestSpec {
  uint64_t id = 0;               // 0, 1, 2, ... in arrival order
  double arrival_s = 0.0;        // seconds, simulated
  int prompt_tokens = 0;         // tokens, everything the model must read (prefix included)
  int output_tokens = 0;         // tokens to generate
  uint64_t prefix_group = 0;     // requests of one group share their first shared_prefix_tokens
  int shared_prefix_tokens = 0;  // tokens of the group's system prompt; 0 = no sharing
  uint64_t session = 0;          // multi-turn session id (a one-request session otherwise)
  int turn = 0;                  // turn within the session, 0 = first
  int session_turns = 1;         // turns the session will have in all
  int history_tokens = 0;        // tokens repeated from the previous turn (its prompt + its
                                 // output): a prefix this request shares with that turn
  uint32_t client = 0;           // closed-loop / stepped client index; 0 for open loop
  int step_index = 0;            // stepped-concurrency step it arrived in; else 0
  uint32_t tenant = 0;           // index into the service's tenants; 0 without tenants
  bool tenant_chosen = false;    // the workload set `tenant` (an agent workflow's "tenant"):
                                 // the service keeps it instead of drawing one by share
  int priority = 0;              // vLLM's request priority: smaller is served first under
                                 // --scheduling-policy priority (vLLM V1, 0.12); 0 = default
  std::vector<uint64_t> block_hashes;  // Mooncake traces only: hash id per 512-token block
  // Agent calls only: the deployment the call goes to; 0 is the scenario's own, k its
  // deployments[k - 1] (SimulationConfig::deployments).
  uint32_t deployment = 0;
  // Agent calls only: 1 + the id of the session that made the call (0: not an agent call).
  // prefix_affinity routes a session's calls to one replica, where its context is cached.
  uint64_t agent_session = 0;
  // Agent calls only: the context between the shared prefix and the new tokens. The prompt is
  // then the group's shared_prefix_tokens, these segments, and the rest from the `session`
  // stream at their absolute positions (where the engine's outputs continue it).
  std::vector<PromptSegment> context;
};

class RequestSource {
 public:
  virtual ~RequestSource() = default;

  // Earliest pending arrival (seconds); nullopt when none is pending now — either the
  // workload is finished or every client is waiting for an answer.
  virtual std::optional<double> next_arrival_s() = 0;
  // Removes and returns the earliest pending request. REQUIRES: next_arrival_s().
  virtual RequestSpec pop() = 0;
  // A request left the system at now_s (finished, rejected or timed out).
  virtual void on_request_done(const RequestSpec& request, double now_s) = 0;
  // The same, with the client-side record of the request (segments, cached tokens).
  virtual void on_request_left(const RequestSpec& request, const RequestRecord& record,
                               double now_s) {
    (void)record;
    on_request_done(request, now_s);
  }
  // Fires the source's own timers due at or before now_s (see the driving pattern).
  virtual void advance_to(double now_s) { (void)now_s; }
  // True when nothing is pending and nothing ever will be.
  virtual bool finished() = 0;
  // Requests the workload will issue in all, if known (for progress); 0 when unknown.
  virtual uint64_t expected_total() const = 0;
};

}  // namespace servesim
