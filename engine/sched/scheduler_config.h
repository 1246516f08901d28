// SchedulerConfig: the knobs of the scheduler and its KV-cache manager, named as vLLM names
// them (`--max-num-seqs`, `--max-num-batched-tokens`, `--max-model-len`, `--block-size`,
// `--num-gpu-blocks-override`, `--enable-chunked-prefill`, `--enable-prefix-caching`,
// `--long-prefill-token-threshold`, `--scheduling-policy`).
//
// A plain value type; validate() is the only check and the Scheduler calls it in its
// constructor. Thread-safe as any value.
#pragma once

#include <cstdint>
#include <string_view>

namespace servesim {

// How steps are formed (see docs/scheduler.md).
enum class SchedulingPolicy {
  kContinuous,    // vLLM V1: one token budget per step, decodes and prefill chunks mixed
  kStatic,        // request-level batching: gather a batch, run it until all members finish
  kPrefillFirst,  // vLLM V0 / nano-vllm: a step is either all prefill or all decode
};

// Which waiting request goes first and which running request is preempted first.
enum class QueueOrder {
  kFcfs,      // arrival order; preempt the most recently admitted running request
  kPriority,  // lowest `priority` value first, then earliest arrival; preempt the largest
              // (priority, arrival) — vLLM's --scheduling-policy priority
};

// Above this, acceptance of the last drafts is so unlikely that the verify step only costs.
inline constexpr int kMaxSpeculativeTokens = 16;

struct SchedulerConfig {
  // Most sequences running at once (vLLM max_num_seqs). REQUIRES: >= 1.
  int max_num_seqs = 256;
  // Token budget of one step (vLLM max_num_batched_tokens). REQUIRES: >= max_num_seqs, and
  // >= max_model_len when chunked prefill is off.
  int max_num_batched_tokens = 2048;
  // Longest sequence, prompt plus output (vLLM max_model_len). REQUIRES: >= 2.
  int max_model_len = 4096;
  // Tokens per KV block (vLLM block_size). REQUIRES: >= 1.
  int block_size = 16;
  // KV capacity in blocks, including block 0, the reserved null block, so num_gpu_blocks - 1
  // blocks hold tokens (vLLM num_gpu_blocks). REQUIRES: >= 2; there is no default.
  int64_t num_gpu_blocks = 0;
  // Split prompts longer than the remaining budget over several steps.
  bool enable_chunked_prefill = true;
  // Reuse full KV blocks whose (prefix, tokens, salt) match a cached block.
  bool enable_prefix_caching = true;
  // Cap on the tokens one sequence computes in a step when > 0 (vLLM
  // long_prefill_token_threshold). REQUIRES: >= 0.
  int long_prefill_token_threshold = 0;
  SchedulingPolicy policy = SchedulingPolicy::kContinuous;
  QueueOrder queue_order = QueueOrder::kFcfs;
  // Static policy only: batch size; 0 means max_num_seqs. REQUIRES: 0 <= x <= max_num_seqs.
  int static_batch_size = 0;
  // Mixed into the first block hash of every request (like vLLM's PYTHONHASHSEED-seeded
  // NONE_HASH); requests also carry their own cache_salt.
  uint64_t hash_salt = 0;
  // Speculative decoding: most draft tokens a running decode is verified on per step (vLLM
  // num_speculative_tokens, k); 0 = off. Drafts come from the executor (StepResult).
  // REQUIRES: 0 <= x <= kMaxSpeculativeTokens; > 0 only with the continuous policy.
  int num_speculative_tokens = 0;
  // KV-cache offload: blocks of the second KV tier in host memory (vLLM's OffloadingConnector,
  // kv_connector_extra_config num_cpu_blocks; --kv-offloading-size in GiB since vLLM 0.12);
  // 0 = off. Each holds one GPU block's KV. REQUIRES: >= 0; > 0 only with prefix caching
  // (the tier is keyed by block hash) and without a static batch.
  int64_t num_host_kv_blocks = 0;

  // Throws ConfigError whose message names the offending field.
  void validate() const;
  // The speculative-decoding part of validate().
  void validate_speculative() const;

  // The static batch size in effect (static_batch_size, or max_num_seqs when 0).
  int effective_static_batch_size() const {
    return static_batch_size > 0 ? static_batch_size : max_num_seqs;
  }
};

// Parses "continuous", "static", "prefill_first" (also "prefill-first"); case-insensitive.
// Throws ConfigError naming `field` and the accepted names on anything else.
SchedulingPolicy parse_scheduling_policy(std::string_view name, std::string_view field);
std::string_view scheduling_policy_name(SchedulingPolicy policy);

// Parses "fcfs" or "priority"; case-insensitive. Throws ConfigError naming `field`.
QueueOrder parse_queue_order(std::string_view name, std::string_view field);
std::string_view queue_order_name(QueueOrder order);

}  // namespace servesim
