#include "serve/server/engine_worker.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include "models/config_error.h"

namespace servesim {
namespace {

using Clock = GenerationJob::Clock;

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

FinishedRequest aborted(uint64_t id, int prompt_tokens, int output_tokens) {
  FinishedRequest f;
  f.id = id;
  f.finish_reason = FinishReason::kAbort;
  f.reason = "abort";
  f.num_prompt_tokens = prompt_tokens;
  f.num_output_tokens = output_tokens;
  return f;
}

}  // namespace

EngineWorker::EngineWorker(std::unique_ptr<Engine> engine, ServeMetrics& metrics)
    : engine_(std::move(engine)), metrics_(metrics) {
  engine_->set_token_callback([this](uint64_t id, int32_t token) { on_token(id, token); });
  publish(true);
  thread_ = std::thread([this] { run(); });
}

EngineWorker::~EngineWorker() {
  stop();
}

uint64_t EngineWorker::next_id() {
  const std::lock_guard lock(mu_);
  return next_id_++;
}

void EngineWorker::submit(GenerationJob job) {
  {
    const std::lock_guard lock(mu_);
    if (!stopping_) {
      inbox_.push_back(std::move(job));
      wake_.notify_one();
      return;
    }
  }
  // Shutting down: the job ends at once, as those the engine held.
  job.on_output(
      JobOutput{std::nullopt,
                aborted(job.request.id, static_cast<int>(job.request.prompt_token_ids.size()), 0)});
}

void EngineWorker::cancel(uint64_t request_id) {
  const std::lock_guard lock(mu_);
  cancels_.push_back(request_id);
  wake_.notify_one();
}

EngineSnapshot EngineWorker::snapshot() const {
  const std::lock_guard lock(mu_);
  return snapshot_;
}

void EngineWorker::stop() {
  {
    const std::lock_guard lock(mu_);
    stopping_ = true;
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

void EngineWorker::run() {
  for (;;) {
    std::vector<GenerationJob> jobs;
    std::vector<uint64_t> cancels;
    bool stopping = false;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] {
        return stopping_ || !inbox_.empty() || !cancels_.empty() || engine_->has_unfinished();
      });
      jobs.swap(inbox_);
      cancels.swap(cancels_);
      stopping = stopping_;
    }
    admit(jobs);
    cancel_live(cancels);
    if (stopping) {
      std::vector<uint64_t> ids;
      for (const auto& [id, live] : live_) ids.push_back(id);
      cancel_live(ids);
      publish(true);
      return;
    }
    if (engine_->has_unfinished()) step();
    publish(!engine_->has_unfinished());
  }
}

void EngineWorker::admit(std::vector<GenerationJob>& jobs) {
  for (GenerationJob& job : jobs) {
    const uint64_t id = job.request.id;
    const int prompt_tokens = static_cast<int>(job.request.prompt_token_ids.size());
    FinishedRequest rejected;
    rejected.id = id;
    rejected.status = RequestStatus::kRejected;
    rejected.finish_reason = FinishReason::kRejected;
    rejected.num_prompt_tokens = prompt_tokens;
    try {
      if (engine_->add_request(job.request, job.sampling, job.min_tokens)) {
        Live& live = live_[id];
        live.job = std::move(job);
        continue;
      }
      rejected = engine_->finished().back();
    } catch (const ConfigError& e) {
      rejected.reason = e.what();
    }
    job.on_output(JobOutput{std::nullopt, rejected});
  }
}

void EngineWorker::cancel_live(const std::vector<uint64_t>& ids) {
  for (uint64_t id : ids) {
    const auto it = live_.find(id);
    if (it == live_.end()) continue;  // already finished
    engine_->abort(id);
    Live& live = it->second;
    finish(live,
           aborted(id, static_cast<int>(live.job.request.prompt_token_ids.size()), live.num_tokens),
           std::nullopt);
    live_.erase(it);
  }
}

