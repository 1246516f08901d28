// EngineConfig: the serving-engine flags that decide memory and batching, named and
// defaulted as vLLM's `vllm serve` names and defaults them (see docs/memory-model.md), and
// the vLLM release whose memory rules apply (VllmVersion). Zero in a size field means
// "vLLM's default for this GPU and model", resolved by resolved_for(). Plain values;
// thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "models/cuda_graph_mode.h"
#include "models/dtype.h"
#include "models/speculative_config.h"

namespace servesim {

struct HardwareSpec;
struct ModelSpec;

// A vLLM release, major.minor: patch releases keep a minor's memory rules. Versions are
// those servesim models, kOldestModelledVllm to kNewestModelledVllm; parse() refuses others.
struct VllmVersion {
  int major = 0;
  int minor = 0;

  // "0.10.2", "v0.11.1rc6.dev115+gbc926c122" -> 0.10, 0.11. Throws ConfigError naming
  // `field` for text that is no version or a release outside the modelled range.
  static VllmVersion parse(const std::string& text, const std::string& field);
  std::string to_string() const;  // "0.11"
  bool at_least(int major_at_least, int minor_at_least) const {
    return major > major_at_least || (major == major_at_least && minor >= minor_at_least);
  }
  // V1 is the default engine from 0.8 (VLLM_USE_V1=1); earlier releases run V0.
  bool v1_engine() const { return at_least(0, 8); }
  // From 0.21 vLLM profiles CUDA-graph memory before sizing the KV cache and subtracts
  // its estimate (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS default on, "default since
  // v0.21.0" in gpu_worker.py's log); earlier releases capture graphs after the KV cache
  // is allocated, out of the memory gpu_memory_utilization leaves.
  bool subtracts_cuda_graphs() const { return at_least(0, 21); }
  bool operator==(const VllmVersion&) const = default;
};

inline constexpr VllmVersion kOldestModelledVllm{0, 4};
inline constexpr VllmVersion kNewestModelledVllm{0, 23};

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
  // CUDA-graph memory per GPU, bytes, subtracted from the KV budget. Unset: modelled for
  // vllm_version (docs/memory-model.md), subtracted only by releases that do.
  std::optional<int64_t> cuda_graph_memory_bytes;
  // Peak of the profiling run per GPU, bytes. Unset: modelled (activation_peak_bytes).
  std::optional<int64_t> activation_memory_bytes;
  // GPU memory as torch.cuda.mem_get_info reports it, bytes. Unset: the GPU spec's total.
  std::optional<int64_t> gpu_memory_bytes;
  bool enforce_eager = false;  // no CUDA graphs: their memory is 0, every kernel launched
  // vLLM --disable-custom-all-reduce: every tensor-parallel all-reduce on NCCL, not on vLLM's
  // custom all-reduce (CommModel).
  bool disable_custom_all_reduce = false;
  // vLLM --compilation-config cudagraph_mode (0.10+). Unset: the release's default
  // (cuda_graph_mode()).
  std::optional<CudaGraphMode> cudagraph_mode;
  // vLLM --async-scheduling: the engine core schedules step N+1 while step N runs on the GPU,
  // so the host's per-step work hides behind the GPU's, and a request that arrives during step
  // N waits for step N+2 (docs/scheduler.md, "Asynchronous scheduling"). vLLM turns it on by
  // default from 0.14 (vllm-project/vllm#27614); servesim keeps it off unless asked, because
  // its host overheads were fitted on vLLM 0.12's synchronous runs.
  bool async_scheduling = false;
  // With async_scheduling: the fraction of the host's per-step work (the cost model's
  // kOverhead) that can hide behind the GPU's, in [0, 1]. 0: none, what vLLM 0.10.2's measured
  // async runs show (docs/validation.md's "Out of sample": TPOT mean |error| 6.7% at 0, 13.4% at
  // 0.5, 27.6% at 1 on H100/H200; B200 5.3%, 22.5%, 36.1%) — its async scheduling overlaps the
  // scheduler, not the workers' input preparation. 1 hides all of it, an upper bound.
  double async_host_overlap = 0;
  VllmVersion vllm_version = kNewestModelledVllm;  // whose memory rules apply
  std::optional<int64_t> kv_cache_memory_bytes;    // --kv-cache-memory: bypasses utilization
  std::optional<int64_t> num_gpu_blocks_override;
  // Accept max_model_len above the model's max_position_embeddings, as vLLM does with
  // VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (the user vouches for RoPE scaling).
  bool allow_long_max_model_len = false;
  // vLLM --speculative-config; unset: no speculative decoding (docs/speculative-decoding.md).
  std::optional<SpeculativeConfig> speculative;
  // vLLM --kv-offloading-size (0.12+, with --kv-offloading-backend native, the
  // OffloadingConnector): GiB of pinned host memory for the KV offload tier, summed over the
  // replica's TP x PP ranks, each of which gets an equal share. Unset: no KV offload
  // (docs/kv-offload.md).
  std::optional<double> kv_offloading_size_gib;
  // Bytes/s per direction at which each GPU moves offloaded KV to and from host memory.
  // servesim's knob, not a vLLM flag; unset: the GPU spec's pcie_Bps.
  std::optional<double> kv_offloading_bandwidth_Bps;

  // The graphs the engine runs: NONE with enforce_eager; else cudagraph_mode; else the
  // release's default — whole-model decode graphs in V0 (before 0.8), PIECEWISE in 0.8-0.10,
  // FULL_AND_PIECEWISE from 0.11 (vllm-project/vllm#25444).
  CudaGraphMode cuda_graph_mode() const;

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
