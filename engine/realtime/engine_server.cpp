#include "engine/realtime/engine_server.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>

#include "engine/runtime/backend.h"
#include "engine/runtime/engine.h"
#include "engine/runtime/kv_cache_size.h"
#include "models/config_error.h"
#include "sim/serving/request_ledger.h"
#include "sim/serving/run_report.h"
#include "sim/workload/workload.h"

namespace servesim {
namespace {

using Clock = std::chrono::steady_clock;

// Longest uninterrupted sleep while waiting for an arrival, so a stop request is seen soon.
constexpr double kMaxSleepS = 0.1;

// Keys and values of one token over all layers, in the engine's fp32 cache.
int64_t kv_bytes_per_token(const ModelSpec& m) {
  return static_cast<int64_t>(m.kv_bytes_per_token(DType::kFp32, 1));
}

std::string format_billions(int64_t params) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f B", static_cast<double>(params) / 1e9);
  return text;
}

// A CPU engine serving a GPU-sized model in real time would take hours: refuse it early.
void check_model_size(const ModelSpec& m, bool force) {
  if (m.total_params() <= EngineServeOptions::kMaxParams || force) return;
  throw ConfigError("model '" + m.name + "' has " + format_billions(m.total_params()) +
                    " parameters, too many for the CPU engine in real time (limit " +
                    format_billions(EngineServeOptions::kMaxParams) +
                    "); use a small model such as Llama-100M-bench, or pass --force");
}

}  // namespace

// One real-time serving run: the request source, the engine and the per-request bookkeeping.
class EngineServer::Run {
 public:
  Run(const EngineServer& server, Observer& observer)
      : server_(server),
        observer_(observer),
        source_(make_request_source(server.config_.workload)),
        engine_(make_engine(server)),
        ledger_(0, server.scheduler_config_.max_model_len, server.config_.model.vocab_size),
        report_(metrics_options(), server.config_.workload, server.config_.step_warmup_s,
                observer) {
    engine_->set_trace_stream(server.options_.trace);
    // As vLLM's start-up profile run: the first request must not pay for buffer growth.
    engine_->warm_up();
  }

  // The CPU engine runs the server's weights; the CUDA one draws its own on the device (an 8B
  // model needs no 32 GB of host fp32 first), seeded like the CPU weights.
  static std::unique_ptr<Engine> make_engine(const EngineServer& server) {
    EngineOptions options{server.scheduler_config_, server.options_.num_threads,
                          server.options_.profile, server.options_.backend};
    options.speculative = server.config_.engine.speculative;
    if (server.options_.backend == Backend::kCpu || !server.options_.checkpoint.empty()) {
      return std::make_unique<Engine>(server.weights_, options);
    }
    return std::make_unique<Engine>(
        *load_weights(server.options_.backend, server.config_.model, {}, server.config_.seed),
        options);
  }

  EngineServeResult run() {
    epoch_ = Clock::now();
    const double interval_s = server_.config_.sample_interval_s;
    double next_sample_s = 0;
    while (!result_.stopped) {
      admit_due(now_s());
      release_static_batch_when_due(now_s());
      if (!engine_->has_unfinished() || !step()) {
        // Idle, or a static batch gathering: sleep until the next arrival or the gather
        // timeout, in slices short enough to notice a stop.
        const std::optional<double> wake = next_wake_s();
        if (!wake) break;
        const double until_s = std::min(*wake, now_s() + kMaxSleepS);
        std::this_thread::sleep_until(epoch_ + std::chrono::duration_cast<Clock::duration>(
                                                   std::chrono::duration<double>(until_s)));
      }
      if (interval_s > 0 && now_s() >= next_sample_s) {
        sample();
        // On the simulator's grid (0, interval, 2 interval, ...), skipping missed points.
        next_sample_s = (std::floor(now_s() / interval_s) + 1) * interval_s;
      }
      result_.stopped = observer_.should_stop();
    }
    result_.wall_s = now_s();
    finish_result();
    return std::move(result_);
  }

 private:
  MetricsOptions metrics_options() const {
    MetricsOptions options = server_.config_.metrics;
    // One CPU process: throughput "per GPU" is per engine, and a GPU's price means nothing.
    options.num_gpus = 1;
    options.price_per_gpu_hour = 0;
    return options;
  }

