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

#include "models/batch_shape.h"
#include "models/op.h"

namespace servesim {

struct StepTime {
  double total_s = 0;                  // seconds; the sum of op_s and draft_s
  std::array<double, kNumOps> op_s{};  // seconds per Op, indexed by static_cast<size_t>(Op)
  // The model priced this step beyond the range it was measured on (a calibrated profile
  // with extrapolate): the caller counts such steps and says so.
  bool extrapolated = false;
  // Speculative decoding: seconds spent proposing the next drafts (SpeculativeCostModel),
  // after the verify pass the ops cover; 0 otherwise.
  double draft_s = 0;

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
