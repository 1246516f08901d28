#include "engine/runtime/cuda_model_runner.h"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/rms_norm.h"
#include "kernels/cuda/silu_mul.h"
#include "models/config_error.h"

namespace servesim {
namespace {

using cuda::Bf16;

int64_t checked_blocks(const CudaModelRunnerOptions& o) {
  if (o.num_blocks < 2) {
    throw ConfigError("num_gpu_blocks is " + std::to_string(o.num_blocks) +
                      "; the engine's KV cache needs at least 2 blocks (block 0 is reserved)");
  }
  if (o.block_size < 1) throw ConfigError("block_size must be >= 1");
  return o.num_blocks;
}

const CudaWeights& checked(const std::shared_ptr<const CudaWeights>& w) {
  if (w == nullptr) throw std::invalid_argument("CudaModelRunner: no weights");
  return *w;
}

int num_sms() {
  return cuda::current_device_info().num_sms;
}

}  // namespace

CudaModelRunner::CudaModelRunner(std::shared_ptr<const CudaWeights> weights,
                                 const CudaModelRunnerOptions& options)
    : weights_(std::move(weights)),
      options_(options),
      linear_(stream_.get()),
      cache_(checked(weights_).spec.num_layers, checked_blocks(options), options.block_size,
             weights_->spec.num_kv_heads, weights_->spec.head_dim),
      rope_(servesim::RopeTable(weights_->spec.head_dim, weights_->spec.max_position_embeddings,
                                weights_->rope_theta)),
      max_positions_(weights_->spec.max_position_embeddings),
      prefill_attention_(weights_->spec.num_heads, weights_->spec.num_kv_heads,
                         weights_->spec.head_dim, num_sms()),
      decode_attention_(weights_->spec.num_heads, weights_->spec.num_kv_heads,
                        weights_->spec.head_dim, num_sms()) {}

void CudaModelRunner::begin_op() {
  if (options_.profile) timeline_.begin(stream_.get());
}

void CudaModelRunner::end_op(Op op) {
  if (options_.profile) timeline_.end(stream_.get(), static_cast<size_t>(op));
}

void CudaModelRunner::ensure_capacity(int64_t rows, int num_samples) {
  const ModelSpec& m = weights_->spec;
  const int64_t hidden = m.hidden_size, ffn = m.intermediate_size;
  const int64_t q_dim = int64_t(m.num_heads) * m.head_dim;
  const int64_t qkv_dim = q_dim + 2 * int64_t(m.num_kv_heads) * m.head_dim;
  if (rows > row_capacity_) {
    token_ids_.reserve(rows * 4);
    positions_.reserve(rows * 4);
    slots_.reserve(rows * 8);
    x_.reserve(rows * hidden * 4);
    h_.reserve(rows * hidden * 2);
    qkv_.reserve(rows * qkv_dim * 4);
    attn_.reserve(rows * q_dim * 2);
    gate_up_.reserve(rows * 2 * ffn * 2);
    act_.reserve(rows * ffn * 2);
    row_capacity_ = rows;
  }
  if (num_samples > sample_capacity_) {
    sample_rows_.reserve(int64_t(num_samples) * 8);
    final_.reserve(int64_t(num_samples) * hidden * 2);
    logits_.reserve(int64_t(num_samples) * m.vocab_size * 4);
    sample_capacity_ = num_samples;
  }
  if (static_cast<int64_t>(result_.logits.size()) < int64_t(num_samples) * m.vocab_size) {
    result_.logits.resize(static_cast<size_t>(num_samples) * m.vocab_size);
  }
}

void CudaModelRunner::prepare(const SchedulerOutput& output,
                              std::span<const std::span<const int32_t>> tokens) {
  const ModelSpec& m = weights_->spec;
  batch_.build(output, tokens, options_.block_size, cache_.num_blocks(), max_positions_, m.name,
               "CudaModelRunner::execute");
  // A kernel cannot throw: ids are checked here (the Engine checks prompts; sampled ids are in
  // range by construction).
  for (int64_t r = 0; r < batch_.num_rows; ++r) {
    const int32_t id = batch_.token_ids[static_cast<size_t>(r)];
    if (id < 0 || id >= m.vocab_size) {
      throw std::invalid_argument("CudaModelRunner::execute: token id outside the vocabulary");
    }
  }
  ensure_capacity(batch_.num_rows, batch_.num_samples);
  result_.num_samples = batch_.num_samples;
  const cuda::Stream s = stream_.get();
  const int64_t rows = batch_.num_rows;
  token_ids_.upload(batch_.token_ids.data(), rows * 4, s);
  positions_.upload(batch_.positions.data(), rows * 4, s);
  slots_.upload(batch_.slots.data(), rows * 8, s);
  sample_rows_.upload(batch_.sample_rows.data(), int64_t(batch_.num_samples) * 8, s);
  prefill_attention_.plan(batch_.prefill, false, s);
  decode_attention_.plan(batch_.decode, true, s);
}

void CudaModelRunner::attention(int layer, cuda::PagedAttention& attn, int64_t first_row,
                                int64_t num_rows) {
  if (num_rows == 0) return;
  const ModelSpec& m = weights_->spec;
  const int64_t q_dim = int64_t(m.num_heads) * m.head_dim;
  const int64_t kv_dim = int64_t(m.num_kv_heads) * m.head_dim;
  const int64_t qkv_dim = q_dim + 2 * kv_dim;
  float* qkv = qkv_.data<float>();
  cache_.write(layer, qkv + first_row * qkv_dim + q_dim, qkv + first_row * qkv_dim + q_dim + kv_dim,
               qkv_dim, slots_.data<int64_t>() + first_row, num_rows, stream_.get());
  attn.run(qkv, qkv_dim, cache_, layer, 1.0f / std::sqrt(static_cast<float>(m.head_dim)),
           attn_.data<Bf16>(), stream_.get());
}

void CudaModelRunner::layer_forward(int layer) {
  const ModelSpec& m = weights_->spec;
  const CudaLayerWeights& w = weights_->layers[static_cast<size_t>(layer)];
  const int64_t rows = batch_.num_rows, hidden = m.hidden_size, ffn = m.intermediate_size;
  const int64_t q_dim = int64_t(m.num_heads) * m.head_dim;
  const int64_t qkv_dim = q_dim + 2 * int64_t(m.num_kv_heads) * m.head_dim;
  const float eps = weights_->rms_norm_eps;
  const cuda::Stream s = stream_.get();
  float* x = x_.data<float>();
  Bf16* h = h_.data<Bf16>();
  float* qkv = qkv_.data<float>();

  begin_op();
  cuda::rms_norm(x, w.attn_norm.data<float>(), h, rows, hidden, eps, nullptr, s);
  end_op(Op::kNormRopeEmbed);
  begin_op();
  linear_.forward(h, w.wqkv.data<Bf16>(), w.bqkv.data<float>(), qkv, rows, qkv_dim, hidden, false);
  end_op(Op::kQkv);
  begin_op();
  // The key heads follow the query heads in a fused row: one launch rotates both.
  rope_.apply(qkv, rows, qkv_dim, m.num_heads + m.num_kv_heads, positions_.data<int32_t>(), s);
  end_op(Op::kNormRopeEmbed);
  begin_op();
  attention(layer, prefill_attention_, 0, batch_.num_prefill_rows);
  end_op(Op::kAttentionPrefill);
  begin_op();
  attention(layer, decode_attention_, batch_.num_prefill_rows, rows - batch_.num_prefill_rows);
  end_op(Op::kAttentionDecode);
  begin_op();
  linear_.forward(attn_.data<Bf16>(), w.wo.data<Bf16>(), nullptr, x, rows, hidden, q_dim, true);
  end_op(Op::kOProj);
  begin_op();
  cuda::rms_norm(x, w.ffn_norm.data<float>(), h, rows, hidden, eps, nullptr, s);
  end_op(Op::kNormRopeEmbed);
  begin_op();
  linear_.forward(h, w.w_gate_up.data<Bf16>(), gate_up_.data<Bf16>(), rows, 2 * ffn, hidden);
  cuda::silu_mul(gate_up_.data<Bf16>(), act_.data<Bf16>(), rows, ffn, s);
  linear_.forward(act_.data<Bf16>(), w.w_down.data<Bf16>(), nullptr, x, rows, hidden, ffn, true);
  end_op(Op::kMlp);
}

const RunnerOutput& CudaModelRunner::execute(const SchedulerOutput& output,
                                             std::span<const std::span<const int32_t>> tokens) {
  const ModelSpec& m = weights_->spec;
  const cuda::Stream s = stream_.get();
  result_.op_s.fill(0.0);
  timeline_.clear();
  const auto prepare_start = std::chrono::steady_clock::now();
  prepare(output, tokens);
  if (options_.profile) {
    result_.op_s[static_cast<size_t>(Op::kOverhead)] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - prepare_start).count();
  }
  if (batch_.num_rows == 0) return result_;
  begin_op();
  cuda::embedding(weights_->embedding.data<Bf16>(), m.hidden_size, token_ids_.data<int32_t>(),
                  batch_.num_rows, x_.data<float>(), s);
  end_op(Op::kNormRopeEmbed);
  for (int layer = 0; layer < m.num_layers; ++layer) layer_forward(layer);

  // Only the rows that sample need the final norm and the LM head.
  if (result_.num_samples > 0) {
    begin_op();
    cuda::rms_norm(x_.data<float>(), weights_->final_norm.data<float>(), final_.data<Bf16>(),
                   result_.num_samples, m.hidden_size, weights_->rms_norm_eps,
                   sample_rows_.data<int64_t>(), s);
    linear_.forward(final_.data<Bf16>(), weights_->output_matrix(), nullptr, logits_.data<float>(),
                    result_.num_samples, m.vocab_size, m.hidden_size, false);
    end_op(Op::kLmHead);
  }
  // download() waits for the step when there are logits; synchronize() covers a step without.
  logits_.download(result_.logits.data(),
                   int64_t(result_.num_samples) * m.vocab_size * int64_t(sizeof(float)), s);
  cuda::synchronize(s);
  if (options_.profile) timeline_.add_seconds(result_.op_s);
  return result_;
}

}  // namespace servesim
