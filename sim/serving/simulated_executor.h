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
// Borrows the CostModel (must outlive the executor). Reuses its buffers: no allocation per
// step once they reached their peak size. Not thread-safe.
#pragma once

#include <vector>

#include "engine/sched/scheduler_output.h"
#include "models/batch_shape.h"
#include "models/cost_model.h"

namespace servesim {

class SimulatedExecutor {
 public:
  // sliding_window: the model's window in tokens (0 = none), for exact attention sums.
  SimulatedExecutor(const CostModel& cost_model, int sliding_window);

  // Seconds the step takes; also fills last_step().
  double step_time_s(const SchedulerOutput& output);

  // Breakdown of the last step: op times summed over micro-batches of one stage pass, and
  // total_s equal to what step_time_s returned.
  const StepTime& last_step() const { return last_; }

 private:
  const CostModel& cost_;
  int stages_;
  BatchShape whole_;
  std::vector<BatchShape> micro_;
  std::vector<double> stage_free_s_;  // per stage: when it finishes its current micro-batch
  StepTime last_;
};

}  // namespace servesim
