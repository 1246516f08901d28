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
      epoch_(Clock::now()) {
  init_speculative();
}

Engine::Engine(const BackendWeights& weights, const EngineOptions& options)
    : options_(options),
      scheduler_(options.scheduler),
      runner_(weights.make_runner(runner_options(options))),
      epoch_(Clock::now()) {
  init_speculative();
}

Engine::Engine(std::unique_ptr<Runner> runner, const EngineOptions& options)
    : options_(options),
      scheduler_(options.scheduler),
      runner_(std::move(runner)),
      epoch_(Clock::now()) {
  init_speculative();
}

void Engine::init_speculative() {
  const int k = options_.scheduler.num_speculative_tokens;
  if (!options_.speculative) {
    if (k > 0)
      throw ConfigError("num_speculative_tokens " + std::to_string(k) +
                        " without a speculative config: the engine has no proposer");
    return;
  }
  const SpeculativeConfig& spec = *options_.speculative;
  if (spec.method != SpeculativeMethod::kNgram) {
    throw ConfigError("speculative.method " + std::string(speculative_method_name(spec.method)) +
                      ": the engine runs ngram (prompt lookup) only; simulate the others");
  }
  if (spec.num_speculative_tokens != k) {
    throw ConfigError("speculative.num_speculative_tokens " +
                      std::to_string(spec.num_speculative_tokens) +
                      " differs from the scheduler's " + std::to_string(k));
  }
  proposer_.emplace(spec.prompt_lookup_min, spec.prompt_lookup_max, k);
}

bool Engine::add_request(Request request, const SamplingParams& sampling, int min_tokens) {
  const ModelSpec& spec = runner_->spec();
  if (proposer_ && (sampling.temperature != 0 || min_tokens > 0)) {
    throw ConfigError("request " + std::to_string(request.id) +
                      ": the engine verifies speculative drafts greedily; use temperature 0 "
                      "and no min_tokens, or drop engine.speculative");
  }
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
  size_t verifies = 0;
  for (size_t i = 0; i < out.sequences.size(); ++i) {
    const ScheduledSequence& s = out.sequences[i];
    const Sequence* seq = scheduler_.find(s.request_id);
    if (seq == nullptr) throw std::logic_error("Engine: scheduled request is not live");
    if (s.num_spec_tokens == 0) {
      tokens_.emplace_back(seq->tokens);
      continue;
    }
    // The runner reads the drafts as the tokens after the known ones.
    if (verify_tokens_.size() <= verifies) verify_tokens_.emplace_back();
    std::vector<int32_t>& t = verify_tokens_[verifies++];
    const std::span<const int32_t> drafts = scheduler_.scheduled_spec_tokens(i);
    t.assign(seq->tokens.begin(), seq->tokens.end());
    t.insert(t.end(), drafts.begin(), drafts.end());
    tokens_.emplace_back(t);
  }
  const RunnerOutput& res = runner_->execute(out, tokens_);
  last_output_ = &res;

  trace_.op_s = res.op_s;
  const Clock::time_point sample_start = Clock::now();
  trace_.sequences.clear();
  if (proposer_) {
    sample_speculative(out, res);
  } else {
    sample(out, res);
  }
  trace_.op_s[static_cast<size_t>(Op::kSampling)] =
      std::chrono::duration<double>(Clock::now() - sample_start).count();
  trace_.op_s[static_cast<size_t>(Op::kOverhead)] += schedule_s;
  trace_.step = out.step;
  trace_.num_preempted = static_cast<int>(out.preempted_ids.size());

  scheduler_.update(out, result_);
  if (proposer_) {
    emit_speculative_tokens();
  } else if (callback_) {
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

void Engine::sample(const SchedulerOutput& out, const RunnerOutput& res) {
  result_.sampled_token_ids.clear();
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
}

void Engine::sample_speculative(const SchedulerOutput& out, const RunnerOutput& res) {
  result_.clear();
  emitted_.clear();
  const int vocab = runner_->spec().vocab_size;
  int row = 0;
  for (size_t i = 0; i < out.sequences.size(); ++i) {
    const ScheduledSequence& s = out.sequences[i];
    int32_t first_token = -1;
    if (s.samples) {
      Sampler& sampler = samplers_.at(s.request_id);
      const std::span<const int32_t> drafts = scheduler_.scheduled_spec_tokens(i);
      const size_t first = result_.sampled_token_ids.size();
      // Row j holds the model's token after draft j (row 0: after the last known token). At
      // temperature 0 a draft is accepted exactly when the model would have sampled it.
      int n = 0;
      for (int j = 0; j <= s.num_spec_tokens; ++j) {
        const int32_t token = sampler.sample(res.row(row + j, vocab));
        result_.sampled_token_ids.push_back(token);
        ++n;
        if (j == s.num_spec_tokens || token != drafts[static_cast<size_t>(j)]) break;
      }
      row += 1 + s.num_spec_tokens;
      first_token = result_.sampled_token_ids[first];
      result_.num_sampled_tokens.push_back(n);
      const Sequence* seq = scheduler_.find(s.request_id);
      lookup_.assign(seq->tokens.begin(), seq->tokens.end());
      lookup_.insert(lookup_.end(), result_.sampled_token_ids.begin() + static_cast<long>(first),
                     result_.sampled_token_ids.end());
      result_.num_draft_tokens.push_back(proposer_->propose(lookup_, result_.draft_token_ids));
      emitted_.push_back(Emitted{s.request_id, seq->num_output_tokens(), first, n});
    }
    trace_.sequences.push_back(StepSequenceTrace{s.request_id, s.num_new_tokens,
                                                 s.num_computed_tokens, s.is_prefill, first_token});
  }
}

void Engine::emit_speculative_tokens() {
  if (!callback_) return;
  for (const Emitted& e : emitted_) {
    // A stop inside the accepted run drops the tokens after it: count what was kept.
    int kept = e.count;
    if (const Sequence* seq = scheduler_.find(e.request_id)) {
      kept = seq->num_output_tokens() - e.num_outputs_before;
    } else {
      for (const FinishedRequest& f : scheduler_.finished()) {
        if (f.id == e.request_id) kept = f.num_output_tokens - e.num_outputs_before;
      }
    }
    for (int t = 0; t < std::min(kept, e.count); ++t) {
      callback_(e.request_id, result_.sampled_token_ids[e.first + static_cast<size_t>(t)]);
    }
  }
}

}  // namespace servesim