  double now_s() const { return std::chrono::duration<double>(Clock::now() - epoch_).count(); }

  std::optional<double> next_admissible_arrival_s() {
    const uint64_t cap = server_.options_.max_requests;
    if (cap != 0 && admitted_ >= cap) return std::nullopt;
    return source_->next_arrival_s();
  }

  // The next time something can happen without a step: an arrival, or the gather timeout
  // of a batch still gathering (a timer left from a batch that filled up wakes nothing).
  std::optional<double> next_wake_s() {
    std::optional<double> wake = next_admissible_arrival_s();
    const bool gathering = engine_->scheduler().static_batch_gathering();
    if (gathering && gather_deadline_s_ && (!wake || *gather_deadline_s_ < *wake)) {
      wake = gather_deadline_s_;
    }
    return wake;
  }

  // Nothing more will arrive: the workload is exhausted or the request cap reached. (A closed
  // loop with every client waiting has no next arrival yet, but is not finished.)
  bool arrivals_finished() const {
    const uint64_t cap = server_.options_.max_requests;
    return source_->finished() || (cap != 0 && admitted_ >= cap);
  }

  // Static batching with the simulator's gather timer (Simulation's driver): one deadline,
  // set when a step finds the batch still gathering and cleared when it expires; when nothing
  // more can arrive, every batch starts with what is waiting.
  void release_static_batch_when_due(double now) {
    const bool gathering = engine_->scheduler().static_batch_gathering();
    if (gather_deadline_s_ && now >= *gather_deadline_s_) {
      gather_deadline_s_.reset();
      if (gathering) engine_->release_static_batch();
    }
    if (gathering && arrivals_finished()) {
      engine_->release_static_batch(/*no_more_arrivals=*/true);
    }
  }

  void admit_due(double now) {
    while (true) {
      const std::optional<double> next = next_admissible_arrival_s();
      if (!next || *next > now) return;
      admit(source_->pop(), now);
    }
  }

  void admit(const RequestSpec& spec, double now) {
    ++admitted_;
    RequestRecord rejected;
    std::optional<Request> request = ledger_.admit(spec, rejected);
    if (!request) {
      report(spec, rejected, now);
      return;
    }
    if (!engine_->add_request(std::move(*request))) {
      for (const FinishedRequest& done : engine_->finished()) {
        if (done.id == spec.id) leave(done, now);
      }
    }
  }

  // False when nothing ran: a static batch is gathering (its gather timer starts then).
  bool step() {
    const double start_s = now_s();
    const StepTrace& trace = engine_->step();
    if (trace.sequences.empty()) {
      if (!gather_deadline_s_) {
        gather_deadline_s_ = start_s + server_.config_.static_batch_timeout_s;
      }
      return false;
    }
    const double end_s = now_s();
    ReplicaSummary& e = result_.engine;
    ++e.steps;
    e.busy_s += end_s - start_s;
    for (size_t op = 0; op < kNumOps; ++op) e.op_totals.op_s[op] += trace.op_s[op];
    last_step_tokens_ = 0;
    ServedStep& served = result_.steps.emplace_back();
    served.shape.sliding_window = server_.config().model.sliding_window;
    served.seconds = end_s - start_s;
    for (const StepSequenceTrace& s : trace.sequences) {
      last_step_tokens_ += s.new_tokens;
      served.shape.add_sequence(s.new_tokens, s.context_tokens, s.prefill, s.token >= 0);
      ledger_.on_scheduled(s.request_id, s.prefill, start_s);
      if (s.token < 0) continue;
      const RequestLedger::TokenTime t = ledger_.on_token(s.request_id, end_s);
      if (t.gap_s) report_.inter_token_gap(*t.spec, *t.gap_s);
    }
    for (const FinishedRequest& done : engine_->finished()) leave(done, end_s);
    return true;
  }

  void leave(const FinishedRequest& done, double now) {
    if (const std::optional<RequestLedger::Left> left = ledger_.leave(done, now)) {
      report(left->spec, left->record, now);
    }
  }

