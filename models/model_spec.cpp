#include "models/model_spec.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "models/config_error.h"
#include "models/json_object_reader.h"

namespace servesim {
namespace {

SlidingPattern parse_sliding_pattern(const std::string& s, const JsonObjectReader& r) {
  if (s == "none") return SlidingPattern::kNone;
  if (s == "all") return SlidingPattern::kAll;
  if (s == "alternate") return SlidingPattern::kAlternate;
  r.fail("sliding_pattern", "must be one of none, all, alternate; got '" + s + "'");
}

const char* sliding_pattern_name(SlidingPattern p) {
  switch (p) {
    case SlidingPattern::kNone:
      return "none";
    case SlidingPattern::kAll:
      return "all";
    case SlidingPattern::kAlternate:
      return "alternate";
  }
  return "none";
}

// HF configs carry fields servesim does not need (rope scaling, token ids, ...); they are
// accepted as they are, so the strict unknown-key check only applies to servesim's schema.
template <typename T>
T hf_get(const nlohmann::json& j, const std::string& key, const std::string& origin) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    throw ConfigError(origin + ": " + key + " is required in a Hugging Face config.json");
  }
  const auto unexpected = [&] {
    return ConfigError(origin + ": " + key + " has an unexpected value " + it->dump());
  };
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // nlohmann converts a float to int with a plain cast, undefined beyond int's range (found
    // by fuzz_model_config: 2e10). Sizes written as 4096.0 are still accepted.
    if (it->is_number_integer()) {
      if (!json_integer_fits<T>(*it)) throw unexpected();
      return it->get<T>();
    }
    if (!it->is_number_float()) throw unexpected();
    const double v = it->get<double>();
    // Bounds as doubles: int's are exact; int64's max rounds up to 2^63, hence the <.
    if (!(v == std::floor(v) && v >= static_cast<double>(std::numeric_limits<T>::min()) &&
          v < static_cast<double>(std::numeric_limits<T>::max()) + 1.0)) {
      throw unexpected();
    }
    return static_cast<T>(v);
  } else {
    try {
      return it->get<T>();
    } catch (const nlohmann::json::exception&) {
      throw unexpected();
    }
  }
}

template <typename T>
T hf_get_or(const nlohmann::json& j, const std::string& key, const T& fallback,
            const std::string& origin) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return hf_get<T>(j, key, origin);
}

DType hf_native_dtype(const nlohmann::json& j, const std::string& origin) {
  auto q = j.find("quantization_config");
  if (q != j.end() && q->is_object()) {
    const std::string method = hf_get_or<std::string>(*q, "quant_method", "", origin);
    if (method == "fp8") return DType::kFp8;
    if (method == "awq" || method == "gptq") return DType::kInt4;
  }
  const std::string torch_dtype = hf_get_or<std::string>(j, "torch_dtype", "bfloat16", origin);
  return parse_dtype(torch_dtype, origin + ": torch_dtype");
}

}  // namespace

bool ModelSpec::layer_is_moe(int layer) const {
  return moe && layer >= moe->dense_layers;
}

bool ModelSpec::layer_is_sliding(int layer) const {
  switch (sliding_pattern) {
    case SlidingPattern::kNone:
      return false;
    case SlidingPattern::kAll:
      return true;
    case SlidingPattern::kAlternate:
      return layer % 2 == 0;
  }
  return false;
}

int ModelSpec::num_sliding_layers() const {
  int n = 0;
  for (int l = 0; l < num_layers; ++l) n += layer_is_sliding(l) ? 1 : 0;
  return n;
}

int64_t ModelSpec::embedding_params() const {
  return int64_t{vocab_size} * hidden_size;
}

int64_t ModelSpec::lm_head_params() const {
  return tie_word_embeddings ? 0 : int64_t{vocab_size} * hidden_size;
}

