// ModelRunner: the Runner (engine/runtime/runner.h) of the CPU backend, in fp32. One execute()
// is one forward pass over everything a SchedulerOutput schedules — prefill chunks and decodes
// in one flattened batch — writing keys and values into a paged KV cache addressed by the
// scheduler's block tables, and returning the logits of the sequences that sample.
//
//   Scheduler s(cfg);  ModelRunner r(weights, {.num_blocks = cfg.num_gpu_blocks});
//   const SchedulerOutput& out = s.schedule();
//   const RunnerOutput& res = r.execute(out, tokens_of_each_entry);   // logits per sample
//
// Ownership: borrows `weights` (must outlive the runner); owns the KV cache, the activation
// buffers and the thread pool. Not thread-safe: one thread drives it (it uses its pool).
// Invariants: the KV cache has options.num_blocks blocks of options.block_size tokens, the
// scheduler's num_gpu_blocks and block_size; rows of a batch are laid out prefill entries
// first, then decodes, so each attention call sees contiguous rows.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/runtime/flat_batch.h"
#include "engine/runtime/runner.h"
#include "engine/runtime/weights.h"
#include "engine/sched/scheduler.h"
#include "kernels/paged_attention.h"
#include "kernels/paged_kv_cache.h"
#include "kernels/rope.h"
#include "kernels/thread_pool.h"

namespace servesim {

struct ModelRunnerOptions {
  int64_t num_blocks = 0;  // KV blocks including the null block 0. REQUIRES: >= 2
  int block_size = 16;     // tokens per KV block; the scheduler's block_size. REQUIRES: >= 1
  int num_threads = 1;     // threads for GEMMs and attention, the caller included. >= 1
  bool profile = false;    // time each op (steady clock) into RunnerOutput::op_s
};

class ModelRunner : public Runner {
 public:
  // Throws ConfigError for bad options.
  ModelRunner(const Weights& weights, const ModelRunnerOptions& options);

  const Weights& weights() const { return weights_; }
  const ModelSpec& spec() const override { return weights_.spec; }
  const ModelRunnerOptions& options() const { return options_; }
  const PagedKVCache& kv_cache() const { return cache_; }

  const RunnerOutput& execute(const SchedulerOutput& output,
                              std::span<const std::span<const int32_t>> tokens) override;

 private:
  void prepare(const SchedulerOutput& output, std::span<const std::span<const int32_t>> tokens);
  void ensure_capacity(int64_t num_rows, int num_samples);
  void layer_forward(int layer);
  void attention(int layer, std::span<const AttentionSequence> seqs, int64_t first_row,
                 int64_t num_rows);

  const Weights& weights_;
  ModelRunnerOptions options_;
  ThreadPool pool_;
  PagedKVCache cache_;
  RopeTable rope_;
  RunnerOutput result_;

  FlatBatch batch_;  // the current step's rows
  // Activations. q_dim = num_heads * head_dim, kv_dim = num_kv_heads * head_dim.
  std::vector<float> x_;      // (rows, hidden) residual stream
  std::vector<float> h_;      // (rows, hidden) normed input of a block
  std::vector<float> q_;      // (rows, q_dim)
  std::vector<float> k_;      // (rows, kv_dim)
  std::vector<float> v_;      // (rows, kv_dim)
  std::vector<float> attn_;   // (rows, q_dim)
  std::vector<float> proj_;   // (rows, hidden) o_proj / down_proj output before the residual
  std::vector<float> gate_;   // (rows, intermediate)
  std::vector<float> up_;     // (rows, intermediate)
  std::vector<float> final_;  // (num_samples, hidden) normed last hidden states
};

}  // namespace servesim
