#include "models/cost_features.h"

#include "models/config_error.h"
#include "models/model_spec.h"

namespace servesim {
namespace {

using Names = std::span<const std::string_view>;

constexpr std::string_view kGemm[] = {"flops", "weight_bytes", "small_batch_flops",
                                      "gemv_weight_bytes"};
constexpr std::string_view kPrefill[] = {"flops", "kv_bytes", "seq_layers"};
constexpr std::string_view kDecode[] = {"kv_bytes", "seq_layers"};
constexpr std::string_view kNorm[] = {"elements", "layers"};
constexpr std::string_view kSampling[] = {"logits", "steps"};
constexpr std::string_view kOverhead[] = {"steps", "seqs"};

}  // namespace

std::span<const std::string_view> op_feature_names(Op op) {
  switch (op) {
    case Op::kQkv:
    case Op::kOProj:
    case Op::kMlp:
    case Op::kLmHead:
      return Names(kGemm);
    case Op::kAttentionPrefill:
      return Names(kPrefill);
    case Op::kAttentionDecode:
      return Names(kDecode);
    case Op::kNormRopeEmbed:
      return Names(kNorm);
    case Op::kSampling:
      return Names(kSampling);
    case Op::kOverhead:
      return Names(kOverhead);
    case Op::kComm:
    case Op::kCount:
      break;
  }
  return {};
}

bool is_gemm_op(Op op) {
  return op == Op::kQkv || op == Op::kOProj || op == Op::kMlp || op == Op::kLmHead;
}

bool op_feature_is_refinement(Op op, std::size_t k) {
  return is_gemm_op(op) && k >= 2;
}

double gemm_rows(Op op, const BatchShape& shape) {
  if (!is_gemm_op(op)) return 0;
  return static_cast<double>(op == Op::kLmHead ? shape.num_sampled : shape.num_tokens);
}

CostFeatures::CostFeatures(const ModelSpec& model, DType weight_dtype, DType kv_dtype) {
  if (model.is_moe() || model.is_mla() || model.sliding_window > 0) {
    throw ConfigError("cost_model: calibrated profiles cover dense Llama-family models; " +
                      model.name +
                      " has MoE, MLA or sliding-window layers (use the roofline cost model)");
  }
  layers_ = model.num_layers;
  hidden_ = model.hidden_size;
  q_dim_ = static_cast<double>(model.num_heads) * model.head_dim;
  kv_dim_ = static_cast<double>(model.num_kv_heads) * model.head_dim;
  intermediate_ = model.intermediate_size;
  vocab_ = model.vocab_size;
  weight_bytes_ = dtype_bytes(weight_dtype);
  kv_bytes_ = model.kv_bytes_per_token_per_layer(kv_dtype, 1);
}

OpFeatureValues CostFeatures::features(Op op, const BatchShape& s) const {
  const double t = static_cast<double>(s.num_tokens);
  const double l = layers_;
  auto gemm = [&](double rows, double in, double out) {
    const double present = rows > 0 ? 1.0 : 0.0;
    const double flops = 2 * rows * in * out * l;
    const double bytes = present * in * out * l * weight_bytes_;
    const bool small = rows >= 2 && rows <= kSmallBatchRows;
    return OpFeatureValues{{flops, bytes, small ? flops : 0.0, rows == 1 ? bytes : 0.0}, 4};
  };
  switch (op) {
    case Op::kQkv:
      return gemm(t, hidden_, q_dim_ + 2 * kv_dim_);
    case Op::kOProj:
      return gemm(t, q_dim_, hidden_);
    case Op::kMlp:
      return gemm(t, hidden_, 3 * intermediate_);
    case Op::kLmHead: {
      OpFeatureValues f = gemm(s.num_sampled, hidden_, vocab_);
      f.values[0] /= l;
      f.values[1] /= l;
      f.values[2] /= l;
      f.values[3] /= l;
      return f;
    }
    case Op::kAttentionPrefill:
      return {{4 * q_dim_ * s.prefill_attention_pairs * l,
               static_cast<double>(s.prefill_kv_tokens) * kv_bytes_ * l,
               static_cast<double>(s.num_prefill_seqs) * l},
              3};
    case Op::kAttentionDecode:
      return {{static_cast<double>(s.decode_context_tokens) * kv_bytes_ * l,
               static_cast<double>(s.num_decode_seqs) * l},
              2};
    case Op::kNormRopeEmbed:
      return {{t * hidden_ * l, t > 0 ? l : 0.0}, 2};
    case Op::kSampling:
      return {{s.num_sampled * vocab_, s.num_sampled > 0 ? 1.0 : 0.0}, 2};
    case Op::kOverhead:
      return {{1.0, static_cast<double>(s.num_seqs)}, 2};
    case Op::kComm:
    case Op::kCount:
      break;
  }
  return {};
}

}  // namespace servesim