void EngineWorker::step() {
  step_tokens_.clear();
  step_start_ = Clock::now();
  const StepTrace& trace = engine_->step();
  int computed = 0;
  for (const StepSequenceTrace& s : trace.sequences) {
    computed += s.new_tokens;
    const auto it = live_.find(s.request_id);
    if (it != live_.end() && it->second.num_scheduled_steps++ == 0) {
      it->second.first_scheduled = step_start_;
    }
  }
  metrics_.observe_step(computed, static_cast<int>(step_tokens_.size()),
                        engine_->scheduler().stats());
  deliver_step_outputs();
}

// A request samples at most one token per step, and a request that finished in the step did so
// on its token (aborts and rejections are reported where they happen), so each token goes out
// with its request's end when there is one.
void EngineWorker::deliver_step_outputs() {
  const std::vector<FinishedRequest>& finished = engine_->finished();
  for (const auto& [id, token] : step_tokens_) {
    const auto it = live_.find(id);
    if (it == live_.end()) continue;
    const auto f = std::find_if(finished.begin(), finished.end(),
                                [id = id](const FinishedRequest& x) { return x.id == id; });
    if (f == finished.end()) {
      it->second.job.on_output(JobOutput{token, std::nullopt});
      continue;
    }
    finish(it->second, *f, token);
    live_.erase(it);
  }
  for (const FinishedRequest& f : finished) {
    const auto it = live_.find(f.id);
    if (it == live_.end()) continue;
    finish(it->second, f, std::nullopt);
    live_.erase(it);
  }
}

// Engine callback, inside step(): timed here, handed on after the step (deliver_step_outputs).
void EngineWorker::on_token(uint64_t id, int32_t token) {
  const auto it = live_.find(id);
  if (it == live_.end()) return;
  Live& live = it->second;
  const Clock::time_point now = Clock::now();
  if (live.num_tokens == 0) {
    live.first_token = now;
    metrics_.observe_first_token(seconds(now - live.job.arrival),
                                 static_cast<int>(live.job.request.prompt_token_ids.size()));
  } else {
    metrics_.observe_token_gap(seconds(now - live.last_token));
  }
  live.last_token = now;
  ++live.num_tokens;
  step_tokens_.emplace_back(id, token);
}

void EngineWorker::finish(Live& live, const FinishedRequest& f, std::optional<int32_t> token) {
  const Clock::time_point now = Clock::now();
  FinishedRequestTimes t;
  t.reason = f.finish_reason;
  t.e2e_s = seconds(now - live.job.arrival);
  if (live.num_scheduled_steps > 0) {
    t.queue_s = seconds(live.first_scheduled - live.job.arrival);
    const Clock::time_point prefill_end = live.num_tokens > 0 ? live.first_token : now;
    t.prefill_s = seconds(prefill_end - live.first_scheduled);
  } else {
    t.queue_s = t.e2e_s;
  }
  if (live.num_tokens > 0) t.decode_s = seconds(live.last_token - live.first_token);
  t.prompt_tokens = static_cast<int>(live.job.request.prompt_token_ids.size());
  t.generation_tokens = live.num_tokens;
  metrics_.observe_finished(t);
  live.job.on_output(JobOutput{token, f});
}

void EngineWorker::publish(bool idle) {
  const Scheduler& s = engine_->scheduler();
  bool invariants_ok = true;
  if (idle) {
    // Cheap next to a step, and only when the engine runs dry: every block must be back.
    try {
      s.kv_cache().check_invariants();
    } catch (const std::logic_error& e) {
      std::fprintf(stderr, "servesim engine serve: %s\n", e.what());
      invariants_ok = false;
    }
  }
  const std::lock_guard lock(mu_);
  snapshot_.stats = s.stats();
  snapshot_.kv_free_blocks = s.kv_cache().pool().num_free_blocks();
  snapshot_.kv_usable_blocks = s.kv_cache().pool().num_usable_blocks();
  snapshot_.live_jobs = static_cast<int64_t>(live_.size() + inbox_.size());
  snapshot_.steps = snapshot_.stats.num_steps;
  snapshot_.invariants_ok = snapshot_.invariants_ok && invariants_ok;
}

}  // namespace servesim