  void report(const RequestSpec& spec, const RequestRecord& record, double now) {
    report_.request_left(record);
    result_.records.push_back(record);
    observer_.on_progress(now, result_.records.size(), expected_total());
    // Closed-loop clients and multi-turn sessions schedule their next request from here.
    source_->on_request_done(spec, now);
  }

  uint64_t expected_total() const {
    const uint64_t cap = server_.options_.max_requests;
    const uint64_t total = source_->expected_total();
    return cap != 0 && (total == 0 || total > cap) ? cap : total;
  }

  void sample() {
    observer_.on_sample(
        RunReport::sample(now_s(), 0, engine_->scheduler().stats(), last_step_tokens_));
  }

  void finish_result() {
    result_.summary = report_.summary();
    result_.by_step = report_.by_step();
    ReplicaSummary& e = result_.engine;
    StepTime op_totals = e.op_totals;
    op_totals.total_s = e.busy_s;
    e = RunReport::replica_summary(engine_->scheduler().stats(), engine_->scheduler().config(),
                                   e.steps, e.busy_s, op_totals);
    result_.num_draft_tokens = engine_->num_draft_tokens();
    result_.num_accepted_tokens = engine_->num_accepted_tokens();
    result_.spec_counters = engine_->scheduler().spec_decode_counters();
  }

  const EngineServer& server_;
  Observer& observer_;
  std::unique_ptr<RequestSource> source_;
  std::unique_ptr<Engine> engine_;
  RequestLedger ledger_;
  RunReport report_;
  Clock::time_point epoch_;
  std::optional<double> gather_deadline_s_;  // static batching's gather timeout; seconds
  uint64_t admitted_ = 0;     // requests popped from the source, rejected ones included
  int last_step_tokens_ = 0;  // tokens computed by the latest step
  EngineServeResult result_;
};

EngineServer::EngineServer(const SimulationConfig& config, const EngineServeOptions& options)
    : config_(config), options_(options) {
  const bool cpu = options_.backend == Backend::kCpu;
  if (cpu) check_model_size(config_.model, options_.force);
  require_backend(options_.backend);
  Weights::check_supported(config_.model);
  if (options_.num_threads < 1) throw ConfigError("--threads must be >= 1");
  if (config_.parallel.dp != 1) {
    throw ConfigError("the engine serves one replica; the scenario has data_parallel_size " +
                      std::to_string(config_.parallel.dp));
  }
  if (config_.engine.kv_offloading_size_gib) {
    throw ConfigError(
        "engine.kv_offloading_size_gib: the built-in engine has no host KV tier; KV offload is "
        "simulated only (servesim run), drop the key to serve on the engine");
  }
  if (config_.engine.async_scheduling) {
    throw ConfigError(
        "engine.async_scheduling: the built-in engine schedules synchronously; asynchronous "
        "scheduling is simulated only (servesim simulate), set it false to serve on the engine");
  }
  // The simulator's scheduler settings, exactly: the vLLM defaults the memory plan resolves.
  check_run_settings(config_);
  scheduler_config_ = scheduler_config_for(
      config_, MemoryPlan::compute(config_.model, config_.gpu, config_.parallel, config_.engine));
  scheduler_config_.num_gpu_blocks =
      size_kv_cache_blocks(scheduler_config_, config_.model, DType::kFp32, options_.num_gpu_blocks,
                           options_.kv_cache_mib);
  scheduler_config_.validate();
  if (!options_.checkpoint.empty()) {
    weights_ = Weights::load_safetensors(config_.model, options_.checkpoint);
  } else if (cpu) {
    weights_ = Weights::random(config_.model, config_.seed);
  }
}

int64_t EngineServer::kv_cache_bytes() const {
  return (scheduler_config_.num_gpu_blocks - 1) * scheduler_config_.block_size *
         kv_bytes_per_token(config_.model);
}

EngineServeResult EngineServer::run(Observer& observer) const {
  Run run(*this, observer);
  return run.run();
}

EngineServeResult serve_on_engine(const SimulationConfig& config, const EngineServeOptions& options,
                                  Observer& observer) {
  return EngineServer(config, options).run(observer);
}

}  // namespace servesim
