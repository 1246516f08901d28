// CostFeatures: the physical quantities a calibrated cost model is linear in — per op, the
// FLOPs, bytes and counts one forward step of a dense Llama-family model implies for a
// BatchShape. The fitter (calibration/) and CalibratedCostModel share this one definition,
// so a profile's coefficients always multiply the features they were fitted on.
//
// Per op, with T tokens in the step, S sampled rows, P prefill and D decode sequences, L
// layers, H hidden, Q = heads * head_dim, K = kv_heads * head_dim, I intermediate, V vocab,
// w weight bytes per parameter and c KV-cache bytes per token and layer:
//   qkv               flops 2T·H·(Q+2K)·L        weight_bytes H·(Q+2K)·L·w   (+ the two below)
//   o_proj            flops 2T·Q·H·L             weight_bytes Q·H·L·w
//   mlp               flops 6T·H·I·L             weight_bytes 3·H·I·L·w
//   lm_head           flops 2S·H·V               weight_bytes H·V·w (0 when S = 0)
// Every GEMM also has small_batch_flops (its FLOPs when it has 2..kSmallBatchRows rows, else 0)
// and gemv_weight_bytes (its weight bytes when it has one row, else 0): GEMMs run on three
// kinds of kernel by their rows — a GEMV that only streams the weights, skinny dot products,
// a blocked GEMM (the CPU engine's linear(); cuBLAS picks alike) — each at its own rate.
//   attention_prefill flops 4·Q·pairs·L          kv_bytes prefill_kv_tokens·c·L   seq_layers P·L
//   attention_decode  kv_bytes decode_ctx·c·L    seq_layers D·L
//   norm_rope_embed   elements T·H·L             layers L
//   sampling          logits S·V                 steps 1 (0 when S = 0)
//   overhead          steps 1                    seqs P+D
//   comm              (none: a profile covers one device)
// A coefficient is seconds per unit of its feature; its inverse is a rate (FLOP/s, byte/s).
// Stateless; thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

#include "models/batch_shape.h"
#include "models/cost_model.h"
#include "models/dtype.h"

namespace servesim {

struct ModelSpec;

inline constexpr std::size_t kMaxOpFeatures = 4;

// Rows up to which a GEMM counts as a small batch; the CPU engine's linear() switches from
// dot products to Eigen's GEMM above it (kernels/linear.cpp, kSkinnyRows).
inline constexpr double kSmallBatchRows = 16;

struct OpFeatureValues {
  std::array<double, kMaxOpFeatures> values{};  // units as named by op_feature_names
  std::size_t size = 0;
};

// Names of the features of `op`, in coefficient order ("flops", "weight_bytes", ...).
std::span<const std::string_view> op_feature_names(Op op);

// Whether feature k of `op` refines others (a GEMM's small_batch_flops, gemv_weight_bytes): a
// fit may leave it out when the profiled shapes cannot tell it apart from them.
bool op_feature_is_refinement(Op op, std::size_t k);

// qkv, o_proj, mlp and lm_head: the ops that are matrix multiplications by the weights.
bool is_gemm_op(Op op);

// Rows `op` multiplies in `shape` when it is a GEMM — the step's tokens, lm_head's sampled
// rows — the key of its RowScale; 0 for ops that are not GEMMs.
double gemm_rows(Op op, const BatchShape& shape);

class CostFeatures {
 public:
  // Throws ConfigError when the model is not a dense, full-attention Llama-family decoder
  // (MoE, MLA and sliding windows have no calibrated features yet).
  CostFeatures(const ModelSpec& model, DType weight_dtype, DType kv_dtype);

  OpFeatureValues features(Op op, const BatchShape& shape) const;

 private:
  double layers_ = 0;
  double hidden_ = 0;
  double q_dim_ = 0;   // heads * head_dim
  double kv_dim_ = 0;  // kv_heads * head_dim
  double intermediate_ = 0;
  double vocab_ = 0;
  double weight_bytes_ = 0;  // per parameter
  double kv_bytes_ = 0;      // per token and layer, keys and values
};

}  // namespace servesim
