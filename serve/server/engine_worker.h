// EngineWorker: runs servesim's Engine on a thread of its own for the HTTP server. Other threads
// hand it generation jobs and cancellations through a mutex-guarded inbox; it steps the engine
// while any request is live (and sleeps on a condition variable otherwise), and reports each
// sampled token and each request's end through the job's callback, which runs on the engine
// thread and must only hand the event on (the server posts it to the connection's strand).
// It also records the serving metrics (ServeMetrics) and publishes a snapshot of the scheduler
// after every step.
//
//   EngineWorker worker(std::move(engine), metrics);   // starts the thread
//   worker.submit(std::move(job));                     // any thread
//   worker.cancel(job_id);                             // any thread: client gone
//   worker.stop();                                     // aborts what is live, joins
//
// Ownership: owns the Engine and the thread; borrows the metrics (they must outlive it).
// Invariants: a job's on_output is called once per sampled token, in order, and the last call
// carries `finished` (finished, rejected or aborted) — with the request's last token when a
// token ended it, alone otherwise. A cancel takes effect before the next step (the job then
// ends with kAbort); outputs of the steps before it still arrive. Thread-safe: next_id,
// submit, cancel, snapshot and stop from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/sampling_params.h"
#include "engine/runtime/engine.h"
#include "serve/server/serve_metrics.h"

namespace servesim {

// One callback of a job: a sampled token, the request's end, or both (its last token).
struct JobOutput {
  std::optional<int32_t> token;
  std::optional<FinishedRequest> finished;
};

struct GenerationJob {
  using Clock = std::chrono::steady_clock;
  Request request;  // request.id must be unique among live jobs (next_id())
  SamplingParams sampling;
  int min_tokens = 0;
  Clock::time_point arrival;  // when the HTTP request was read: TTFT and E2E count from here
  std::function<void(const JobOutput& output)> on_output;  // engine thread; must not block
};

// The engine as the last step left it.
struct EngineSnapshot {
  SchedulerStats stats;
  int64_t kv_free_blocks = 0;    // free blocks of the pool (usable blocks minus referenced)
  int64_t kv_usable_blocks = 0;  // num_gpu_blocks - 1
  int64_t live_jobs = 0;         // submitted and not yet finished
  int64_t steps = 0;
  bool invariants_ok = true;  // the block pool's invariants held each time the engine went idle
};

class EngineWorker {
 public:
  EngineWorker(std::unique_ptr<Engine> engine, ServeMetrics& metrics);
  ~EngineWorker();  // stop()
  EngineWorker(const EngineWorker&) = delete;
  EngineWorker& operator=(const EngineWorker&) = delete;

  uint64_t next_id();  // unique request ids, from 1
  void submit(GenerationJob job);
  void cancel(uint64_t request_id);
  EngineSnapshot snapshot() const;
  // Aborts every live job (their last on_output reports kAbort) and joins the thread. Idempotent.
  void stop();

 private:
  struct Live {
    GenerationJob job;
    int num_scheduled_steps = 0;  // steps it computed tokens in
    int num_tokens = 0;           // outputs sampled
    GenerationJob::Clock::time_point first_scheduled, first_token, last_token;
  };

  void run();
  void admit(std::vector<GenerationJob>& jobs);
  void cancel_live(const std::vector<uint64_t>& ids);
  void step();
  void on_token(uint64_t id, int32_t token);
  void deliver_step_outputs();
  // Records the request's metrics and calls its last on_output (with `token` when one ended it).
  void finish(Live& live, const FinishedRequest& f, std::optional<int32_t> token);
  void publish(bool idle);

  std::unique_ptr<Engine> engine_;
  ServeMetrics& metrics_;
  std::unordered_map<uint64_t, Live> live_;                // engine thread only
  std::vector<std::pair<uint64_t, int32_t>> step_tokens_;  // engine thread: this step's samples
  GenerationJob::Clock::time_point step_start_;            // engine thread only

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::vector<GenerationJob> inbox_;
  std::vector<uint64_t> cancels_;
  bool stopping_ = false;
  uint64_t next_id_ = 1;
  EngineSnapshot snapshot_;
  std::thread thread_;
};

}  // namespace servesim
