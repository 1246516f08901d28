#include "engine/sched/scheduler_config.h"

#include <string>

#include "models/config_error.h"
#include "models/name_match.h"
#include "models/speculative_config.h"

namespace servesim {
namespace {

[[noreturn]] void fail(const std::string& message) {
  throw ConfigError(message);
}

}  // namespace

void SchedulerConfig::validate() const {
  using std::to_string;
  if (max_num_seqs < 1) {
    fail("max_num_seqs must be at least 1 (got " + to_string(max_num_seqs) + ")");
  }
  if (max_num_batched_tokens < 1) {
    fail("max_num_batched_tokens must be at least 1 (got " + to_string(max_num_batched_tokens) +
         ")");
  }
  if (max_model_len < 2) {
    fail("max_model_len must be at least 2 (got " + to_string(max_model_len) +
         "): a request needs one prompt token and one output token");
  }
  if (block_size < 1) {
    fail("block_size must be at least 1 (got " + to_string(block_size) + "); vLLM uses 16");
  }
  if (num_gpu_blocks < 2) {
    fail("num_gpu_blocks must be at least 2 (got " + to_string(num_gpu_blocks) +
         "): block 0 is the reserved null block; size it from the memory plan");
  }
  if (num_gpu_blocks > (int64_t{1} << 30)) {
    fail("num_gpu_blocks " + to_string(num_gpu_blocks) + " exceeds the supported 2^30 blocks");
  }
  if (max_num_batched_tokens < max_num_seqs) {
    fail("max_num_batched_tokens (" + to_string(max_num_batched_tokens) +
         ") must be >= max_num_seqs (" + to_string(max_num_seqs) +
         "), as vLLM requires; raise max_num_batched_tokens or lower max_num_seqs");
  }
  if (!enable_chunked_prefill && max_num_batched_tokens < max_model_len) {
    fail("max_num_batched_tokens (" + to_string(max_num_batched_tokens) +
         ") is smaller than max_model_len (" + to_string(max_model_len) +
         ") with chunked prefill disabled, so long prompts could never be scheduled; raise "
         "max_num_batched_tokens, lower max_model_len or enable chunked prefill");
  }
  if (long_prefill_token_threshold < 0) {
    fail("long_prefill_token_threshold must be >= 0 (got " +
         to_string(long_prefill_token_threshold) + "); 0 disables it");
  }
  if (!enable_chunked_prefill && long_prefill_token_threshold > 0) {
    fail("long_prefill_token_threshold (" + to_string(long_prefill_token_threshold) +
         ") needs enable_chunked_prefill: it splits prompts into chunks");
  }
  validate_speculative();
  if (num_host_kv_blocks < 0 || num_host_kv_blocks > (int64_t{1} << 30)) {
    fail("num_host_kv_blocks must be between 0 (no KV offload) and 2^30 (got " +
         to_string(num_host_kv_blocks) + ")");
  }
  if (num_host_kv_blocks > 0 && !enable_prefix_caching) {
    fail("KV offload (num_host_kv_blocks " + to_string(num_host_kv_blocks) +
         ") needs enable_prefix_caching: the host tier finds blocks by their prefix hash");
  }
  if (num_host_kv_blocks > 0 && policy == SchedulingPolicy::kStatic) {
    fail("KV offload is not modelled with the static policy; use continuous or prefill_first");
  }
  if (static_batch_size < 0 || static_batch_size > max_num_seqs) {
    fail("static_batch_size must be between 0 (= max_num_seqs) and max_num_seqs (" +
         to_string(max_num_seqs) + "), got " + to_string(static_batch_size));
  }
}

SchedulingPolicy parse_scheduling_policy(std::string_view name, std::string_view field) {
  const std::string s = lower(name);
  if (s == "continuous") return SchedulingPolicy::kContinuous;
  if (s == "static") return SchedulingPolicy::kStatic;
  if (s == "prefill_first" || s == "prefill-first") return SchedulingPolicy::kPrefillFirst;
  fail(std::string(field) + ": unknown scheduling policy '" + std::string(name) +
       "'; expected continuous, static or prefill_first");
}

std::string_view scheduling_policy_name(SchedulingPolicy policy) {
  switch (policy) {
    case SchedulingPolicy::kContinuous:
      return "continuous";
    case SchedulingPolicy::kStatic:
      return "static";
    case SchedulingPolicy::kPrefillFirst:
      return "prefill_first";
  }
  return "continuous";
}

QueueOrder parse_queue_order(std::string_view name, std::string_view field) {
  const std::string s = lower(name);
  if (s == "fcfs") return QueueOrder::kFcfs;
  if (s == "priority") return QueueOrder::kPriority;
  fail(std::string(field) + ": unknown queue order '" + std::string(name) +
       "'; expected fcfs or priority");
}

std::string_view queue_order_name(QueueOrder order) {
  return order == QueueOrder::kPriority ? "priority" : "fcfs";
}

static_assert(kMaxSpeculativeTokens == kMaxSpeculativeDraftTokens);

void SchedulerConfig::validate_speculative() const {
  using std::to_string;
  if (num_speculative_tokens < 0 || num_speculative_tokens > kMaxSpeculativeTokens) {
    fail("num_speculative_tokens must be between 0 (off) and " + to_string(kMaxSpeculativeTokens) +
         " (got " + to_string(num_speculative_tokens) + ")");
  }
  if (num_speculative_tokens > 0 && policy != SchedulingPolicy::kContinuous) {
    fail("speculative decoding needs the continuous policy (vLLM V1), not " +
         std::string(scheduling_policy_name(policy)) +
         "; set engine.batching to continuous or drop engine.speculative");
  }
}

}  // namespace servesim
