#include "engine/runtime/model_runner.h"

#include <chrono>
#include <cmath>
#include <string>

#include "kernels/embedding.h"
#include "kernels/linear.h"
#include "kernels/rms_norm.h"
#include "kernels/silu_mul.h"
#include "models/config_error.h"

namespace servesim {
namespace {

using Clock = std::chrono::steady_clock;

// Adds the lifetime of the scope to one op's seconds when profiling; reads no clock otherwise.
class OpTimer {
 public:
  OpTimer(bool enabled, OpSeconds& op_s, Op op)
      : slot_(enabled ? &op_s[static_cast<size_t>(op)] : nullptr) {
    if (slot_ != nullptr) start_ = Clock::now();
  }
  ~OpTimer() {
    if (slot_ != nullptr) *slot_ += std::chrono::duration<double>(Clock::now() - start_).count();
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  double* slot_;
  Clock::time_point start_;
};

void add_into(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

template <typename T>
void grow(std::vector<T>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
}

}  // namespace

ModelRunner::ModelRunner(const Weights& weights, const ModelRunnerOptions& options)
    : weights_(weights),
      options_(options),
      pool_(options.num_threads >= 1 ? options.num_threads : 1),
      cache_(weights.spec.num_layers, options.num_blocks >= 2 ? options.num_blocks : 2,
             options.block_size >= 1 ? options.block_size : 1, weights.spec.num_kv_heads,
             weights.spec.head_dim),
      rope_(weights.spec.head_dim, weights.spec.max_position_embeddings, weights.rope_theta) {
  if (options.num_blocks < 2) {
    throw ConfigError("num_gpu_blocks is " + std::to_string(options.num_blocks) +
                      "; the engine's KV cache needs at least 2 blocks (block 0 is reserved)");
  }
  if (options.block_size < 1) throw ConfigError("block_size must be >= 1");
  if (options.num_threads < 1) {
    throw ConfigError("--threads is " + std::to_string(options.num_threads) + "; use 1 or more");
  }
}

void ModelRunner::ensure_capacity(int64_t rows, int num_samples) {
  const ModelSpec& m = weights_.spec;
  const int64_t q_dim = int64_t(m.num_heads) * m.head_dim;
  const int64_t kv_dim = int64_t(m.num_kv_heads) * m.head_dim;
  grow(x_, rows * m.hidden_size);
  grow(h_, rows * m.hidden_size);
  grow(q_, rows * q_dim);
  grow(k_, rows * kv_dim);
  grow(v_, rows * kv_dim);
  grow(attn_, rows * q_dim);
  grow(proj_, rows * m.hidden_size);
  grow(gate_, rows * m.intermediate_size);
  grow(up_, rows * m.intermediate_size);
  grow(final_, int64_t(num_samples) * m.hidden_size);
  grow(result_.logits, int64_t(num_samples) * m.vocab_size);
}

void ModelRunner::prepare(const SchedulerOutput& output,
                          std::span<const std::span<const int32_t>> tokens) {
  batch_.build(output, tokens, options_.block_size, cache_.num_blocks(), rope_.max_positions(),
               weights_.spec.name, "ModelRunner::execute");
  ensure_capacity(batch_.num_rows, batch_.num_samples);
  result_.num_samples = batch_.num_samples;
}

void ModelRunner::attention(int layer, std::span<const AttentionSequence> seqs, int64_t first_row,
                            int64_t num_rows) {
  if (num_rows == 0) return;
  const ModelSpec& m = weights_.spec;
  const int64_t q_dim = int64_t(m.num_heads) * m.head_dim;
  const int64_t kv_dim = int64_t(m.num_kv_heads) * m.head_dim;
  cache_.write(layer, k_.data() + first_row * kv_dim, v_.data() + first_row * kv_dim, kv_dim,
               batch_.slots.data() + first_row, num_rows);
  paged_attention(q_.data(), q_dim, cache_, layer, seqs, m.num_heads,
                  1.0f / std::sqrt(static_cast<float>(m.head_dim)), attn_.data(), pool_);
}

void ModelRunner::layer_forward(int layer) {
  const ModelSpec& m = weights_.spec;
  const LayerWeights& w = weights_.layers[static_cast<size_t>(layer)];
  const int64_t rows = batch_.num_rows, hidden = m.hidden_size, ffn = m.intermediate_size;
  const int64_t q_dim = int64_t(m.num_heads) * m.head_dim;
  const int64_t kv_dim = int64_t(m.num_kv_heads) * m.head_dim;
  const bool prof = options_.profile;
  OpSeconds& t = result_.op_s;
  auto bias = [](const std::vector<float>& b) { return b.empty() ? nullptr : b.data(); };

  {
    OpTimer timer(prof, t, Op::kNormRopeEmbed);
    rms_norm(x_.data(), w.attn_norm.data(), h_.data(), rows, hidden, weights_.rms_norm_eps);
  }
  {
    OpTimer timer(prof, t, Op::kQkv);
    linear(h_.data(), w.wq.data(), bias(w.bq), q_.data(), rows, q_dim, hidden, pool_);
    linear(h_.data(), w.wk.data(), bias(w.bk), k_.data(), rows, kv_dim, hidden, pool_);
    linear(h_.data(), w.wv.data(), bias(w.bv), v_.data(), rows, kv_dim, hidden, pool_);
  }
  {
    OpTimer timer(prof, t, Op::kNormRopeEmbed);
    rope_.apply(q_.data(), rows, q_dim, m.num_heads, batch_.positions.data());
    rope_.apply(k_.data(), rows, kv_dim, m.num_kv_heads, batch_.positions.data());
  }
  {
    OpTimer timer(prof, t, Op::kAttentionPrefill);
    attention(layer, batch_.prefill, 0, batch_.num_prefill_rows);
  }
  {
    OpTimer timer(prof, t, Op::kAttentionDecode);
    attention(layer, batch_.decode, batch_.num_prefill_rows, rows - batch_.num_prefill_rows);
  }
  {
    OpTimer timer(prof, t, Op::kOProj);
    linear(attn_.data(), w.wo.data(), nullptr, proj_.data(), rows, hidden, q_dim, pool_);
    add_into(x_.data(), proj_.data(), rows * hidden);
  }
  {
    OpTimer timer(prof, t, Op::kNormRopeEmbed);
    rms_norm(x_.data(), w.ffn_norm.data(), h_.data(), rows, hidden, weights_.rms_norm_eps);
  }
  {
    OpTimer timer(prof, t, Op::kMlp);
    linear(h_.data(), w.w_gate.data(), nullptr, gate_.data(), rows, ffn, hidden, pool_);
    linear(h_.data(), w.w_up.data(), nullptr, up_.data(), rows, ffn, hidden, pool_);
    silu_mul(gate_.data(), up_.data(), gate_.data(), rows * ffn);
    linear(gate_.data(), w.w_down.data(), nullptr, proj_.data(), rows, hidden, ffn, pool_);
    add_into(x_.data(), proj_.data(), rows * hidden);
  }
}

const RunnerOutput& ModelRunner::execute(const SchedulerOutput& output,
                                         std::span<const std::span<const int32_t>> tokens) {
  const ModelSpec& m = weights_.spec;
  result_.op_s.fill(0.0);
  {
    OpTimer timer(options_.profile, result_.op_s, Op::kOverhead);
    prepare(output, tokens);
  }
  if (batch_.num_rows == 0) return result_;
  {
    OpTimer timer(options_.profile, result_.op_s, Op::kNormRopeEmbed);
    embedding(weights_.embedding.data(), m.vocab_size, m.hidden_size, batch_.token_ids.data(),
              batch_.num_rows, x_.data());
  }
  for (int layer = 0; layer < m.num_layers; ++layer) layer_forward(layer);

  // Only the rows that sample need the final norm and the LM head.
  OpTimer timer(options_.profile, result_.op_s, Op::kLmHead);
  const int64_t hidden = m.hidden_size;
  for (size_t i = 0; i < batch_.sample_rows.size(); ++i) {
    rms_norm(x_.data() + batch_.sample_rows[i] * hidden, weights_.final_norm.data(),
             final_.data() + static_cast<int64_t>(i) * hidden, 1, hidden, weights_.rms_norm_eps);
  }
  if (result_.num_samples == 0) return result_;
  linear(final_.data(), weights_.output_matrix().data(), nullptr, result_.logits.data(),
         result_.num_samples, m.vocab_size, hidden, pool_);
  return result_;
}

}  // namespace servesim
