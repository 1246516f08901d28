// CostModel: the seam between the simulator and whatever predicts how long one forward step
// of a model replica takes (RooflineCostModel from first principles, CalibratedCostModel from
// a fitted profile). The simulator calls predict() once per simulated step, so
// implementations must be O(1) in the batch: everything they need is in the BatchShape.
//
// Implementations are immutable after construction and safe to call from several threads.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "models/batch_shape.h"

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

struct StepTime {
  double total_s = 0;                  // seconds; the sum of op_s
  std::array<double, kNumOps> op_s{};  // seconds per Op, indexed by static_cast<size_t>(Op)

  double operator[](Op op) const { return op_s[static_cast<std::size_t>(op)]; }
};

class CostModel {
 public:
  virtual ~CostModel() = default;

  // Time of one forward step of the whole replica for tensor parallelism; with pipeline
  // parallelism, of ONE pipeline stage — the slowest — with the LM head and sampling
  // included (they run on the last stage) so the figure is conservative.
  virtual StepTime predict(const BatchShape& shape) const = 0;

  // Pipeline stages a micro-batch passes through (1 without pipeline parallelism).
  virtual int num_stages() const = 0;

  // Seconds to send the activations of num_tokens tokens from one stage to the next.
  virtual double stage_transfer_s(int64_t num_tokens) const = 0;
};

}  // namespace servesim
