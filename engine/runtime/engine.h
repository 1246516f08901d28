// Engine: servesim's inference engine loop — the shared Scheduler plus a Runner of either
// backend (engine/runtime/backend.h: the CPU ModelRunner or the CudaModelRunner), as
// nano-vllm's step: schedule(), run the model, sample, update(). Sampled tokens stream to a
// callback; each step can be written as one JSON line (StepTrace) for calibration.
//
//   Engine engine(weights, options);
//   engine.set_token_callback([](uint64_t id, int32_t tok) { ... });
//   engine.add_request(std::move(req), SamplingParams{0.7f, 0.9f, seed});
//   while (engine.has_unfinished()) engine.step();
//
// Ownership: borrows host `weights` (CPU backend), shares BackendWeights; owns the scheduler,
// the runner and one Sampler per live request. Not thread-safe: one thread drives it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/sampling_params.h"
#include "engine/runtime/backend.h"
#include "engine/runtime/runner.h"
#include "engine/runtime/step_trace.h"
#include "engine/runtime/weights.h"
#include "engine/sched/ngram_proposer.h"
#include "engine/sched/scheduler.h"
#include "kernels/sampler.h"
#include "models/speculative_config.h"

namespace servesim {

struct EngineOptions {
  // Scheduling and KV-cache size: num_gpu_blocks and block_size size the runner's cache.
  SchedulerConfig scheduler;
  int num_threads = 1;   // CPU threads of the runner, the caller included (CPU backend)
  bool profile = false;  // per-op times in StepTrace (a clock read, or CUDA events, per op)
  Backend backend = Backend::kCpu;
  // Speculative decoding: only "ngram" runs in the engine (prompt lookup, NgramProposer),
  // verified greedily, so outputs are exactly plain greedy decoding's; scheduler's
  // num_speculative_tokens must equal its k. Requests then need temperature 0, no min_tokens.
  std::optional<SpeculativeConfig> speculative = std::nullopt;
};

class Engine {
 public:
  using TokenCallback = std::function<void(uint64_t request_id, int32_t token)>;

  // Runs `weights` on options.backend (the CUDA backend uploads them as bf16). Throws
  // ConfigError for a bad scheduler config or runner options, or a backend that cannot run
  // here (require_backend).
  Engine(const Weights& weights, const EngineOptions& options);
  // Runs weights already on a backend (load_weights), sharing them; options.backend is
  // theirs then.
  Engine(const BackendWeights& weights, const EngineOptions& options);
  // Drives a runner built by the caller (e.g. a CudaModelRunner over weights drawn on the
  // device); options.backend and num_threads are the runner's business then.
  Engine(std::unique_ptr<Runner> runner, const EngineOptions& options);

  // Speculative decoding: drafts verified and accepted so far (vLLM's spec_decode counters).
  int64_t num_draft_tokens() const { return scheduler_.stats().num_draft_tokens; }
  int64_t num_accepted_tokens() const { return scheduler_.stats().num_accepted_tokens; }

  // Queues a request; false when the scheduler rejected it (see finished() for the reason).
  // Until it has `min_tokens` outputs its stop tokens cannot be sampled (their logits are
  // masked, as vLLM's min_tokens). Throws ConfigError for a prompt token outside the
  // vocabulary or bad sampling parameters.
  bool add_request(Request request, const SamplingParams& sampling = {}, int min_tokens = 0);
  // Finishes a live request with kAbort and frees its KV blocks (Scheduler::abort); it is
  // listed in finished() until the next step(). False when the id is not live.
  bool abort(uint64_t request_id);

  void set_token_callback(TokenCallback callback) { callback_ = std::move(callback); }
  // Writes one StepTrace JSON line per step to `out` (nullptr: none). Borrowed.
  void set_trace_stream(std::ostream* out) { trace_out_ = out; }

  // One untimed forward pass of a max_num_batched_tokens-token prompt (capped by
  // max_model_len and the KV cache) straight through the runner, as vLLM's start-up profile
  // run: activation buffers are allocated and touched before the first request, so its
  // latency is the model's, not the allocator's. Leaves the scheduler untouched and writes
  // only KV blocks no request holds yet (no prefix-cache entry refers to them). Call before
  // adding requests.
  void warm_up();

  // One step. The reference is valid until the next step(). When nothing is runnable (a
  // static batch still gathering its members) the model does not run, no trace line is
  // written and the trace has no sequences; the caller waits for arrivals or releases the
  // batch.
  const StepTrace& step();

  // Static batching: the caller's gather timeout expired (or, with no_more_arrivals, nothing
  // else will arrive), so the next step starts a batch with what is waiting. As
  // Scheduler::release_static_batch; the gather timer is the caller's, like the simulator's.
  void release_static_batch(bool no_more_arrivals = false) {
    scheduler_.release_static_batch(no_more_arrivals);
  }

  bool has_unfinished() const { return scheduler_.has_unfinished(); }
  // As Scheduler::finished(): requests that left in the last step (and rejections since).
  const std::vector<FinishedRequest>& finished() const { return scheduler_.finished(); }
  const Scheduler& scheduler() const { return scheduler_; }
  const Runner& runner() const { return *runner_; }
  // The logits of the last step, one row per sampled sequence (tests compare them).
  const RunnerOutput& last_output() const { return *last_output_; }

 private:
  using Clock = std::chrono::steady_clock;
  // The logits with the request's stop tokens at -inf while it has fewer than its min_tokens
  // outputs; `logits` itself otherwise.
  std::span<const float> mask_stop_tokens(uint64_t request_id, std::span<const float> logits);
  // Samples every sampling entry's token into result_ and trace_ (plain decoding).
  void sample(const SchedulerOutput& out, const RunnerOutput& res);
  // Speculative decoding: greedy verification of each entry's drafts (the longest prefix the
  // model agrees with, plus its next token), then the next drafts by prompt lookup.
  void sample_speculative(const SchedulerOutput& out, const RunnerOutput& res);
  // After update(): the tokens each entry kept, to the token callback.
  void emit_speculative_tokens();
  // Checks options_.speculative against the scheduler and builds the proposer.
  void init_speculative();
  double seconds_since_start() const {
    return std::chrono::duration<double>(Clock::now() - epoch_).count();
  }

  EngineOptions options_;
  Scheduler scheduler_;
  std::unique_ptr<Runner> runner_;
  std::unordered_map<uint64_t, Sampler> samplers_;
  std::unordered_map<uint64_t, int> min_tokens_;  // requests with min_tokens > 0 only
  std::vector<float> masked_logits_;              // (vocab) scratch of the min_tokens mask
  TokenCallback callback_;
  std::ostream* trace_out_ = nullptr;
  Clock::time_point epoch_;
  RunnerOutput empty_output_;
  const RunnerOutput* last_output_ = &empty_output_;
  StepTrace trace_;
  StepResult result_;
  std::vector<std::span<const int32_t>> tokens_;  // per scheduled entry

  // Speculative decoding.
  std::optional<NgramProposer> proposer_;
  std::vector<std::vector<int32_t>> verify_tokens_;  // per verify entry: tokens + drafts
  std::vector<int32_t> lookup_;                      // a sequence's tokens after the step
  struct Emitted {
    uint64_t request_id;
    int num_outputs_before;  // output tokens before the step
    size_t first;            // into result_.sampled_token_ids
    int count;               // tokens sampled
  };
  std::vector<Emitted> emitted_;
};

}  // namespace servesim