int64_t ModelSpec::attention_params_per_layer() const {
  const int64_t h = hidden_size;
  int64_t n = 0;
  if (mla) {
    const int64_t qk_dim = mla->qk_nope_head_dim + mla->qk_rope_head_dim;
    if (mla->q_lora_rank > 0) {
      n += h * mla->q_lora_rank + mla->q_lora_rank + int64_t{mla->q_lora_rank} * num_heads * qk_dim;
    } else {
      n += h * num_heads * qk_dim;
    }
    n += h * (mla->kv_lora_rank + mla->qk_rope_head_dim) + mla->kv_lora_rank;
    n += int64_t{mla->kv_lora_rank} * num_heads * (mla->qk_nope_head_dim + mla->v_head_dim);
    n += int64_t{num_heads} * mla->v_head_dim * h;
  } else {
    const int64_t q = int64_t{num_heads} * head_dim;
    const int64_t kv = int64_t{num_kv_heads} * head_dim;
    n += h * (q + 2 * kv) + q * h;
    if (qkv_bias) n += q + 2 * kv;
    if (qk_norm) n += 2 * int64_t{head_dim};
  }
  if (o_bias) n += h;
  if (attention_sinks) n += num_heads;
  return n;
}

namespace {

// One expert's gate, up and down projections (and their biases for gpt-oss).
int64_t params_per_expert(const ModelSpec& m) {
  const MoeSpec& e = *m.moe;
  return 3 * int64_t{m.hidden_size} * e.expert_intermediate_size +
         (e.expert_bias ? 2 * int64_t{e.expert_intermediate_size} + m.hidden_size : 0);
}

// The router's logits projection (and bias) of one MoE layer.
int64_t router_params(const ModelSpec& m) {
  const MoeSpec& e = *m.moe;
  return int64_t{m.hidden_size} * e.num_experts + (e.expert_bias ? e.num_experts : 0);
}

}  // namespace

int64_t ModelSpec::expert_params_per_layer() const {
  if (!moe) return 0;
  return params_per_expert(*this) * (moe->num_experts + moe->shared_experts);
}

int64_t ModelSpec::ffn_params(int layer) const {
  if (!layer_is_moe(layer)) return 3 * int64_t{hidden_size} * intermediate_size;
  return expert_params_per_layer() + router_params(*this);
}

int64_t ModelSpec::ffn_active_params(int layer) const {
  if (!layer_is_moe(layer)) return ffn_params(layer);
  return params_per_expert(*this) * (moe->experts_per_token + moe->shared_experts) +
         router_params(*this);
}

int64_t ModelSpec::norm_params_per_layer() const {
  return 2 * int64_t{hidden_size};
}

int64_t ModelSpec::total_params() const {
  int64_t n = embedding_params() + lm_head_params() + hidden_size;  // + final norm
  for (int l = 0; l < num_layers; ++l) {
    n += attention_params_per_layer() + ffn_params(l) + norm_params_per_layer();
  }
  return n;
}

int64_t ModelSpec::active_params() const {
  int64_t n = embedding_params() + lm_head_params() + hidden_size;
  for (int l = 0; l < num_layers; ++l) {
    n += attention_params_per_layer() + ffn_active_params(l) + norm_params_per_layer();
  }
  return n;
}

int ModelSpec::kv_heads_per_rank(int tp) const {
  if (mla) return 1;
  return std::max(1, num_kv_heads / tp);
}

int64_t ModelSpec::kv_elements_per_token_per_layer(int tp) const {
  if (mla) return int64_t{mla->kv_lora_rank} + mla->qk_rope_head_dim;
  return 2 * int64_t{kv_heads_per_rank(tp)} * head_dim;
}

double ModelSpec::kv_bytes_per_token_per_layer(DType kv_dtype, int tp) const {
  return static_cast<double>(kv_elements_per_token_per_layer(tp)) * dtype_bytes(kv_dtype);
}

double ModelSpec::kv_bytes_per_token(DType kv_dtype, int tp) const {
  return kv_bytes_per_token_per_layer(kv_dtype, tp) * num_layers;
}

