// StepTrace: what the engine records of one step — when it ran, which sequences it computed
// and how many tokens each, and (when profiling) the seconds each op took. One JSON line per
// step is what calibration fits the cost model to.
//
// Times are steady-clock seconds since the engine started. Plain value; thread-safe as any.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/runtime/model_runner.h"

namespace servesim {

struct StepSequenceTrace {
  uint64_t request_id = 0;
  int new_tokens = 0;      // tokens computed this step
  int context_tokens = 0;  // tokens already in the KV cache before the step (BatchShape's context)
  bool prefill = false;    // ScheduledSequence::is_prefill
  int32_t token = -1;      // the token sampled this step, -1 when none
};

struct StepTrace {
  uint64_t step = 0;  // SchedulerOutput::step
  double start_s = 0;
  double end_s = 0;
  int num_preempted = 0;
  std::vector<StepSequenceTrace> sequences;
  bool profiled = false;
  OpSeconds op_s{};  // per op (op_name keys in JSON); meaningful when profiled

  // {"step":3,"start_s":..,"end_s":..,"preempted":0,"seqs":[{"id":1,"new":1,"ctx":17,
  //  "prefill":false,"token":42},...],"ops_s":{"qkv":..,...}} — ops_s only when profiled.
  // No trailing newline.
  std::string to_json_line() const;
};

}  // namespace servesim
