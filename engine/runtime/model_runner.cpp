#include "engine/runtime/model_runner.h"

#include <chrono>
#include <cmath>
#include <stdexcept>
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
  grow(token_ids_, rows);
  grow(positions_, rows);
  grow(slots_, rows);
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
  if (tokens.size() != output.sequences.size()) {
    throw std::invalid_argument("ModelRunner::execute: one token list per scheduled sequence");
  }
  int64_t prefill_rows = 0, rows = 0;
  int num_samples = 0;
  for (const ScheduledSequence& s : output.sequences) {
    rows += s.num_new_tokens;
    if (s.is_prefill) prefill_rows += s.num_new_tokens;
    if (s.samples) ++num_samples;
  }
  ensure_capacity(rows, num_samples);
  num_rows_ = rows;
  num_prefill_rows_ = prefill_rows;
  result_.num_samples = num_samples;
  prefill_.clear();
  decode_.clear();
  sample_rows_.clear();

  int64_t next_prefill = 0, next_decode = prefill_rows;
  for (size_t i = 0; i < output.sequences.size(); ++i) {
    const ScheduledSequence& s = output.sequences[i];
    const std::span<const int32_t> toks = tokens[i];
    const int end = s.num_computed_tokens + s.num_new_tokens;
    if (static_cast<int64_t>(toks.size()) < end) {
      throw std::invalid_argument("ModelRunner::execute: token list shorter than the step");
    }
    if (end > rope_.max_positions()) {
      throw ConfigError("request " + std::to_string(s.request_id) + " reaches position " +
                        std::to_string(end - 1) + " beyond max_position_embeddings " +
                        std::to_string(rope_.max_positions()) + " of model '" + weights_.spec.name +
                        "'; lower max_model_len");
    }
    if (static_cast<int64_t>(s.block_table.size()) * options_.block_size < end) {
      throw std::invalid_argument("ModelRunner::execute: block table too short for the step");
    }
    for (int32_t b : s.block_table) {
      if (b < 0 || b >= cache_.num_blocks()) {
        throw std::invalid_argument("ModelRunner::execute: block id outside the KV cache");
      }
    }
    int64_t& row = s.is_prefill ? next_prefill : next_decode;
    (s.is_prefill ? prefill_ : decode_)
        .push_back(AttentionSequence{row, s.num_new_tokens, end, s.block_table});
    for (int p = s.num_computed_tokens; p < end; ++p, ++row) {
      token_ids_[static_cast<size_t>(row)] = toks[static_cast<size_t>(p)];
      positions_[static_cast<size_t>(row)] = p;
      slots_[static_cast<size_t>(row)] = cache_.slot(s.block_table, p);
    }
    if (s.samples) sample_rows_.push_back(row - 1);
  }
}

void ModelRunner::attention(int layer, std::span<const AttentionSequence> seqs, int64_t first_row,
                            int64_t num_rows) {
  if (num_rows == 0) return;
  const ModelSpec& m = weights_.spec;
  const int64_t q_dim = int64_t(m.num_heads) * m.head_dim;
  const int64_t kv_dim = int64_t(m.num_kv_heads) * m.head_dim;
  cache_.write(layer, k_.data() + first_row * kv_dim, v_.data() + first_row * kv_dim, kv_dim,
               slots_.data() + first_row, num_rows);
  paged_attention(q_.data(), q_dim, cache_, layer, seqs, m.num_heads,
                  1.0f / std::sqrt(static_cast<float>(m.head_dim)), attn_.data(), pool_);
}

void ModelRunner::layer_forward(int layer) {
  const ModelSpec& m = weights_.spec;
  const LayerWeights& w = weights_.layers[static_cast<size_t>(layer)];
  const int64_t rows = num_rows_, hidden = m.hidden_size, ffn = m.intermediate_size;
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
    rope_.apply(q_.data(), rows, q_dim, m.num_heads, positions_.data());
    rope_.apply(k_.data(), rows, kv_dim, m.num_kv_heads, positions_.data());
  }
  {
    OpTimer timer(prof, t, Op::kAttentionPrefill);
    attention(layer, prefill_, 0, num_prefill_rows_);
  }
  {
    OpTimer timer(prof, t, Op::kAttentionDecode);
    attention(layer, decode_, num_prefill_rows_, rows - num_prefill_rows_);
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
  if (num_rows_ == 0) return result_;
  {
    OpTimer timer(options_.profile, result_.op_s, Op::kNormRopeEmbed);
    embedding(weights_.embedding.data(), m.vocab_size, m.hidden_size, token_ids_.data(), num_rows_,
              x_.data());
  }
  for (int layer = 0; layer < m.num_layers; ++layer) layer_forward(layer);

  // Only the rows that sample need the final norm and the LM head.
  OpTimer timer(options_.profile, result_.op_s, Op::kLmHead);
  const int64_t hidden = m.hidden_size;
  for (size_t i = 0; i < sample_rows_.size(); ++i) {
    rms_norm(x_.data() + sample_rows_[i] * hidden, weights_.final_norm.data(),
             final_.data() + static_cast<int64_t>(i) * hidden, 1, hidden, weights_.rms_norm_eps);
  }
  if (result_.num_samples == 0) return result_;
  linear(final_.data(), weights_.output_matrix().data(), nullptr, result_.logits.data(),
         result_.num_samples, m.vocab_size, hidden, pool_);
  return result_;
}

}  // namespace servesim
