// EngineConfig: the serving-engine flags that decide memory and batching, named and
// defaulted as vLLM's `vllm serve` names and defaults them (see docs/memory-model.md).
// Zero in a size field means "vLLM's default for this GPU and model", resolved by
// resolved_for(). Plain value; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "models/dtype.h"

namespace servesim {

struct HardwareSpec;
struct ModelSpec;

struct EngineConfig {
  double gpu_memory_utilization = 0.9;  // fraction of total GPU memory the engine may use
  int max_model_len = 0;                // tokens; 0: the model's max_position_embeddings
  int max_num_seqs = 0;                 // 0: 1024 on >= 70 GiB non-A100 GPUs, else 256
  int max_num_batched_tokens = 0;       // 0: 8192 on >= 70 GiB non-A100 GPUs, else 2048
  int block_size = 16;                  // tokens per KV block
  std::optional<DType> dtype;           // weights; unset: the model's native dtypes
  std::optional<DType> kv_cache_dtype;  // unset ("auto"): 16-bit
  bool enable_prefix_caching = true;
  bool enable_chunked_prefill = true;
  // Memory vLLM does not attribute to PyTorch tensors (CUDA context growth, NCCL and
  // cuBLAS workspaces), bytes. Unset: kNonTorchSingleGpuBytes, or kNonTorchMultiGpuBytes
  // when the replica spans several GPUs.
  std::optional<int64_t> non_torch_memory_bytes;
  int64_t cuda_graph_memory_bytes = 0;           // subtracted when the engine version does
  std::optional<int64_t> kv_cache_memory_bytes;  // --kv-cache-memory: bypasses utilization
  std::optional<int64_t> num_gpu_blocks_override;
  // Accept max_model_len above the model's max_position_embeddings, as vLLM does with
  // VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (the user vouches for RoPE scaling).
  bool allow_long_max_model_len = false;

  // Copy with every 0/unset default replaced by the value vLLM would pick.
  EngineConfig resolved_for(const ModelSpec& model, const HardwareSpec& gpu) const;
  // Range checks, naming the flag. Call on a resolved config.
  void validate(const ModelSpec& model) const;
};

// Measured on one RTX 3090 with vLLM (vllm-project/vllm#10517: non_torch_memory 0.35 GiB).
inline constexpr int64_t kNonTorchSingleGpuBytes = 375809638;  // 0.35 GiB
// With several GPUs, NCCL communicators and vLLM's custom all-reduce buffers come on top.
// No measured log of a TP deployment is at hand: this doubles the single-GPU figure as an
// estimate, documented in docs/memory-model.md; --non-torch-memory overrides it.
inline constexpr int64_t kNonTorchMultiGpuBytes = 751619276;  // 0.70 GiB

}  // namespace servesim
