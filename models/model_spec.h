// ModelSpec: the architecture of a decoder-only transformer, as much as serving cost and
// memory depend on it (shapes, attention kind, MoE, sliding windows), and the arithmetic
// derived from it: parameter counts, weight bytes and KV-cache bytes per token, per
// tensor-parallel rank.
//
// A ModelSpec is a plain value: built by from_json() (servesim's own schema, see
// docs/config-reference.md) or from_hf_config() (a Hugging Face config.json), validated on
// construction, immutable in use. Thread-safe for concurrent reads.
//
// Invariants after validate(): every size > 0; num_kv_heads divides num_heads;
// experts_per_token <= num_experts; dense_layers <= num_layers.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "models/dtype.h"

namespace servesim {

struct MoeSpec {
  int num_experts = 0;               // routed experts per MoE layer
  int experts_per_token = 0;         // top-k routed experts each token uses
  int expert_intermediate_size = 0;  // FFN width of one expert
  int shared_experts = 0;            // always-on experts of the same width (DeepSeek)
  int dense_layers = 0;              // leading layers with a dense FFN instead of experts
  bool expert_bias = false;          // gpt-oss: biases on expert projections and router
};

// Multi-head latent attention (DeepSeek-V2/V3): the KV cache holds one compressed latent
// of kv_lora_rank + qk_rope_head_dim values per token and layer, shared by all heads.
struct MlaSpec {
  int q_lora_rank = 0;  // 0: queries are projected directly from the hidden state
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
};

// Which layers use sliding-window attention.
enum class SlidingPattern {
  kNone,       // every layer attends to the whole context
  kAll,        // every layer uses the window (Mistral-7B-v0.1)
  kAlternate,  // even layers sliding, odd layers full (gpt-oss)
};

struct ModelSpec {
  std::string name;     // catalog name, e.g. "Llama-2-7B"
  std::string hf_repo;  // e.g. "meta-llama/Llama-2-7b-hf"; informational
  std::string family;   // llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, deepseek_v3, gpt_oss

  int hidden_size = 0;
  int num_layers = 0;
  int num_heads = 0;          // query heads
  int num_kv_heads = 0;       // key/value heads (GQA); equals num_heads for MHA
  int head_dim = 0;           // per head; may differ from hidden_size / num_heads (Qwen3)
  int intermediate_size = 0;  // dense FFN width (gate and up each, SwiGLU)
  int vocab_size = 0;
  int max_position_embeddings = 0;  // tokens
  bool tie_word_embeddings = false;
  bool qkv_bias = false;
  bool o_bias = false;
  bool qk_norm = false;
  bool attention_sinks = false;  // one learned logit per head and layer (gpt-oss)
  int sliding_window = 0;        // tokens; 0 = none
  SlidingPattern sliding_pattern = SlidingPattern::kNone;
  std::optional<MoeSpec> moe;
  std::optional<MlaSpec> mla;
  DType native_dtype = DType::kBf16;         // dtype of the published non-expert weights
  std::optional<DType> native_expert_dtype;  // gpt-oss ships experts in MXFP4

  static ModelSpec from_json(const nlohmann::json& j, const std::string& origin);
  static ModelSpec from_hf_config(const nlohmann::json& j, const std::string& origin);
  nlohmann::json to_json() const;
  void validate() const;  // throws ConfigError naming the field

  bool is_moe() const { return moe.has_value(); }
  bool is_mla() const { return mla.has_value(); }
  bool layer_is_moe(int layer) const;
  bool layer_is_sliding(int layer) const;
  int num_sliding_layers() const;

  // --- parameter counts (weights, biases and norms included) ---
  int64_t embedding_params() const;  // token embedding table
  int64_t lm_head_params() const;    // 0 when tied to the embedding
  int64_t attention_params_per_layer() const;
  int64_t ffn_params(int layer) const;         // all experts of a MoE layer, router included
  int64_t ffn_active_params(int layer) const;  // experts one token uses, router included
  int64_t expert_params_per_layer() const;     // routed + shared expert weights of one MoE layer
  int64_t norm_params_per_layer() const;
  int64_t total_params() const;
  int64_t active_params() const;  // what one token touches (MoE: top-k + shared experts)

  // --- KV cache ---
  // KV heads one tensor-parallel rank holds: split across ranks, replicated when TP
  // exceeds them (vLLM: max(1, kv_heads / tp)). MLA: always 1 latent.
  int kv_heads_per_rank(int tp) const;
  // Values cached per token per layer per rank: 2 * kv_heads_per_rank * head_dim (MLA:
  // kv_lora_rank + qk_rope_head_dim, no factor 2).
  int64_t kv_elements_per_token_per_layer(int tp) const;
  // Bytes per token per layer on one rank.
  double kv_bytes_per_token_per_layer(DType kv_dtype, int tp) const;
  // Bytes per token over all layers on one TP rank (PP splits layers further).
  double kv_bytes_per_token(DType kv_dtype, int tp) const;
};

}  // namespace servesim
