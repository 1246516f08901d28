// Weights: the fp32 parameters of a Llama-shaped decoder (Llama, Mistral without sliding
// windows, Qwen2 with QKV biases, SmolLM2, TinyLlama), laid out as Hugging Face stores them:
// every projection is (out_features, in_features), row-major.
//
// Built either by random() — seeded, scaled so activations stay O(1) through every layer —
// or by load_safetensors() from a Hugging Face checkpoint. Models the engine cannot run
// (MoE, MLA, sliding windows, QK norms, output biases, attention sinks) are refused with a
// ConfigError. Plain value, move-only in practice (hundreds of MB); immutable in use and
// thread-safe for concurrent reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/model_spec.h"

namespace servesim {

struct LayerWeights {
  std::vector<float> attn_norm;  // (hidden)
  std::vector<float> wq;         // (num_heads * head_dim, hidden)
  std::vector<float> wk;         // (num_kv_heads * head_dim, hidden)
  std::vector<float> wv;         // (num_kv_heads * head_dim, hidden)
  std::vector<float> bq;         // (num_heads * head_dim), empty unless qkv_bias
  std::vector<float> bk;         // (num_kv_heads * head_dim), empty unless qkv_bias
  std::vector<float> bv;         // (num_kv_heads * head_dim), empty unless qkv_bias
  std::vector<float> wo;         // (hidden, num_heads * head_dim)
  std::vector<float> ffn_norm;   // (hidden)
  std::vector<float> w_gate;     // (intermediate, hidden)
  std::vector<float> w_up;       // (intermediate, hidden)
  std::vector<float> w_down;     // (hidden, intermediate)
};

struct Weights {
  ModelSpec spec;
  // Not in ModelSpec (they do not change cost): Llama 2's values unless a loader sets them.
  double rope_theta = 10000.0;
  float rms_norm_eps = 1e-5f;
  std::vector<float> embedding;  // (vocab, hidden)
  std::vector<LayerWeights> layers;
  std::vector<float> final_norm;  // (hidden)
  std::vector<float> lm_head;     // (vocab, hidden); empty when tied to the embedding

  // The LM head matrix in use: lm_head, or the embedding when tied. (vocab, hidden)
  const std::vector<float>& output_matrix() const {
    return spec.tie_word_embeddings ? embedding : lm_head;
  }
  // Bytes a decode step streams from memory: every layer's matrices, the norms and the LM
  // head (one embedding row is negligible).
  int64_t bytes_read_per_step() const;
  int64_t num_params() const;  // stored floats (a tied LM head counted once)

  // Throws ConfigError when the engine cannot run this architecture.
  static void check_supported(const ModelSpec& spec);

  // Uniform random weights from `seed`: projections reading d inputs have standard deviation
  // 1/sqrt(d); the two that write the residual stream (o_proj, down_proj) are further scaled
  // by 1/sqrt(2 * num_layers) so the residual grows like a random walk, not exponentially;
  // norms are 1 and the embedding has unit variance.
  static Weights random(const ModelSpec& spec, uint64_t seed);

  // Reads a Hugging Face checkpoint (one or more .safetensors shards; Llama/Mistral/Qwen2
  // tensor names). Throws ConfigError naming the file or tensor when a tensor is missing,
  // its shape contradicts `spec`, or a file is truncated or malformed.
  static Weights load_safetensors(const ModelSpec& spec, const std::vector<std::string>& paths);
};

}  // namespace servesim
