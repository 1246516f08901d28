#include "engine/runtime/weights.h"

#include <cmath>
#include <memory>

#include "engine/runtime/safetensors_file.h"
#include "kernels/sampler.h"
#include "models/config_error.h"

namespace servesim {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Every tensor of the model with its expected shape, in a fixed order, paired with where it
// goes. Used by both initialisers, so random and loaded weights cannot disagree on layout.
struct TensorSlot {
  std::string hf_name;
  std::vector<int64_t> shape;
  std::vector<float>* dest;
  int64_t fan_in;      // inputs each output reads (random init scale); 0 for norms
  double extra_scale;  // residual-writing projections are scaled down
};

std::vector<TensorSlot> tensor_slots(Weights& w) {
  const ModelSpec& m = w.spec;
  const int64_t hidden = m.hidden_size, q_dim = int64_t(m.num_heads) * m.head_dim,
                kv_dim = int64_t(m.num_kv_heads) * m.head_dim, ffn = m.intermediate_size,
                vocab = m.vocab_size;
  const double residual_scale = 1.0 / std::sqrt(2.0 * m.num_layers);
  std::vector<TensorSlot> slots;
  slots.push_back({"model.embed_tokens.weight", {vocab, hidden}, &w.embedding, 1, 1.0});
  w.layers.resize(static_cast<size_t>(m.num_layers));
  for (int i = 0; i < m.num_layers; ++i) {
    LayerWeights& l = w.layers[static_cast<size_t>(i)];
    const std::string p = "model.layers." + std::to_string(i) + ".";
    slots.push_back({p + "input_layernorm.weight", {hidden}, &l.attn_norm, 0, 1.0});
    slots.push_back({p + "self_attn.q_proj.weight", {q_dim, hidden}, &l.wq, hidden, 1.0});
    slots.push_back({p + "self_attn.k_proj.weight", {kv_dim, hidden}, &l.wk, hidden, 1.0});
    slots.push_back({p + "self_attn.v_proj.weight", {kv_dim, hidden}, &l.wv, hidden, 1.0});
    if (m.qkv_bias) {
      // Biases start small: they shift, not scale, the projections.
      slots.push_back({p + "self_attn.q_proj.bias", {q_dim}, &l.bq, 2500, 1.0});
      slots.push_back({p + "self_attn.k_proj.bias", {kv_dim}, &l.bk, 2500, 1.0});
      slots.push_back({p + "self_attn.v_proj.bias", {kv_dim}, &l.bv, 2500, 1.0});
    }
    slots.push_back({p + "self_attn.o_proj.weight", {hidden, q_dim}, &l.wo, q_dim, residual_scale});
    slots.push_back({p + "post_attention_layernorm.weight", {hidden}, &l.ffn_norm, 0, 1.0});
    slots.push_back({p + "mlp.gate_proj.weight", {ffn, hidden}, &l.w_gate, hidden, 1.0});
    slots.push_back({p + "mlp.up_proj.weight", {ffn, hidden}, &l.w_up, hidden, 1.0});
    slots.push_back({p + "mlp.down_proj.weight", {hidden, ffn}, &l.w_down, ffn, residual_scale});
  }
  slots.push_back({"model.norm.weight", {hidden}, &w.final_norm, 0, 1.0});
  if (!m.tie_word_embeddings) {
    slots.push_back({"lm_head.weight", {vocab, hidden}, &w.lm_head, hidden, 1.0});
  }
  return slots;
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace

void Weights::check_supported(const ModelSpec& spec) {
  auto refuse = [&](const std::string& what) {
    throw ConfigError("model '" + spec.name + "': the engine does not run " + what +
                      " yet; pick a Llama-shaped model (llama, mistral without a window, qwen2)");
  };
  if (spec.is_moe()) refuse("mixture-of-experts layers");
  if (spec.is_mla()) refuse("multi-head latent attention");
  if (spec.sliding_window > 0) refuse("sliding-window attention");
  if (spec.qk_norm) refuse("QK norms");
  if (spec.o_bias) refuse("output-projection biases");
  if (spec.attention_sinks) refuse("attention sinks");
  if (spec.head_dim % 2 != 0) refuse("an odd head_dim (rotary embedding pairs dimensions)");
}

int64_t Weights::bytes_read_per_step() const {
  int64_t floats = static_cast<int64_t>(final_norm.size() + output_matrix().size());
  for (const LayerWeights& l : layers) {
    for (const std::vector<float>* t : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.bq, &l.bk, &l.bv,
                                        &l.wo, &l.ffn_norm, &l.w_gate, &l.w_up, &l.w_down}) {
      floats += static_cast<int64_t>(t->size());
    }
  }
  return floats * static_cast<int64_t>(sizeof(float));
}

int64_t Weights::num_params() const {
  int64_t n = static_cast<int64_t>(embedding.size() + final_norm.size() + lm_head.size());
  for (const LayerWeights& l : layers) {
    for (const std::vector<float>* t : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.bq, &l.bk, &l.bv,
                                        &l.wo, &l.ffn_norm, &l.w_gate, &l.w_up, &l.w_down}) {
      n += static_cast<int64_t>(t->size());
    }
  }
  return n;
}

Weights Weights::random(const ModelSpec& spec, uint64_t seed) {
  check_supported(spec);
  Weights w;
  w.spec = spec;
  uint64_t tensor_index = 0;
  for (const TensorSlot& slot : tensor_slots(w)) {
    std::vector<float>& t = *slot.dest;
    t.resize(static_cast<size_t>(numel(slot.shape)));
    if (slot.fan_in == 0) {
      std::fill(t.begin(), t.end(), 1.0f);
      continue;
    }
    // Each tensor has its own stream, so adding a tensor kind does not reshuffle the others.
    SamplingRng rng(seed * 0x9e3779b97f4a7c15ull + ++tensor_index);
    // Uniform(-a, a) has standard deviation a / sqrt(3).
    const float a =
        static_cast<float>(std::sqrt(3.0 / static_cast<double>(slot.fan_in)) * slot.extra_scale);
    for (float& x : t) x = (2.0f * rng.uniform() - 1.0f) * a;
  }
  return w;
}

Weights Weights::load_safetensors(const ModelSpec& spec, const std::vector<std::string>& paths) {
  check_supported(spec);
  if (paths.empty()) throw ConfigError("checkpoint: no .safetensors file given");
  std::vector<std::unique_ptr<SafetensorsFile>> files;
  for (const std::string& p : paths) files.push_back(std::make_unique<SafetensorsFile>(p));
  Weights w;
  w.spec = spec;
  for (const TensorSlot& slot : tensor_slots(w)) {
    const SafetensorsFile* holder = nullptr;
    for (const auto& f : files) {
      if (f->contains(slot.hf_name)) holder = f.get();
    }
    if (holder == nullptr) {
      throw ConfigError("checkpoint " + paths.front() + (paths.size() > 1 ? " (and shards)" : "") +
                        ": tensor '" + slot.hf_name + "' is missing but model '" + spec.name +
                        "' needs it; the checkpoint does not match its config");
    }
    const std::vector<int64_t>& shape = holder->tensors().at(slot.hf_name).shape;
    if (shape != slot.shape) {
      throw ConfigError(holder->path() + ": tensor '" + slot.hf_name + "' has shape " +
                        shape_text(shape) + " but model '" + spec.name + "' implies " +
                        shape_text(slot.shape) + "; the checkpoint does not match its config");
    }
    *slot.dest = holder->read_fp32(slot.hf_name);
  }
  return w;
}

}  // namespace servesim
