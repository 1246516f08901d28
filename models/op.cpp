#include "models/op.h"

namespace servesim {

std::string_view op_name(Op op) {
  switch (op) {
    case Op::kQkv:
      return "qkv";
    case Op::kAttentionPrefill:
      return "attention_prefill";
    case Op::kAttentionDecode:
      return "attention_decode";
    case Op::kOProj:
      return "o_proj";
    case Op::kMlp:
      return "mlp";
    case Op::kLmHead:
      return "lm_head";
    case Op::kNormRopeEmbed:
      return "norm_rope_embed";
    case Op::kSampling:
      return "sampling";
    case Op::kComm:
      return "comm";
    case Op::kOverhead:
      return "overhead";
    case Op::kCount:
      break;
  }
  return "unknown";
}

}  // namespace servesim
