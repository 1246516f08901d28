// Runner: the seam between the Engine and a backend's forward pass. One execute() is one
// forward pass over everything a SchedulerOutput schedules — prefill chunks and decodes in one
// flattened batch — writing keys and values into the backend's paged KV cache (sized by the
// scheduler's num_gpu_blocks and block_size) and returning the logits of the sequences that
// sample. ModelRunner (CPU, fp32) and CudaModelRunner (GPU, bf16) implement it.
//
// Ownership and thread-safety are the implementation's; the Engine owns one runner and drives
// it from one thread.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/sched/scheduler_output.h"
#include "models/model_spec.h"
#include "models/op.h"

namespace servesim {

using OpSeconds = std::array<double, kNumOps>;  // seconds per Op (models/op.h)

struct RunnerOutput {
  // Rows with logits: one per entry of the SchedulerOutput with samples == true, 1 +
  // num_spec_tokens for a speculative verify (its positions in order).
  int num_samples = 0;
  std::vector<float> logits;  // (num_samples, vocab), in the order of those entries
  OpSeconds op_s{};           // all zero unless profiling

  std::span<const float> row(int sample, int vocab) const {
    return {logits.data() + static_cast<size_t>(sample) * vocab, static_cast<size_t>(vocab)};
  }
  // The greedy token of row `sample` (lowest id on ties), as the engine's sampler picks it at
  // temperature 0: what calibration times as the sampling op.
  int32_t greedy_token(int sample, int vocab) const;
};

class Runner {
 public:
  virtual ~Runner() = default;

  // The model the runner computes (vocabulary, name, shapes).
  virtual const ModelSpec& spec() const = 0;

  // Runs the step. tokens[i] is the full token list (prompt then outputs) of
  // output.sequences[i]; the step computes tokens [num_computed_tokens, + num_new_tokens).
  // The returned reference is valid until the next execute(). Throws ConfigError for a
  // position beyond the model's range, std::invalid_argument for inconsistent inputs.
  virtual const RunnerOutput& execute(const SchedulerOutput& output,
                                      std::span<const std::span<const int32_t>> tokens) = 0;
};

}  // namespace servesim