void ModelSpec::validate() const {
  const std::string at = name.empty() ? std::string("model") : "model '" + name + "'";
  auto positive = [&](int v, const char* field) {
    if (v <= 0) throw ConfigError(at + ": " + field + " must be > 0, got " + std::to_string(v));
  };
  positive(hidden_size, "hidden_size");
  positive(num_layers, "num_layers");
  positive(num_heads, "num_heads");
  positive(num_kv_heads, "num_kv_heads");
  positive(head_dim, "head_dim");
  positive(vocab_size, "vocab_size");
  positive(max_position_embeddings, "max_position_embeddings");
  if (!moe || moe->dense_layers > 0) positive(intermediate_size, "intermediate_size");
  if (num_heads % num_kv_heads != 0) {
    throw ConfigError(at + ": num_kv_heads (" + std::to_string(num_kv_heads) +
                      ") must divide num_heads (" + std::to_string(num_heads) + ")");
  }
  if (sliding_pattern != SlidingPattern::kNone && sliding_window <= 0) {
    throw ConfigError(at + ": sliding_window must be > 0 when sliding_pattern is set");
  }
  if (moe) {
    positive(moe->num_experts, "moe.num_experts");
    positive(moe->experts_per_token, "moe.experts_per_token");
    positive(moe->expert_intermediate_size, "moe.expert_intermediate_size");
    if (moe->experts_per_token > moe->num_experts) {
      throw ConfigError(at + ": moe.experts_per_token (" + std::to_string(moe->experts_per_token) +
                        ") exceeds moe.num_experts (" + std::to_string(moe->num_experts) + ")");
    }
    if (moe->shared_experts < 0 || moe->dense_layers < 0 || moe->dense_layers > num_layers) {
      throw ConfigError(at +
                        ": moe.shared_experts and moe.dense_layers must be in [0, num_layers]");
    }
  }
  if (mla) {
    positive(mla->kv_lora_rank, "mla.kv_lora_rank");
    positive(mla->qk_nope_head_dim, "mla.qk_nope_head_dim");
    positive(mla->qk_rope_head_dim, "mla.qk_rope_head_dim");
    positive(mla->v_head_dim, "mla.v_head_dim");
    if (mla->q_lora_rank < 0) throw ConfigError(at + ": mla.q_lora_rank must be >= 0");
    if (head_dim != mla->qk_nope_head_dim + mla->qk_rope_head_dim) {
      throw ConfigError(at + ": head_dim must equal mla.qk_nope_head_dim + mla.qk_rope_head_dim (" +
                        std::to_string(mla->qk_nope_head_dim + mla->qk_rope_head_dim) + ")");
    }
  }
}

ModelSpec ModelSpec::from_json(const nlohmann::json& j, const std::string& origin) {
  JsonObjectReader r(j, origin);
  ModelSpec m;
  m.name = r.required<std::string>("name");
  m.hf_repo = r.optional<std::string>("hf_repo", "");
  m.family = r.optional<std::string>("family", "llama");
  m.hidden_size = r.positive_int("hidden_size");
  m.num_layers = r.positive_int("num_layers");
  m.num_heads = r.positive_int("num_heads");
  m.num_kv_heads = r.optional<int>("num_kv_heads", m.num_heads);
  m.head_dim = r.optional<int>("head_dim", m.hidden_size / m.num_heads);
  m.intermediate_size = r.non_negative_int("intermediate_size", 0);
  m.vocab_size = r.positive_int("vocab_size");
  m.max_position_embeddings = r.positive_int("max_position_embeddings");
  m.tie_word_embeddings = r.optional<bool>("tie_word_embeddings", false);
  m.qkv_bias = r.optional<bool>("qkv_bias", false);
  m.o_bias = r.optional<bool>("o_bias", false);
  m.qk_norm = r.optional<bool>("qk_norm", false);
  m.attention_sinks = r.optional<bool>("attention_sinks", false);
  m.sliding_window = r.non_negative_int("sliding_window", 0);
  m.sliding_pattern = parse_sliding_pattern(
      r.optional<std::string>("sliding_pattern", m.sliding_window > 0 ? "all" : "none"), r);
  if (r.has("moe")) {
    JsonObjectReader mr(r.raw("moe"), origin + ": moe");
    MoeSpec moe;
    moe.num_experts = mr.positive_int("num_experts");
    moe.experts_per_token = mr.positive_int("experts_per_token");
    moe.expert_intermediate_size = mr.positive_int("expert_intermediate_size");
    moe.shared_experts = mr.non_negative_int("shared_experts", 0);
    moe.dense_layers = mr.non_negative_int("dense_layers", 0);
    moe.expert_bias = mr.optional<bool>("expert_bias", false);
    mr.finish();
    m.moe = moe;
  } else {
    r.raw("moe");
  }
  if (r.has("mla")) {
    JsonObjectReader ar(r.raw("mla"), origin + ": mla");
    MlaSpec mla;
    mla.q_lora_rank = ar.non_negative_int("q_lora_rank", 0);
    mla.kv_lora_rank = ar.positive_int("kv_lora_rank");
    mla.qk_nope_head_dim = ar.positive_int("qk_nope_head_dim");
    mla.qk_rope_head_dim = ar.positive_int("qk_rope_head_dim");
    mla.v_head_dim = ar.positive_int("v_head_dim");
    ar.finish();
    m.mla = mla;
  } else {
    r.raw("mla");
  }
  m.native_dtype = parse_dtype(r.optional<std::string>("dtype", "bf16"), origin + ": dtype");
  if (r.has("expert_dtype")) {
    m.native_expert_dtype =
        parse_dtype(r.required<std::string>("expert_dtype"), origin + ": expert_dtype");
  }
  r.optional<std::string>("notes", "");
  r.finish();
  m.validate();
  return m;
}

