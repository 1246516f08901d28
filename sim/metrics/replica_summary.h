// ReplicaSummary: what one replica (simulated, or the real-time engine) did over a run, from
// its scheduler's statistics and the step times it took; summary.json's "replicas" entries.
// AdmissionCounters: how often its scheduler left requests waiting, and what held them back.
// Plain data.
#pragma once

#include <cstdint>

#include "models/cost_model.h"

namespace servesim {

// Counted right after each schedule() that produced a step (the simulator only; zero for the
// real-time engine). A step that left requests waiting counts its seconds under the first
// limit it hit: seconds, not steps, so a phase of long steps weighs what it lasted.
struct AdmissionCounters {
  double waiting_s = 0;          // seconds of steps that left at least one request waiting
  double at_seq_cap_s = 0;       // of those: max_num_seqs sequences running
  double at_token_budget_s = 0;  // else: the whole max_num_batched_tokens used
  // Else, with continuous batching and chunked prefill (the only other way vLLM V1's waiting
  // loop stops): the next request's KV blocks did not fit, or a preemption stopped admission.
  // Not counted under other policies, where a request may wait by design.
  double at_kv_limit_s = 0;
  int peak_running = 0;      // most sequences in one step
  double peak_kv_usage = 0;  // highest fraction of usable KV blocks in use at a step
};

// What a replica serves: everything, or one side of a disaggregated deployment.
enum class ReplicaRole : uint8_t { kAggregated, kPrefill, kDecode };

// KV offload's host tier and its PCIe link over a run (zero without offload).
struct HostKvSummary {
  int64_t blocks = 0;          // host blocks (num_host_kv_blocks)
  int64_t hit_tokens = 0;      // prompt tokens loaded from the host instead of computed
  int64_t queried_tokens = 0;  // prompt tokens looked up at admissions (first and later)
  int64_t stored_blocks = 0;   // blocks copied to the host
  int64_t evicted_blocks = 0;  // host blocks reused for other content
  double bandwidth_Bps = 0;    // the link's bytes/s per direction, per GPU
  double load_busy_s = 0;      // seconds the link spent loading (host to GPU)
  double store_busy_s = 0;     // seconds it spent storing (GPU to host)
  double loaded_bytes = 0;     // per GPU
  double stored_bytes = 0;     // per GPU

  double hit_rate() const {  // hit_tokens over queried_tokens
    return queried_tokens > 0
               ? static_cast<double>(hit_tokens) / static_cast<double>(queried_tokens)
               : 0;
  }
};

struct ReplicaSummary {
  ReplicaRole role = ReplicaRole::kAggregated;
  uint32_t deployment = 0;  // 0: the scenario's own deployment; k: its deployments[k - 1]
  int64_t steps = 0;
  double busy_s = 0;  // seconds inside steps (simulated, or wall clock on the engine)
  int64_t preemptions = 0;
  double prefix_cache_hit_rate = 0;  // of prompt tokens looked up at admission
  int64_t evicted_blocks = 0;
  int64_t kv_blocks_used_at_end = 0;  // still referenced when the run ended: 0 unless stopped
  int max_num_seqs = 0;               // the caps the scheduler ran under (sequences)
  int max_num_batched_tokens = 0;     // tokens per step
  AdmissionCounters admission;
  HostKvSummary host_kv;
  StepTime op_totals;  // seconds per op over the run
};

}  // namespace servesim
