// Request: what a caller hands the Scheduler; FinishedRequest: what it hands back when the
// request leaves (finished, aborted or rejected).
//
// The scheduler never reads a clock: `arrival_s` is a stamp chosen by the caller and is only
// used to order requests (priority ties, preemption victims under QueueOrder::kPriority).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

// Disaggregated prefill (vLLM's KV connector: kv_transfer_params of a request sent through a
// prefill/decode proxy): where a request's KV goes to or comes from.
enum class KvTransfer : uint8_t {
  kNone,
  // Prefill instance: when the request finishes, its blocks stay allocated until
  // Scheduler::release_kv(), as vLLM's NixlConnector delays freeing them until the decode
  // instance has read them (do_remote_decode).
  kSendAfterFinish,
  // Decode instance: the prompt's KV is computed elsewhere. At admission its blocks are
  // allocated and the load is announced in SchedulerOutput::kv_loads; the request runs once
  // Scheduler::finish_kv_load() says the KV is in (do_remote_prefill).
  kLoadPrompt,
};

struct Request {
  uint64_t id = 0;                        // unique among the scheduler's live requests
  std::vector<int32_t> prompt_token_ids;  // REQUIRES: non-empty, < max_model_len tokens
  int max_output_tokens = 16;             // REQUIRES: >= 1; capped by max_model_len
  std::vector<int32_t> stop_token_ids;    // sampling one of these finishes the request
  bool ignore_eos = false;                // true: stop_token_ids are ignored
  int priority = 0;                       // QueueOrder::kPriority: lower value goes first
  double arrival_s = 0;                   // caller's stamp; orders ties, never a clock
  uint64_t cache_salt = 0;                // isolates this request's prefix-cache entries
  KvTransfer kv_transfer = KvTransfer::kNone;
};

// Life cycle: kWaiting -> kRunning -> (kPreempted -> kRunning)* -> kFinished, or kRejected
// straight from add_request(). A KvTransfer::kLoadPrompt request passes through
// kWaitingForRemoteKv (blocks allocated, KV loading) between kWaiting and kRunning.
enum class RequestStatus {
  kWaiting,
  kWaitingForRemoteKv,
  kRunning,
  kPreempted,
  kFinished,
  kRejected
};

// Why a request left. kStop/kLength/kAbort match vLLM's finish_reason "stop"/"length"/"abort".
enum class FinishReason {
  kNone,      // still live
  kStop,      // sampled a stop token
  kLength,    // reached max_output_tokens or max_model_len
  kAbort,     // Scheduler::abort()
  kRejected,  // never admitted: too long for max_model_len or for the whole KV cache
};

std::string_view finish_reason_name(FinishReason reason);  // "stop", "length", "abort", ...

struct FinishedRequest {
  uint64_t id = 0;
  RequestStatus status = RequestStatus::kFinished;  // kFinished or kRejected
  FinishReason finish_reason = FinishReason::kNone;
  // "stop", "length", "abort", or for kRejected a one-line explanation naming the limit
  // (e.g. "prompt of 5000 tokens does not fit max_model_len 4096").
  std::string reason;
  int num_prompt_tokens = 0;
  int num_output_tokens = 0;
  int num_preemptions = 0;
  int num_cached_prompt_tokens = 0;  // prefix-cache hit tokens at the first admission
};

}  // namespace servesim
