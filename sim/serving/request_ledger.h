// RequestLedger: the requests one serving loop has in flight, from admission to the record
// they leave as — shared by the simulator's Replica and the real-time EngineServer, so a
// simulated and a served request are admitted, timed and recorded by the same code. Each loop
// keeps only what really differs: when things happen (simulated events or the wall clock).
//
//   admission: prompt + output beyond max_model_len is refused before scheduling, as vLLM's
//     OpenAI server does; otherwise the Request to queue (synthetic prompt token ids,
//     ignore_eos so it generates exactly its output length);
//   each step: first scheduled (a prefill entry's step start), first token, last token, and
//     the inter-token gap of every later token;
//   leaving: the RequestRecord, and the request is forgotten.
//
// Owns the in-flight entries only (memory bounded by what is in flight). Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "engine/sched/request.h"
#include "sim/core/request_record.h"
#include "sim/serving/in_flight_request.h"
#include "sim/workload/request_source.h"

namespace servesim {

class RequestLedger {
 public:
  // replica: the index records carry; vocab_size: range of the synthetic token ids.
  RequestLedger(int replica, int max_model_len, int vocab_size);

  // The Request to queue for `spec`, now recorded in flight; or nullopt after writing the
  // rejected record to `rejected` when prompt + output exceeds max_model_len.
  std::optional<Request> admit(const RequestSpec& spec, RequestRecord& rejected);

  // A step starting at start_s schedules request `id`; prefill entries stamp its first
  // scheduling. Unknown ids are ignored.
  void on_scheduled(uint64_t id, bool is_prefill, double start_s);

  // KV offload: request `id` waits load_s seconds for KV from the host tier; before its first
  // scheduling that wait is its record's kv_transfer segment, not engine queue. Unknown ids
  // are ignored.
  void on_host_load(uint64_t id, double load_s);
  // Request `id` produced a token at now_s. One lookup per token (this is the simulator's
  // hottest path): the request's spec (nullptr for an unknown id) and the gap since its
  // previous token (nullopt for its first).
  struct TokenTime {
    const RequestSpec* spec = nullptr;
    std::optional<double> gap_s;  // seconds
  };
  TokenTime on_token(uint64_t id, double now_s);

  struct Left {
    RequestSpec spec;
    RequestRecord record;
  };
  // The request the scheduler reported finished (or rejected) leaves at now_s; nullopt when it
  // was not in flight.
  std::optional<Left> leave(const FinishedRequest& done, double now_s);

  // The request was aborted (its client went away): forgotten without a record. Later
  // on_token() and leave() calls for it find nothing.
  void forget(uint64_t id) { in_flight_.erase(id); }

  int64_t outstanding() const { return static_cast<int64_t>(in_flight_.size()); }

 private:
  int replica_;
  int max_model_len_;  // tokens
  int vocab_size_;
  std::unordered_map<uint64_t, InFlightRequest> in_flight_;
};

}  // namespace servesim
