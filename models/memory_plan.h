// MemoryPlan: the per-GPU memory budget of one deployment, computed the way vLLM V1 sizes
// its KV cache at start-up (gpu_worker.determine_available_memory and
// kv_cache_utils.get_num_blocks), so its figures line up with what vLLM logs:
// "Available KV cache memory", "GPU KV cache size: N tokens" and "Maximum concurrency for
// L tokens per request: X.XXx".
//
//   requested  = total GPU memory x gpu_memory_utilization   (or --kv-cache-memory)
//   available  = requested - weights - activation peak - non-torch
//                - CUDA graphs (vLLM >= 0.21, or when given)
//   num_blocks = available / (page bytes per layer x layers on this GPU)
//   page bytes = 2 x block_size x kv_heads_per_rank x head_dim x kv bytes (MLA: no 2x)
//
// Figures are for the busiest GPU of a replica (pipeline stages differ: the first holds
// the embedding, the last the LM head); the block count is the minimum over stages, as
// vLLM takes the minimum over workers. compute() throws ConfigError with the fix when the
// model does not fit or max_model_len exceeds the KV capacity. Plain value; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "models/engine_config.h"
#include "models/hardware_spec.h"
#include "models/model_spec.h"
#include "models/parallel_config.h"

namespace servesim {

// The CUDA graphs vLLM captures on one GPU: how many of each kind and the largest batch
// (tokens). All zero with enforce_eager.
struct CudaGraphPlan {
  int piecewise = 0;  // per-piece graphs replayed around attention (V1)
  int full = 0;       // whole-model decode graphs (V0; V1 from 0.11)
  int largest = 0;
};

struct MemoryPlan {
  // One pipeline stage's GPUs (rank 0 of the stage; its TP peers hold the same). The
  // activation, non-torch and CUDA-graph figures are the same on every stage.
  struct Stage {
    int layers = 0;
    int64_t weights_bytes = 0;
    int64_t kv_cache_bytes = 0;  // available for KV blocks on this stage; may be <= 0
  };

  std::string model_name;
  std::string gpu_name;
  ParallelConfig parallel;
  EngineConfig engine;  // resolved: defaults filled in

  int64_t total_bytes = 0;       // GPU memory the driver reports
  int64_t requested_bytes = 0;   // total x gpu_memory_utilization
  int64_t weights_bytes = 0;     // busiest GPU
  int64_t activation_bytes = 0;  // peak of the profiling forward pass + sampler
  int64_t non_torch_bytes = 0;
  int64_t cuda_graph_bytes = 0;        // graphs' memory, modelled or given
  bool cuda_graph_subtracted = false;  // from the KV budget (vLLM >= 0.21, or given)
  CudaGraphPlan cuda_graphs;
  int64_t kv_cache_bytes = 0;     // available for KV blocks on the busiest GPU
  int64_t page_bytes = 0;         // one block of one layer on one GPU
  double kv_bytes_per_token = 0;  // all layers of the stage with the most layers, one GPU
  int layers_per_gpu = 0;         // most layers any stage holds
  int64_t num_gpu_blocks = 0;
  int64_t kv_cache_tokens = 0;      // num_gpu_blocks x block_size
  double max_concurrency = 0;       // requests of max_model_len tokens that fit at once
  int64_t weights_total_bytes = 0;  // whole model, all GPUs
  int64_t params_total = 0;
  int64_t params_active = 0;
  // KV offload (engine.kv_offloading_size_gib): host memory and blocks of the host tier per
  // GPU; each GPU keeps its own shard of every offloaded block. 0 without offload.
  int64_t host_kv_bytes_per_gpu = 0;
  int64_t num_host_kv_blocks = 0;
  std::vector<Stage> stages;  // pp entries, first stage first; the figures above are the busiest

  // Throws ConfigError when the flags are invalid, the model does not fit, or
  // max_model_len exceeds what the KV cache holds.
  // `alternatives` (optional, e.g. the GPU catalog) lets the not-fit message name GPUs on
  // which the same parallelism would fit.
  static MemoryPlan compute(const ModelSpec& model, const HardwareSpec& gpu,
                            const ParallelConfig& parallel, const EngineConfig& engine,
                            const std::vector<HardwareSpec>* alternatives = nullptr);

  // Same arithmetic without the fit checks: kv_cache_bytes may be <= 0 and max_concurrency
  // < 1. For planners that rank deployments, and for explaining a failure.
  static MemoryPlan compute_unchecked(const ModelSpec& model, const HardwareSpec& gpu,
                                      const ParallelConfig& parallel, const EngineConfig& engine);

  int64_t cuda_graph_subtracted_bytes() const {
    return cuda_graph_subtracted ? cuda_graph_bytes : 0;
  }
  bool fits() const { return num_gpu_blocks > 0 && max_concurrency >= 1.0; }

  nlohmann::json to_json() const;
  std::string to_table() const;  // the readable report `servesim memory` prints
};

// Weight bytes one GPU holds: rank 0 of pipeline stage `stage`.
int64_t weights_bytes_per_gpu(const ModelSpec& model, const ParallelConfig& parallel,
                              const EngineConfig& engine, int stage);
// Activation peak (bytes) of vLLM's profiling run on one GPU: max_num_batched_tokens
// tokens over min(tokens, max_num_seqs) sequences, plus the fp32 sampler tensors.
int64_t activation_peak_bytes(const ModelSpec& model, const ParallelConfig& parallel,
                              const EngineConfig& engine);
// Activation bytes one token of a forward pass keeps alive at a layer's peak.
double forward_bytes_per_token(const ModelSpec& model, const ParallelConfig& parallel,
                               const EngineConfig& engine);
// vLLM 0.21+ logs the CUDA-graph estimate it subtracts and then the capture: 1.58 vs 1.29 GiB
// and 1.10 vs 0.96 GiB in the two logs at hand (+22%, +15%).
inline constexpr double kCudaGraphEstimateOverCapture = 1.18;
// The graphs a resolved config captures: its cuda_graph_mode()'s kinds, at the sizes its
// engine.vllm_version captures.
CudaGraphPlan cuda_graph_plan(const EngineConfig& resolved);
// Their memory on a GPU holding `layers` layers: the shared pool (the largest batch's
// activations) plus 170 KiB per graph per layer; vLLM >= 0.21's estimate, which is what it
// subtracts, 18% above that (docs/memory-model.md).
int64_t cuda_graph_memory_bytes(const ModelSpec& model, const ParallelConfig& parallel,
                                const EngineConfig& resolved, int layers);

}  // namespace servesim
