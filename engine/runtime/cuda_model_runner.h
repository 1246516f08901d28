// CudaModelRunner: the Runner (engine/runtime/runner.h) of the CUDA backend — the CPU
// ModelRunner's forward pass on one GPU with bf16 weights and KV cache and fp32 accumulation.
// The residual stream stays fp32; each GEMM reads bf16 activations (the RMSNorm output, the
// attention output, the SwiGLU output) and cuBLAS accumulates in fp32. Every kernel of a step is
// enqueued on one stream; the step waits once, when the logits are copied back to the host,
// where the Engine samples them with its CPU Sampler.
//
//   auto w = CudaWeights::upload(weights);   // or CudaWeights::random(spec, seed)
//   CudaModelRunner r(w, {.num_blocks = cfg.num_gpu_blocks, .block_size = cfg.block_size});
//   const RunnerOutput& res = r.execute(scheduler_output, tokens);
//
// Ownership: shares the weights; owns the KV cache, the activation buffers, the stream and
// the cuBLAS handle. Not thread-safe: one thread drives it. Invariants: as ModelRunner's —
// the cache has options.num_blocks blocks of options.block_size tokens, and a step's rows are
// prefill entries first, then decodes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "engine/runtime/cuda_weights.h"
#include "engine/runtime/flat_batch.h"
#include "engine/runtime/runner.h"
#include "kernels/cuda/cublas_linear.h"
#include "kernels/cuda/cuda_stream.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/event_timeline.h"
#include "kernels/cuda/paged_attention.h"
#include "kernels/cuda/paged_kv_cache.h"
#include "kernels/cuda/rope.h"

namespace servesim {

struct CudaModelRunnerOptions {
  int64_t num_blocks = 0;  // KV blocks including the null block 0. REQUIRES: >= 2
  int block_size = 16;     // tokens per KV block; the scheduler's block_size. REQUIRES: >= 1
  bool profile = false;    // time each op with CUDA events into RunnerOutput::op_s
};

class CudaModelRunner : public Runner {
 public:
  // Throws ConfigError for bad options or when no CUDA device is usable, CudaError when the KV
  // cache does not fit the device.
  CudaModelRunner(std::shared_ptr<const CudaWeights> weights,
                  const CudaModelRunnerOptions& options);

  const ModelSpec& spec() const override { return weights_->spec; }
  const CudaModelRunnerOptions& options() const { return options_; }
  const cuda::PagedKVCache& kv_cache() const { return cache_; }

  const RunnerOutput& execute(const SchedulerOutput& output,
                              std::span<const std::span<const int32_t>> tokens) override;

 private:
  void prepare(const SchedulerOutput& output, std::span<const std::span<const int32_t>> tokens);
  void ensure_capacity(int64_t num_rows, int num_samples);
  void layer_forward(int layer);
  void attention(int layer, cuda::PagedAttention& attn, int64_t first_row, int64_t num_rows);
  // Brackets GPU work of one op for the profile (no-ops unless profiling).
  void begin_op();
  void end_op(Op op);

  std::shared_ptr<const CudaWeights> weights_;
  CudaModelRunnerOptions options_;
  cuda::CudaStream stream_;
  cuda::CublasLinear linear_;
  cuda::PagedKVCache cache_;
  cuda::RopeTable rope_;
  int max_positions_;  // rope_'s table length: positions beyond it are refused
  cuda::PagedAttention prefill_attention_;
  cuda::PagedAttention decode_attention_;  // may split long contexts across warps
  cuda::EventTimeline timeline_;
  RunnerOutput result_;
  FlatBatch batch_;  // the current step's rows

  // Device buffers; capacities only grow. q_dim = num_heads * head_dim, kv_dim = num_kv_heads *
  // head_dim, qkv_dim = q_dim + 2 * kv_dim, ffn = intermediate_size.
  int64_t row_capacity_ = 0;
  int sample_capacity_ = 0;
  cuda::DeviceBuffer token_ids_;    // (rows) int32
  cuda::DeviceBuffer positions_;    // (rows) int32
  cuda::DeviceBuffer slots_;        // (rows) int64 KV cache slot of each row
  cuda::DeviceBuffer sample_rows_;  // (num_samples) int64 row of each sampling entry
  cuda::DeviceBuffer x_;            // (rows, hidden) fp32 residual stream
  cuda::DeviceBuffer h_;            // (rows, hidden) bf16 normed input of a block
  cuda::DeviceBuffer qkv_;          // (rows, qkv_dim) fp32 projections, rotated in place
  cuda::DeviceBuffer attn_;         // (rows, q_dim) bf16 attention output
  cuda::DeviceBuffer gate_up_;      // (rows, 2 * ffn) bf16
  cuda::DeviceBuffer act_;          // (rows, ffn) bf16 SwiGLU output
  cuda::DeviceBuffer final_;        // (num_samples, hidden) bf16 normed last hidden states
  cuda::DeviceBuffer logits_;       // (num_samples, vocab) fp32
};

}  // namespace servesim
