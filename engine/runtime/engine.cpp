#include "engine/runtime/engine.h"

#include <stdexcept>
#include <string>

#include "models/config_error.h"

namespace servesim {

Engine::Engine(const Weights& weights, const EngineOptions& options)
    : weights_(weights),
      options_(options),
      scheduler_(options.scheduler),
      runner_(weights,
              ModelRunnerOptions{options.scheduler.num_gpu_blocks, options.scheduler.block_size,
                                 options.num_threads, options.profile}),
      epoch_(Clock::now()) {}

bool Engine::add_request(Request request, const SamplingParams& sampling) {
  for (int32_t t : request.prompt_token_ids) {
    if (t < 0 || t >= weights_.spec.vocab_size) {
      throw ConfigError("request " + std::to_string(request.id) + ": prompt token " +
                        std::to_string(t) + " outside the vocabulary of " +
                        std::to_string(weights_.spec.vocab_size) + " of model '" +
                        weights_.spec.name + "'");
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
  return true;
}

const StepTrace& Engine::step() {
  trace_.start_s = seconds_since_start();
  trace_.profiled = options_.profile;
  const Clock::time_point schedule_start = Clock::now();
  const SchedulerOutput& out = scheduler_.schedule();
  const double schedule_s = std::chrono::duration<double>(Clock::now() - schedule_start).count();

  tokens_.clear();
  for (const ScheduledSequence& s : out.sequences) {
    const Sequence* seq = scheduler_.find(s.request_id);
    if (seq == nullptr) throw std::logic_error("Engine: scheduled request is not live");
    tokens_.emplace_back(seq->tokens);
  }
  const RunnerOutput& res = runner_.execute(out, tokens_);
  last_output_ = &res;

  trace_.op_s = res.op_s;
  const Clock::time_point sample_start = Clock::now();
  result_.sampled_token_ids.clear();
  trace_.sequences.clear();
  int sample = 0;
  for (const ScheduledSequence& s : out.sequences) {
    int32_t token = -1;
    if (s.samples) {
      token = samplers_.at(s.request_id).sample(res.row(sample++, weights_.spec.vocab_size));
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
  for (const FinishedRequest& f : scheduler_.finished()) samplers_.erase(f.id);
  trace_.end_s = seconds_since_start();
  if (trace_out_ != nullptr) *trace_out_ << trace_.to_json_line() << '\n';
  return trace_;
}

}  // namespace servesim
