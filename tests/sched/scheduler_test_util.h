// Helpers of the scheduler tests that drive whole steps (scheduler_kv_transfer_test,
// scheduler_offload_test): a request of consecutive token ids and one schedule() + update().
// Header-only, test code; not thread-safe.
#pragma once

#include <cstdint>
#include <numeric>

#include "engine/sched/scheduler.h"

namespace servesim::testing {

// Tokens first_token, first_token + 1, ...: requests with the same first token share their
// prompt's prefix. ignore_eos, so each generates max_output tokens.
inline Request consecutive_request(uint64_t id, int prompt_len, int max_output,
                                   int32_t first_token) {
  Request r;
  r.id = id;
  r.prompt_token_ids.resize(static_cast<size_t>(prompt_len));
  std::iota(r.prompt_token_ids.begin(), r.prompt_token_ids.end(), first_token);
  r.max_output_tokens = max_output;
  r.ignore_eos = true;
  return r;
}

// One schedule() + update() sampling `token` for every sampling sequence; returns the output
// as it was before update() (sequences, kv_loads, stores).
inline SchedulerOutput step_sampling(Scheduler& s, int32_t token = 7) {
  const SchedulerOutput& out = s.schedule();
  SchedulerOutput copy = out;
  StepResult r;
  for (const ScheduledSequence& e : out.sequences) {
    if (e.samples) r.sampled_token_ids.push_back(token);
  }
  s.update(out, r);
  return copy;
}

}  // namespace servesim::testing