ModelSpec ModelSpec::from_hf_config(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw ConfigError(origin + ": expected a JSON object");
  const std::string model_type = hf_get_or<std::string>(j, "model_type", "", origin);
  static const char* kSupported =
      "llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, deepseek_v3, gpt_oss";
  const bool known = model_type == "llama" || model_type == "mistral" || model_type == "mixtral" ||
                     model_type == "qwen2" || model_type == "qwen3" || model_type == "qwen3_moe" ||
                     model_type == "deepseek_v3" || model_type == "deepseek_v2" ||
                     model_type == "gpt_oss";
  if (!known) {
    throw ConfigError(origin + ": model_type '" + model_type +
                      "' is not a supported architecture (supported: " + kSupported + ")");
  }
  ModelSpec m;
  m.family = model_type == "deepseek_v2" ? "deepseek_v3" : model_type;
  m.name = hf_get_or<std::string>(j, "_name_or_path", "", origin);
  m.hidden_size = hf_get<int>(j, "hidden_size", origin);
  m.num_layers = hf_get<int>(j, "num_hidden_layers", origin);
  m.num_heads = hf_get<int>(j, "num_attention_heads", origin);
  m.num_kv_heads = hf_get_or<int>(j, "num_key_value_heads", m.num_heads, origin);
  if (m.num_heads <= 0 || m.hidden_size <= 0) {
    throw ConfigError(origin + ": hidden_size and num_attention_heads must be > 0");
  }
  m.head_dim = hf_get_or<int>(j, "head_dim", m.hidden_size / m.num_heads, origin);
  m.intermediate_size = hf_get_or<int>(j, "intermediate_size", 0, origin);
  m.vocab_size = hf_get<int>(j, "vocab_size", origin);
  m.max_position_embeddings = hf_get<int>(j, "max_position_embeddings", origin);
  m.tie_word_embeddings = hf_get_or<bool>(j, "tie_word_embeddings", false, origin);
  m.qkv_bias = hf_get_or<bool>(j, "attention_bias", false, origin);
  m.native_dtype = hf_native_dtype(j, origin);

  if (model_type == "mistral" || model_type == "mixtral") {
    m.sliding_window = hf_get_or<int>(j, "sliding_window", 0, origin);
    if (m.sliding_window > 0) m.sliding_pattern = SlidingPattern::kAll;
  }
  if (model_type == "qwen2") {
    m.qkv_bias = true;
    if (hf_get_or<bool>(j, "use_sliding_window", false, origin)) {
      throw ConfigError(origin +
                        ": use_sliding_window=true is not supported for qwen2; "
                        "set it to false (the published Qwen2/2.5 configs do)");
    }
  }
  if (model_type == "qwen3" || model_type == "qwen3_moe") m.qk_norm = true;
  if (model_type == "mixtral" || model_type == "gpt_oss") {
    MoeSpec moe;
    moe.num_experts = hf_get<int>(j, "num_local_experts", origin);
    moe.experts_per_token = j.contains("num_experts_per_tok")
                                ? hf_get<int>(j, "num_experts_per_tok", origin)
                                : hf_get<int>(j, "experts_per_token", origin);
    moe.expert_intermediate_size = m.intermediate_size;
    m.moe = moe;
  }
  if (model_type == "qwen3_moe") {
    MoeSpec moe;
    moe.num_experts = hf_get<int>(j, "num_experts", origin);
    moe.experts_per_token = hf_get<int>(j, "num_experts_per_tok", origin);
    moe.expert_intermediate_size = hf_get<int>(j, "moe_intermediate_size", origin);
    if (hf_get_or<int>(j, "decoder_sparse_step", 1, origin) != 1 ||
        !hf_get_or<nlohmann::json>(j, "mlp_only_layers", nlohmann::json::array(), origin).empty()) {
      throw ConfigError(origin +
                        ": decoder_sparse_step != 1 or mlp_only_layers is not supported; "
                        "servesim models every layer as MoE for qwen3_moe");
    }
    m.moe = moe;
  }
  if (m.family == "deepseek_v3") {
    MlaSpec mla;
    mla.q_lora_rank = hf_get_or<int>(j, "q_lora_rank", 0, origin);
    mla.kv_lora_rank = hf_get<int>(j, "kv_lora_rank", origin);
    mla.qk_nope_head_dim = hf_get<int>(j, "qk_nope_head_dim", origin);
    mla.qk_rope_head_dim = hf_get<int>(j, "qk_rope_head_dim", origin);
    mla.v_head_dim = hf_get<int>(j, "v_head_dim", origin);
    m.mla = mla;
    m.num_kv_heads = m.num_heads;
    m.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
    MoeSpec moe;
    moe.num_experts = hf_get<int>(j, "n_routed_experts", origin);
    moe.experts_per_token = hf_get<int>(j, "num_experts_per_tok", origin);
    moe.expert_intermediate_size = hf_get<int>(j, "moe_intermediate_size", origin);
    moe.shared_experts = hf_get_or<int>(j, "n_shared_experts", 0, origin);
    moe.dense_layers = hf_get_or<int>(j, "first_k_dense_replace", 0, origin);
    m.moe = moe;
  }
  if (model_type == "gpt_oss") {
    m.sliding_window = hf_get<int>(j, "sliding_window", origin);
    m.sliding_pattern = SlidingPattern::kAlternate;
    m.qkv_bias = true;
    m.o_bias = true;
    m.attention_sinks = true;
    m.moe->expert_bias = true;
    auto q = j.find("quantization_config");
    if (q != j.end() && q->is_object() &&
        hf_get_or<std::string>(*q, "quant_method", "", origin) == "mxfp4") {
      m.native_expert_dtype = DType::kMxfp4;
      m.native_dtype = DType::kBf16;
    }
  }
  m.validate();
  return m;
}

