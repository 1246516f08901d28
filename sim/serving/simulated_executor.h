// SimulatedExecutor: the simulator's stand-in for the model runner. Given the scheduler's
// output for one step it answers how long the step takes, from a CostModel.
//
// Pipeline parallelism is modelled as stages with micro-batches in flight: the step's
// sequences are split into up to num_stages micro-batches (balanced by tokens), each passes
// through every stage in order with an activation transfer between stages, and a stage works
// on one micro-batch at a time; the step ends when the last micro-batch leaves the last stage.
// Fill and drain bubbles are therefore part of the step time. The host-side step overhead is
// paid once per step, not per micro-batch.
//
// Speculative decoding (enable_speculation): each verified sequence's 1 + k tokens are in the
// batch shape the CostModel prices, the drafting for the next step is added by the
// SpeculativeCostModel, drafts_follow() draws whether n-gram lookup finds drafts for a
// sequence's next step (its match_rate) and accepted_drafts() how many drafts it keeps,
// deterministically from (seed, request stream, position): the same seed gives the same run
// byte for byte.
//
// Asynchronous scheduling (enable_async_scheduling, vLLM --async-scheduling): the host
// prepares step N+1 while the GPU runs step N, so the overlapping share of its host work
// (StepTime's kOverhead) costs only what the GPU work does not cover, and the rest stays in
// series: host_overlap 1 makes a step last the longer of its GPU and host work.
//
// Borrows the CostModel (must outlive the executor). Reuses its buffers: no allocation per
// step once they reached their peak size. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/sched/scheduler_output.h"
#include "models/batch_shape.h"
#include "models/cost_model.h"
#include "models/speculative_cost_model.h"

namespace servesim {

class SimulatedExecutor {
 public:
  // sliding_window: the model's window in tokens (0 = none), for exact attention sums.
  SimulatedExecutor(const CostModel& cost_model, int sliding_window);

  // Turns speculative decoding on: drafts priced by `cost`, acceptance drawn from `seed`.
  void enable_speculation(std::shared_ptr<const SpeculativeCostModel> cost, uint64_t seed);
  bool speculative() const { return spec_ != nullptr; }
  // host_overlap: the fraction of each step's host work that can run behind its GPU work,
  // in [0, 1].
  void enable_async_scheduling(double host_overlap) { host_overlap_ = host_overlap; }
  int num_speculative_tokens() const { return spec_ ? spec_->config().num_speculative_tokens : 0; }

  // Seconds the step takes; also fills last_step().
  double step_time_s(const SchedulerOutput& output);

  // How many of num_spec drafts verified at token positions first_position... of request
  // stream `stream` are accepted: drafts are accepted in order, draft i with its conditional
  // probability, until the first rejection. REQUIRES: speculative().
  int accepted_drafts(uint64_t stream, uint64_t first_position, int num_spec) const;
  // Whether the draft proposer has drafts for the step after the token at `position` of
  // `stream` (always, but for n-gram lookup with match_rate < 1). REQUIRES: speculative().
  bool drafts_follow(uint64_t stream, uint64_t position) const;

  // Breakdown of the last step: op times summed over micro-batches of one stage pass, and
  // total_s equal to what step_time_s returned.
  const StepTime& last_step() const { return last_; }

 private:
  void add_draft_time(const SchedulerOutput& output);
  // Under asynchronous scheduling, keeps of last_'s host overhead only what the GPU work of
  // the step does not hide.
  void overlap_host_work();

  const CostModel& cost_;
  int stages_;
  BatchShape whole_;
  std::vector<BatchShape> micro_;
  std::vector<double> stage_free_s_;  // per stage: when it finishes its current micro-batch
  std::shared_ptr<const SpeculativeCostModel> spec_;
  uint64_t spec_seed_ = 0;
  BatchShape proposers_;  // one decode row per sampling sequence, for the draft cost
  StepTime last_;
  // Set: asynchronous scheduling, with this fraction of the host work that the GPU's can hide.
  std::optional<double> host_overlap_;
};

}  // namespace servesim
