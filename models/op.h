// Op: the parts of one forward step that servesim times and prices — what a CostModel's
// StepTime breaks down into, what the engine's runners profile, and the columns of the
// calibration profiles. Plain enum and constants; thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace servesim {

// Where a step's time goes. Each op sums over all layers of the stage predict() covers.
enum class Op {
  kQkv,               // QKV projection (MLA: query and latent KV projections)
  kAttentionPrefill,  // attention of prompt tokens (chunks included), KV-cache writes
  kAttentionDecode,   // attention of decode tokens over their context
  kOProj,             // attention output projection
  kMlp,               // feed-forward: gate/up, activation, down (MoE: router + experts)
  kLmHead,            // final norm and LM head, for sampled rows only
  kNormRopeEmbed,     // embedding lookup, RMSNorms, rotary embedding
  kSampling,          // softmax and token sampling over the logits
  kComm,              // tensor-parallel all-reduces
  kOverhead,          // host-side per-step overhead (scheduler, input preparation)
  kCount
};

inline constexpr std::size_t kNumOps = static_cast<std::size_t>(Op::kCount);

// Every Op in enum order (index == static_cast<size_t>(op)), for range-for over the ops.
inline constexpr std::array<Op, kNumOps> kAllOps = {
    Op::kQkv,    Op::kAttentionPrefill, Op::kAttentionDecode, Op::kOProj, Op::kMlp,
    Op::kLmHead, Op::kNormRopeEmbed,    Op::kSampling,        Op::kComm,  Op::kOverhead};
static_assert(
    [] {
      for (std::size_t i = 0; i < kNumOps; ++i) {
        if (static_cast<std::size_t>(kAllOps[i]) != i) return false;
      }
      return true;
    }(),
    "kAllOps lists every Op once, in enum order");

// Short snake_case name ("qkv", "attention_prefill", ...) for reports and CSV headers.
std::string_view op_name(Op op);

}  // namespace servesim