nlohmann::json ModelSpec::to_json() const {
  nlohmann::json j = {{"name", name},
                      {"hf_repo", hf_repo},
                      {"family", family},
                      {"hidden_size", hidden_size},
                      {"num_layers", num_layers},
                      {"num_heads", num_heads},
                      {"num_kv_heads", num_kv_heads},
                      {"head_dim", head_dim},
                      {"intermediate_size", intermediate_size},
                      {"vocab_size", vocab_size},
                      {"max_position_embeddings", max_position_embeddings},
                      {"tie_word_embeddings", tie_word_embeddings},
                      {"qkv_bias", qkv_bias},
                      {"o_bias", o_bias},
                      {"qk_norm", qk_norm},
                      {"attention_sinks", attention_sinks},
                      {"sliding_window", sliding_window},
                      {"sliding_pattern", sliding_pattern_name(sliding_pattern)},
                      {"dtype", std::string(dtype_name(native_dtype))}};
  if (native_expert_dtype) j["expert_dtype"] = std::string(dtype_name(*native_expert_dtype));
  if (moe) {
    j["moe"] = {{"num_experts", moe->num_experts},
                {"experts_per_token", moe->experts_per_token},
                {"expert_intermediate_size", moe->expert_intermediate_size},
                {"shared_experts", moe->shared_experts},
                {"dense_layers", moe->dense_layers},
                {"expert_bias", moe->expert_bias}};
  }
  if (mla) {
    j["mla"] = {{"q_lora_rank", mla->q_lora_rank},
                {"kv_lora_rank", mla->kv_lora_rank},
                {"qk_nope_head_dim", mla->qk_nope_head_dim},
                {"qk_rope_head_dim", mla->qk_rope_head_dim},
                {"v_head_dim", mla->v_head_dim}};
  }
  return j;
}

}  // namespace servesim
