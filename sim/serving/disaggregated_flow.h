// DisaggregatedFlow: what a disaggregated deployment knows of each request between its arrival
// at a prefill instance and its leaving a decode instance — when the prefill began and ended,
// when the decode instance took it and when its KV was in — and the one RequestRecord the
// user sees, composed from both instances' records.
//
// The composed record's segments still sum to the request's latency: engine_queue_s is the
// wait at the prefill instance; prefill_s the prefill there plus the decode instance's first
// step (it recomputes the last prompt token to sample the first output token); decode_queue_s
// the hand-off and the decode instance's admission wait (blocks, max_num_seqs); kv_transfer_s
// the transfer, its wait for the link included; decode_s the rest of the output.
//
// Owns one entry per request in flight (bounded by the requests in flight). Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "sim/core/request_record.h"
#include "sim/workload/request_source.h"

namespace servesim {

class DisaggregatedFlow {
 public:
  // The request reached a prefill instance at now_s.
  void arrived(const RequestSpec& spec, double now_s);
  // What the prefill instance runs: the request with a single output token (vLLM's proxy
  // sends it with max_tokens 1).
  static RequestSpec prefill_request(const RequestSpec& spec);

  // The prefill instance `replica` finished it (a kOk record) at now_s. False when the
  // request is not tracked (aborted meanwhile).
  bool prefilled(const RequestRecord& prefill, double now_s);
  // The decode instance allocated its blocks and started the KV load at now_s.
  void load_started(uint64_t id, double now_s);
  // Its KV arrived at now_s.
  void loaded(uint64_t id, double now_s);
  // The prefill instance holding the request's blocks, or -1 when not tracked.
  int prefill_replica(uint64_t id) const;
  // When the request's prefill began (seconds), for layer-wise transfers.
  double prefill_start_s(uint64_t id) const;

  // The record the user sees for `decode`, the decode instance's record of it (any status),
  // and forgets the request. Without an entry the record is returned as it is.
  RequestRecord finish(const RequestRecord& decode);
  // Forgets the request (aborted, or failed at the prefill instance).
  void forget(uint64_t id) { flows_.erase(id); }
  bool tracks(uint64_t id) const { return flows_.count(id) > 0; }
  size_t in_flight() const { return flows_.size(); }

 private:
  struct Flow {
    double arrival_s = 0;  // at the prefill instance
    double prefill_start_s = RequestRecord::kNever;
    double prefill_end_s = RequestRecord::kNever;
    double load_start_s = RequestRecord::kNever;
    double loaded_s = RequestRecord::kNever;
    int prefill_replica = -1;
    int cached_prompt_tokens = 0;  // prefix-cache hit at the prefill instance
    int preemptions = 0;           // at the prefill instance
  };

  std::unordered_map<uint64_t, Flow> flows_;
};

}  // namespace servesim
