#include "engine/runtime/engine.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "engine/runtime/shape_batch.h"
#include "models/config_error.h"

namespace servesim {
namespace {

RunnerOptions runner_options(const EngineOptions& o) {
  return {.num_blocks = o.scheduler.num_gpu_blocks,
          .block_size = o.scheduler.block_size,
          .num_threads = o.num_threads,
          .profile = o.profile};
}

// Host weights on options.backend; the CPU runner borrows them (an owner-less shared_ptr).
std::unique_ptr<Runner> make_runner(const Weights& weights, const EngineOptions& o) {
  const std::shared_ptr<const Weights> borrowed(std::shared_ptr<const Weights>(), &weights);
  return upload_weights(o.backend, borrowed)->make_runner(runner_options(o));
}

}  // namespace

// The scheduler is built first so that a bad scheduler config is reported as such, before the
// runner sizes its cache from it.
Engine::Engine(const Weights& weights, const EngineOptions& options)
    : options_(options),
      scheduler_(options.scheduler),
      runner_(make_runner(weights, options)),
      epoch_(Clock::now()) {}

Engine::Engine(const BackendWeights& weights, const EngineOptions& options)
    : options_(options),
      scheduler_(options.scheduler),
      runner_(weights.make_runner(runner_options(options))),
      epoch_(Clock::now()) {}

Engine::Engine(std::unique_ptr<Runner> runner, const EngineOptions& options)
    : options_(options),
      scheduler_(options.scheduler),
      runner_(std::move(runner)),
      epoch_(Clock::now()) {}

bool Engine::add_request(Request request, const SamplingParams& sampling, int min_tokens) {
  const ModelSpec& spec = runner_->spec();
  for (int32_t t : request.prompt_token_ids) {
    if (t < 0 || t >= spec.vocab_size) {
      throw ConfigError("request " + std::to_string(request.id) + ": prompt token " +
                        std::to_string(t) + " outside the vocabulary of " +
                        std::to_string(spec.vocab_size) + " of model '" + spec.name + "'");
    }
  }
  Sampler sampler = [&] {
    try {
      return Sampler(sampling);
    } catch (const std::invalid_argument& e) {
      throw ConfigError("request " + std::to_string(request.id) + ": " + e.what());
    }
  }();
  const uint64_t id = request.id;
  if (!scheduler_.add_request(std::move(request))) return false;
  samplers_.insert_or_assign(id, std::move(sampler));
  if (min_tokens > 0) min_tokens_.insert_or_assign(id, min_tokens);
  return true;
}

bool Engine::abort(uint64_t request_id) {
  if (!scheduler_.abort(request_id)) return false;
  samplers_.erase(request_id);
  min_tokens_.erase(request_id);
  return true;
}

std::span<const float> Engine::mask_stop_tokens(uint64_t request_id,
                                                std::span<const float> logits) {
  const auto it = min_tokens_.find(request_id);
  if (it == min_tokens_.end()) return logits;
  const Sequence* seq = scheduler_.find(request_id);
  if (seq->ignore_eos || seq->num_output_tokens() >= it->second) return logits;
  masked_logits_.assign(logits.begin(), logits.end());
  for (int32_t t : seq->stop_token_ids) {
    if (t >= 0 && t < static_cast<int32_t>(masked_logits_.size())) {
      masked_logits_[t] = -std::numeric_limits<float>::infinity();
    }
  }
  return masked_logits_;
}

void Engine::warm_up() {
  const SchedulerConfig& c = options_.scheduler;
  const int64_t room = (c.num_gpu_blocks - 1) * c.block_size;
  const int n = static_cast<int>(
      std::min<int64_t>({int64_t{c.max_num_batched_tokens}, int64_t{c.max_model_len}, room}));
  if (n < 1) return;
  // One prompt of n tokens, as the profiler builds its steps; its keys land in blocks the
  // scheduler has not handed out yet and are overwritten before anything reads them.
  const ShapeBatch batch(ProfileShape{ShapeSequence{n, 0, true}}, c.block_size,
                         runner_->spec().vocab_size);
  runner_->execute(batch.output(), batch.tokens());
}

const StepTrace& Engine::step() {
  trace_.start_s = seconds_since_start();
  trace_.profiled = options_.profile;
  const Clock::time_point schedule_start = Clock::now();
  const SchedulerOutput& out = scheduler_.schedule();
  const double schedule_s = std::chrono::duration<double>(Clock::now() - schedule_start).count();
  if (out.empty()) {
    // A static batch gathering: the scheduler still expects its update, the model nothing.
    result_.sampled_token_ids.clear();
    trace_.sequences.clear();
    scheduler_.update(out, result_);
    return trace_;
  }

  tokens_.clear();
  for (const ScheduledSequence& s : out.sequences) {
    const Sequence* seq = scheduler_.find(s.request_id);
    if (seq == nullptr) throw std::logic_error("Engine: scheduled request is not live");
    tokens_.emplace_back(seq->tokens);
  }
  const RunnerOutput& res = runner_->execute(out, tokens_);
  last_output_ = &res;

  trace_.op_s = res.op_s;
  const Clock::time_point sample_start = Clock::now();
  result_.sampled_token_ids.clear();
  trace_.sequences.clear();
  int sample = 0;
  for (const ScheduledSequence& s : out.sequences) {
    int32_t token = -1;
    if (s.samples) {
      const std::span<const float> logits =
          mask_stop_tokens(s.request_id, res.row(sample++, runner_->spec().vocab_size));
      token = samplers_.at(s.request_id).sample(logits);
      result_.sampled_token_ids.push_back(token);
    }
    trace_.sequences.push_back(StepSequenceTrace{s.request_id, s.num_new_tokens,
                                                 s.num_computed_tokens, s.is_prefill, token});
  }
  trace_.op_s[static_cast<size_t>(Op::kSampling)] =
      std::chrono::duration<double>(Clock::now() - sample_start).count();
  trace_.op_s[static_cast<size_t>(Op::kOverhead)] += schedule_s;
  trace_.step = out.step;
  trace_.num_preempted = static_cast<int>(out.preempted_ids.size());

  scheduler_.update(out, result_);
  if (callback_) {
    for (const StepSequenceTrace& s : trace_.sequences) {
      if (s.token >= 0) callback_(s.request_id, s.token);
    }
  }
  for (const FinishedRequest& f : scheduler_.finished()) {
    samplers_.erase(f.id);
    min_tokens_.erase(f.id);
  }
  trace_.end_s = seconds_since_start();
  if (trace_out_ != nullptr) *trace_out_ << trace_.to_json_line() << '\n';
  return trace_;
}

}  // namespace servesim
