#include "engine/runtime/cuda_weights.h"

#include <cmath>
#include <span>
#include <string>

#include "kernels/cuda/bf16.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/random_fill.h"
#include "models/config_error.h"

namespace servesim {
namespace {

using cuda::Bf16;
using cuda::DeviceBuffer;

void check_device_supported(const ModelSpec& spec) {
  Weights::check_supported(spec);
  if (spec.head_dim % 8 != 0 || spec.head_dim > 128) {
    throw ConfigError("model '" + spec.name +
                      "': the CUDA backend needs head_dim a multiple of 8 " + "up to 128, not " +
                      std::to_string(spec.head_dim) + "; use --backend cpu");
  }
}

// Uploads the concatenation of `parts` as bf16 (synchronously: the staging vector is local).
DeviceBuffer upload_bf16(std::initializer_list<const std::vector<float>*> parts) {
  std::vector<Bf16> host;
  for (const std::vector<float>* p : parts) {
    const std::vector<Bf16> part = cuda::to_bf16(std::span<const float>(*p));
    host.insert(host.end(), part.begin(), part.end());
  }
  DeviceBuffer d(static_cast<int64_t>(host.size() * sizeof(Bf16)));
  d.upload(std::span<const Bf16>(host), nullptr);
  cuda::synchronize(nullptr);
  return d;
}

DeviceBuffer upload_fp32(std::initializer_list<const std::vector<float>*> parts) {
  std::vector<float> host;
  for (const std::vector<float>* p : parts) host.insert(host.end(), p->begin(), p->end());
  DeviceBuffer d(static_cast<int64_t>(host.size() * sizeof(float)));
  d.upload(std::span<const float>(host), nullptr);
  cuda::synchronize(nullptr);
  return d;
}

// Random bf16 tensor of `n` elements with Weights::random's scale: standard deviation
// extra_scale / sqrt(fan_in), uniform.
DeviceBuffer random_bf16(int64_t n, int64_t fan_in, double extra_scale, uint64_t seed,
                         uint64_t& tensor_index) {
  DeviceBuffer d(n * static_cast<int64_t>(sizeof(Bf16)));
  const auto a = static_cast<float>(std::sqrt(3.0 / static_cast<double>(fan_in)) * extra_scale);
  cuda::fill_uniform_bf16(d.data<Bf16>(), n, seed, ++tensor_index, a, nullptr);
  return d;
}

DeviceBuffer ones(int64_t n) {
  DeviceBuffer d(n * static_cast<int64_t>(sizeof(float)));
  cuda::fill_constant(d.data<float>(), n, 1.0f, nullptr);
  return d;
}

}  // namespace

void require_cuda_device() {
  if (cuda::device_count() == 0) {
    throw ConfigError(
        "no CUDA device found (the CUDA runtime reports none; check the driver and "
        "CUDA_VISIBLE_DEVICES), use --backend cpu");
  }
}

int64_t CudaWeights::bytes_read_per_step() const {
  int64_t bytes = final_norm.bytes() + (spec.tie_word_embeddings ? embedding : lm_head).bytes();
  for (const CudaLayerWeights& l : layers) {
    bytes += l.attn_norm.bytes() + l.wqkv.bytes() + l.bqkv.bytes() + l.wo.bytes() +
             l.ffn_norm.bytes() + l.w_gate_up.bytes() + l.w_down.bytes();
  }
  return bytes;
}

int64_t CudaWeights::num_params() const {
  int64_t n = embedding.bytes() / 2 + lm_head.bytes() / 2 + final_norm.bytes() / 4;
  for (const CudaLayerWeights& l : layers) {
    n += (l.wqkv.bytes() + l.wo.bytes() + l.w_gate_up.bytes() + l.w_down.bytes()) / 2 +
         (l.attn_norm.bytes() + l.bqkv.bytes() + l.ffn_norm.bytes()) / 4;
  }
  return n;
}

std::shared_ptr<const CudaWeights> CudaWeights::upload(const Weights& w) {
  require_cuda_device();
  check_device_supported(w.spec);
  auto d = std::make_shared<CudaWeights>();
  d->spec = w.spec;
  d->rope_theta = w.rope_theta;
  d->rms_norm_eps = w.rms_norm_eps;
  d->embedding = upload_bf16({&w.embedding});
  for (const LayerWeights& l : w.layers) {
    CudaLayerWeights& c = d->layers.emplace_back();
    c.attn_norm = upload_fp32({&l.attn_norm});
    c.wqkv = upload_bf16({&l.wq, &l.wk, &l.wv});
    if (w.spec.qkv_bias) c.bqkv = upload_fp32({&l.bq, &l.bk, &l.bv});
    c.wo = upload_bf16({&l.wo});
    c.ffn_norm = upload_fp32({&l.ffn_norm});
    c.w_gate_up = upload_bf16({&l.w_gate, &l.w_up});
    c.w_down = upload_bf16({&l.w_down});
  }
  d->final_norm = upload_fp32({&w.final_norm});
  if (!w.spec.tie_word_embeddings) d->lm_head = upload_bf16({&w.lm_head});
  return d;
}

std::shared_ptr<const CudaWeights> CudaWeights::random(const ModelSpec& spec, uint64_t seed) {
  require_cuda_device();
  check_device_supported(spec);
  auto d = std::make_shared<CudaWeights>();
  d->spec = spec;
  const int64_t hidden = spec.hidden_size, ffn = spec.intermediate_size, vocab = spec.vocab_size;
  const int64_t q_dim = int64_t(spec.num_heads) * spec.head_dim;
  const int64_t kv_dim = int64_t(spec.num_kv_heads) * spec.head_dim;
  const double residual_scale = 1.0 / std::sqrt(2.0 * spec.num_layers);
  uint64_t tensor = 0;
  d->embedding = random_bf16(vocab * hidden, 1, 1.0, seed, tensor);
  for (int i = 0; i < spec.num_layers; ++i) {
    CudaLayerWeights& c = d->layers.emplace_back();
    c.attn_norm = ones(hidden);
    c.wqkv = random_bf16((q_dim + 2 * kv_dim) * hidden, hidden, 1.0, seed, tensor);
    if (spec.qkv_bias) {
      // Zero: a bias shifts, not scales, a projection, and its cost is all the bench needs.
      DeviceBuffer b((q_dim + 2 * kv_dim) * static_cast<int64_t>(sizeof(float)));
      cuda::fill_constant(b.data<float>(), q_dim + 2 * kv_dim, 0.0f, nullptr);
      c.bqkv = std::move(b);
    }
    c.wo = random_bf16(hidden * q_dim, q_dim, residual_scale, seed, tensor);
    c.ffn_norm = ones(hidden);
    c.w_gate_up = random_bf16(2 * ffn * hidden, hidden, 1.0, seed, tensor);
    c.w_down = random_bf16(hidden * ffn, ffn, residual_scale, seed, tensor);
  }
  d->final_norm = ones(hidden);
  if (!spec.tie_word_embeddings) {
    d->lm_head = random_bf16(vocab * hidden, hidden, 1.0, seed, tensor);
  }
  cuda::synchronize(nullptr);
  return d;
}

}  // namespace servesim
