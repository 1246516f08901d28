#include "calibration/engine_server.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>

#include "engine/runtime/backend.h"
#include "engine/runtime/engine.h"
#include "models/config_error.h"
#include "sim/metrics/stepwise_metrics.h"
#include "sim/serving/in_flight_request.h"
#include "sim/workload/request_prompt.h"
#include "sim/workload/workload.h"

namespace servesim {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kBytesPerMib = int64_t{1} << 20;
// Longest uninterrupted sleep while waiting for an arrival, so a stop request is seen soon.
constexpr double kMaxSleepS = 0.1;

// fp32 keys and values of one token over all layers (the engine's cache is fp32).
int64_t kv_bytes_per_token(const ModelSpec& m) {
  return int64_t{2} * m.num_layers * m.num_kv_heads * m.head_dim *
         static_cast<int64_t>(sizeof(float));
}

std::string format_billions(int64_t params) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f B", static_cast<double>(params) / 1e9);
  return text;
}

// KV blocks, block 0 included, for the options: as given, from the MiB budget, or enough for
// max_num_seqs full-length sequences within the default budget.
int64_t size_kv_blocks(const SchedulerConfig& sc, const ModelSpec& m, const EngineServeOptions& o) {
  if (o.num_gpu_blocks != 0 && o.kv_cache_mib != 0) {
    throw ConfigError("give the KV cache as --num-blocks or --kv-cache-mib, not both");
  }
  if (o.num_gpu_blocks < 0) throw ConfigError("--num-blocks must be >= 2");
  if (o.kv_cache_mib < 0) throw ConfigError("--kv-cache-mib must be > 0");
  const int64_t block_bytes = kv_bytes_per_token(m) * sc.block_size;
  int64_t blocks = o.num_gpu_blocks;
  if (o.kv_cache_mib > 0) {
    blocks = o.kv_cache_mib * kBytesPerMib / block_bytes + 1;
  } else if (blocks == 0) {
    const int64_t per_sequence = (sc.max_model_len + sc.block_size - 1) / sc.block_size;
    const int64_t cap = EngineServeOptions::kDefaultKvCacheMib * kBytesPerMib / block_bytes;
    blocks = std::min<int64_t>(sc.max_num_seqs * per_sequence, cap) + 1;
  }
  if (blocks < 2) {
    throw ConfigError("KV cache of " + std::to_string(blocks) +
                      " blocks is too small: it needs at least 2 (block 0 is reserved); "
                      "raise --num-blocks or --kv-cache-mib");
  }
  return blocks;
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
        metrics_(metrics_options()) {
    const SimulationConfig& c = server.config_;
    if (c.workload.kind == WorkloadKind::kStepped) {
      by_step_ = std::make_unique<StepwiseMetrics>(static_cast<int>(c.workload.steps.size()),
                                                   c.workload.step_duration_s, c.step_warmup_s,
                                                   metrics_options());
    }
    engine_->set_trace_stream(server.options_.trace);
    // As vLLM's start-up profile run: the first request must not pay for buffer growth.
    engine_->warm_up();
  }

  // The CPU engine runs the server's weights; the CUDA one draws its own on the device (an 8B
  // model needs no 32 GB of host fp32 first), seeded like the CPU weights.
  static std::unique_ptr<Engine> make_engine(const EngineServer& server) {
    const EngineOptions options{server.scheduler_config_, server.options_.num_threads,
                                server.options_.profile, server.options_.backend};
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
      if (engine_->has_unfinished()) {
        step();
      } else if (const std::optional<double> next = next_admissible_arrival_s()) {
        // Idle: sleep until the next arrival, in slices short enough to notice a stop.
        const double wake_s = std::min(*next, now_s() + kMaxSleepS);
        std::this_thread::sleep_until(epoch_ + std::chrono::duration_cast<Clock::duration>(
                                                   std::chrono::duration<double>(wake_s)));
      } else {
        break;
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

  double now_s() const {
    return std::chrono::duration<double>(Clock::now() - epoch_).count();
  }

  std::optional<double> next_admissible_arrival_s() {
    const uint64_t cap = server_.options_.max_requests;
    if (cap != 0 && admitted_ >= cap) return std::nullopt;
    return source_->next_arrival_s();
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
    const SchedulerConfig& sc = server_.scheduler_config_;
    if (static_cast<int64_t>(spec.prompt_tokens) + spec.output_tokens > sc.max_model_len) {
      // As the simulator's Replica (and vLLM's API server): refused before scheduling.
      RequestRecord r;
      r.id = spec.id;
      r.replica = 0;
      r.arrival_s = spec.arrival_s;
      r.prompt_tokens = spec.prompt_tokens;
      r.status = RequestOutcome::kRejected;
      r.step_index = spec.step_index;
      report(spec, r, now);
      return;
    }
    Request request;
    request.id = spec.id;
    request_prompt_into(spec, server_.weights_.spec.vocab_size, request.prompt_token_ids);
    request.max_output_tokens = spec.output_tokens;
    request.ignore_eos = true;
    request.arrival_s = spec.arrival_s;
    in_flight_.emplace(spec.id, InFlightRequest{spec});
    if (!engine_->add_request(std::move(request))) {
      for (const FinishedRequest& done : engine_->finished()) {
        if (done.id == spec.id) leave(done, now);
      }
    }
  }

  void step() {
    const double start_s = now_s();
    const StepTrace& trace = engine_->step();
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
      auto it = in_flight_.find(s.request_id);
      if (it == in_flight_.end()) continue;
      InFlightRequest& f = it->second;
      if (s.prefill && std::isnan(f.first_scheduled_s)) f.first_scheduled_s = start_s;
      if (s.token < 0) continue;
      if (std::isnan(f.first_token_s)) {
        f.first_token_s = end_s;
      } else {
        const double gap_s = end_s - f.last_token_s;
        metrics_.add_itl(gap_s, f.spec.id, f.spec.arrival_s);
        if (by_step_) by_step_->add_itl(gap_s, f.spec.id, f.spec.arrival_s, f.spec.step_index);
      }
      f.last_token_s = end_s;
    }
    for (const FinishedRequest& done : engine_->finished()) leave(done, end_s);
  }

  void leave(const FinishedRequest& done, double now) {
    auto it = in_flight_.find(done.id);
    if (it == in_flight_.end()) return;
    const InFlightRequest f = std::move(it->second);
    in_flight_.erase(it);
    report(f.spec, f.to_record(done, 0, now), now);
  }

  void report(const RequestSpec& spec, const RequestRecord& record, double now) {
    metrics_.add(record);
    if (by_step_) by_step_->add(record);
    result_.records.push_back(record);
    observer_.on_request_done(record);
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
    const SchedulerStats st = engine_->scheduler().stats();
    TimeSample s;
    s.time_s = now_s();
    s.running = st.num_running;
    s.waiting = st.num_waiting;
    s.kv_usage = st.kv_usage;
    s.tokens_in_step = last_step_tokens_;
    s.preemptions_total = static_cast<int>(st.num_preemptions_total);
    observer_.on_sample(s);
  }

  void finish_result() {
    result_.summary = metrics_.summary();
    if (by_step_) {
      for (int step = 0; step < by_step_->steps(); ++step) {
        result_.by_step.push_back(by_step_->summary(step));
      }
    }
    const SchedulerStats st = engine_->scheduler().stats();
    ReplicaSummary& e = result_.engine;
    e.preemptions = st.num_preemptions_total;
    e.prefix_cache_hit_rate = st.prefix_cache_hit_rate();
    e.evicted_blocks = st.num_evicted_blocks;
    e.op_totals.total_s = e.busy_s;
  }

  const EngineServer& server_;
  Observer& observer_;
  std::unique_ptr<RequestSource> source_;
  std::unique_ptr<Engine> engine_;
  MetricsCollector metrics_;
  std::unique_ptr<StepwiseMetrics> by_step_;  // stepped workloads only
  std::unordered_map<uint64_t, InFlightRequest> in_flight_;
  Clock::time_point epoch_;
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
  if (config_.batching != SchedulingPolicy::kContinuous) {
    throw ConfigError("the engine serves with continuous batching only; the scenario asks for " +
                      std::string(scheduling_policy_name(config_.batching)) + " batching");
  }
  if (config_.parallel.dp != 1) {
    throw ConfigError("the engine serves one replica; the scenario has data_parallel_size " +
                      std::to_string(config_.parallel.dp));
  }
  // The simulator's scheduler settings, exactly: Simulation resolves the vLLM defaults and
  // checks the scenario as `servesim simulate` does.
  scheduler_config_ = Simulation(config_).scheduler_config();
  scheduler_config_.num_gpu_blocks = size_kv_blocks(scheduler_config_, config_.model, options_);
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
