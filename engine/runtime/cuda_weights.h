// CudaWeights: a Llama-shaped decoder's parameters on the CUDA device, the projections in bf16
// (what the GEMMs read) and the norms and QKV biases in fp32. The projections that read the
// same input are stored fused — q_proj, k_proj and v_proj rows stacked into one
// (q_dim + 2 * kv_dim, hidden) matrix, gate_proj and up_proj into one (2 * ffn, hidden) — so a
// decode step streams each layer's weights in three GEMVs' fewer launches.
//
// Built by upload() from the host's fp32 Weights (rounded to bf16), or by random() on the
// device (a model whose fp32 copy would not fit the host: Llama-3-8B is 32 GB in fp32); the
// device draws are seeded and follow Weights::random's scales but not its values.
//
// Ownership: owns the device buffers; shared between engines through shared_ptr (the bench
// runs several engines over one copy). Immutable after construction; thread-safe for reads.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/runtime/weights.h"
#include "kernels/cuda/device_buffer.h"
#include "models/model_spec.h"

namespace servesim {

struct CudaLayerWeights {
  cuda::DeviceBuffer attn_norm;  // (hidden) fp32
  cuda::DeviceBuffer wqkv;       // (q_dim + 2 * kv_dim, hidden) bf16: q, k, v rows stacked
  cuda::DeviceBuffer bqkv;       // (q_dim + 2 * kv_dim) fp32, empty unless qkv_bias
  cuda::DeviceBuffer wo;         // (hidden, q_dim) bf16
  cuda::DeviceBuffer ffn_norm;   // (hidden) fp32
  cuda::DeviceBuffer w_gate_up;  // (2 * intermediate, hidden) bf16: gate rows, then up rows
  cuda::DeviceBuffer w_down;     // (hidden, intermediate) bf16
};

struct CudaWeights {
  ModelSpec spec;
  double rope_theta = 10000.0;
  float rms_norm_eps = 1e-5f;
  cuda::DeviceBuffer embedding;  // (vocab, hidden) bf16
  std::vector<CudaLayerWeights> layers;
  cuda::DeviceBuffer final_norm;  // (hidden) fp32
  cuda::DeviceBuffer lm_head;     // (vocab, hidden) bf16; empty when tied to the embedding

  // The LM head matrix in use. (vocab, hidden) bf16
  const cuda::Bf16* output_matrix() const {
    return (spec.tie_word_embeddings ? embedding : lm_head).data<cuda::Bf16>();
  }
  // Bytes a decode step streams: every layer's matrices, norms and biases, the final norm and
  // the LM head (as Weights::bytes_read_per_step, at the device's element sizes).
  int64_t bytes_read_per_step() const;
  int64_t num_params() const;  // elements stored (a tied LM head counted once)

  // Throws ConfigError when there is no CUDA device or the model is not supported
  // (Weights::check_supported; head_dim a multiple of 8 up to 128), CudaError when the device
  // runs out of memory.
  static std::shared_ptr<const CudaWeights> upload(const Weights& weights);
  static std::shared_ptr<const CudaWeights> random(const ModelSpec& spec, uint64_t seed);
};

// Throws ConfigError naming the problem when no CUDA device is usable.
void require_cuda_device();

}  // namespace servesim
