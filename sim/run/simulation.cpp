#include "sim/run/simulation.h"

#include <algorithm>
#include <limits>

#include "models/config_error.h"
#include "models/cost_model_factory.h"
#include "sim/agent/agent_workload.h"
#include "sim/core/event_loop.h"
#include "sim/service/service_path.h"
#include "sim/serving/replica.h"
#include "sim/serving/run_report.h"

namespace servesim {
namespace {

constexpr double kNoEvent = std::numeric_limits<double>::infinity();

// The least time between a client's sending a request that fails and its next send, seconds.
// Without it a refusal that takes no simulated time (too long for max_model_len with no
// service path, a rate limit with no network) lets a client with no think time send again in
// the same instant, forever (issue #19). A real client cannot do better than one HTTP
// exchange: a request and its error response over loopback through an asyncio client cost
// about a millisecond.
constexpr double kMinClientTurnaround_s = 1e-3;

}  // namespace

// Executes the events of one run: arrivals, step ends, static-batch timers and samples.
// With a service path, requests reach the replicas through it and leave through it.
class Simulation::Driver final : public EventHandler,
                                 public ReplicaListener,
                                 public ServicePathHost {
 public:
  Driver(const Simulation& sim, Observer& observer)
      : sim_(sim),
        observer_(observer),
        source_(make_simulation_source(sim.config_.workload, sim.agent_limits(), observer)),
        router_(sim.config_.router, sim.config_.seed ^ 0x726f75746572ULL),
        report_(sim.config_.metrics, sim.config_.workload, sim.config_.step_warmup_s, observer,
                tenant_labels(sim.config_.service.tenants)) {
    const SimulationConfig& c = sim.config_;
    ReplicaOptions options;
    options.vocab_size = c.model.vocab_size;
    options.sliding_window = c.model.sliding_window;
    options.speculative = make_speculative_cost_model(c.model, c.gpu, c.parallel, sim.plan_.engine,
                                                      c.roofline);
    options.seed = c.seed;
    for (int r = 0; r < c.parallel.replicas(); ++r) {
      replicas_.emplace_back(
          std::make_unique<Replica>(r, sim.scheduler_config_, *sim.cost_model_, options));
    }
    loads_.resize(replicas_.size());
    wave_pending_.assign(replicas_.size() / static_cast<size_t>(c.parallel.dp), false);
    gather_timer_s_.assign(replicas_.size(), kNoEvent);
    if (c.service.enabled) {
      const uint32_t clients = TenantAssigner::partitioned_clients(c.workload);
      service_ = std::make_unique<ServicePath>(c.service, c.seed ^ 0x73657276696365ULL, loop_,
                                               *this, clients);
    }
  }

  SimulationResult run() {
    schedule_next_arrival();
    const double interval = sim_.config_.sample_interval_s;
    if (interval > 0) loop_.schedule(0.0, EventKind::kSample);
    const StopReason reason = loop_.run(*this, observer_);

    SimulationResult result;
    result.summary = report_.summary();
    result.by_step = report_.by_step();
    result.tenants = report_.tenants(result.summary);
    for (const auto& replica : replicas_) {
      // Once per run, O(blocks): a block pool that lost count is a bug, never a result.
      replica->scheduler().kv_cache().check_invariants();
      result.replicas.push_back(RunReport::replica_summary(
          replica->scheduler().stats(), replica->scheduler().config(), replica->steps(),
          replica->busy_s(), replica->op_totals(), replica->admission()));
      result.extrapolated_steps += replica->extrapolated_steps();
    }
    result.sessions = session_summary_of(*source_);
    result.fingerprint = loop_.fingerprint().hex();
    result.events = loop_.events_executed();
    result.simulated_s = loop_.now_s();
    result.stopped = reason == StopReason::kStopped;
    if (service_) result.stations = service_->station_stats(loop_.now_s());
    return result;
  }

  void handle(const Event& event) override {
    if (service_ && ServicePath::owns(event.kind)) {
      service_->handle(event, loop_.now_s());
      return;
    }
    switch (event.kind) {
      case EventKind::kArrival:
        on_arrival();
        break;
      case EventKind::kStepEnd:
        replicas_[event.target]->end_step(loop_.now_s(), *this);
        if (service_) service_->on_engine_step_end(loop_.now_s());
        try_start(event.target);
        break;
      case EventKind::kTimeout:
        gather_timer_s_[event.target] = kNoEvent;
        if (replicas_[event.target]->scheduler().static_batch_gathering()) {
          replicas_[event.target]->scheduler().release_static_batch();
        }
        try_start(event.target);
        break;
      case EventKind::kSample:
        on_sample();
        break;
      case EventKind::kDispatch:
        wave_pending_[event.target] = false;
        start_together(event.target * static_cast<uint32_t>(sim_.config_.parallel.dp),
                       sim_.config_.parallel.dp);
        break;
      default:
        throw std::logic_error("simulation: unexpected event kind");
    }
  }

  Progress progress() const override { return {done_, source_->expected_total()}; }

  void on_token(const RequestSpec& request, std::optional<double> gap_s) override {
    if (service_) {
      service_->on_engine_token(request.id);
    } else if (gap_s) {
      report_.inter_token_gap(request, *gap_s);
    }
  }

  void on_request_left(const RequestSpec& request, const RequestRecord& record) override {
    if (service_) {
      service_->on_engine_left(record, loop_.now_s());
      return;
    }
    complete(request, record, loop_.now_s());
  }

  void deliver(const RequestSpec& request, double now_s) override {
    if (router_.reads_load()) {
      for (size_t r = 0; r < replicas_.size(); ++r) loads_[r] = replicas_[r]->load();
    }
    const size_t target = router_.route(request, loads_);
    replicas_[target]->admit(request, now_s, *this);
    try_start(static_cast<uint32_t>(target));
    if (service_ && arrivals_done()) {
      for (uint32_t r = 0; r < replicas_.size(); ++r) try_start(r);
    }
  }

  void complete(const RequestSpec& request, const RequestRecord& record, double now_s) override {
    ++done_;
    report_.request_left(record);
    const double client_done_s = record.status == RequestOutcome::kOk
                                     ? now_s
                                     : std::max(now_s, record.arrival_s + kMinClientTurnaround_s);
    source_->on_request_left(request, record, client_done_s);
    schedule_next_arrival();
  }

  void abort(uint64_t id, double now_s) override {
    (void)now_s;
    for (uint32_t r = 0; r < replicas_.size(); ++r) {
      if (replicas_[r]->abort(id)) {
        try_start(r);
        return;
      }
    }
  }

  void client_gap(const RequestSpec& request, double gap_s) override {
    report_.inter_token_gap(request, gap_s);
  }

 private:
  // Nothing more will reach the replicas: the workload is exhausted and nothing is on its
  // way through the service path.
  bool arrivals_done() { return source_->finished() && (!service_ || service_->upstream() == 0); }

  void schedule_next_arrival() {
    const std::optional<double> next = source_->next_arrival_s();
    if (!next) return;
    const double at = std::max(*next, loop_.now_s());
    if (at < pending_arrival_s_) {
      pending_arrival_s_ = at;
      loop_.schedule(at, EventKind::kArrival);
    }
  }

  void on_arrival() {
    const double now = loop_.now_s();
    if (now >= pending_arrival_s_) pending_arrival_s_ = kNoEvent;
    source_->advance_to(now);
    while (true) {
      const std::optional<double> next = source_->next_arrival_s();
      if (!next || *next > now) break;
      const RequestSpec request = source_->pop();
      if (service_) {
        service_->send(request, now);
      } else {
        deliver(request, now);
      }
    }
    schedule_next_arrival();
    if (arrivals_done()) {
      for (uint32_t r = 0; r < replicas_.size(); ++r) try_start(r);
    }
  }

  void try_start(uint32_t r) {
    const ParallelConfig& parallel = sim_.config_.parallel;
    if (parallel.lockstep()) {
      // Once every request of this instant has reached its replica (a kDispatch event at the
      // same time runs after them), so that replicas given work together start together.
      const uint32_t group = r / static_cast<uint32_t>(parallel.dp);
      if (!wave_pending_[group]) {
        wave_pending_[group] = true;
        loop_.schedule(loop_.now_s(), EventKind::kDispatch, group);
      }
      return;
    }
    if (replicas_[r]->busy()) return;
    if (const std::optional<double> duration = begin_step(r)) {
      loop_.schedule_in(*duration, EventKind::kStepEnd, r);
    }
  }

  // Expert parallelism over several replicas: vLLM runs the MoE layers of all data-parallel
  // ranks of a server together (idle ranks run dummy batches), so once none of replicas
  // [first, first + count) is busy each with work begins a step, all ending with the slowest.
  void start_together(uint32_t first, int count) {
    const uint32_t end = first + static_cast<uint32_t>(count);
    for (uint32_t r = first; r < end; ++r) {
      if (replicas_[r]->busy()) return;
    }
    double slowest_s = -1;
    for (uint32_t r = first; r < end; ++r) {
      if (const std::optional<double> duration = begin_step(r)) {
        slowest_s = std::max(slowest_s, *duration);
      }
    }
    for (uint32_t r = first; r < end; ++r) {
      if (replicas_[r]->busy()) loop_.schedule_in(slowest_s, EventKind::kStepEnd, r);
    }
  }

  // Begins replica r's next step and returns its duration, or arms its static-batch timer.
  std::optional<double> begin_step(uint32_t r) {
    Scheduler& scheduler = replicas_[r]->scheduler();
    if (scheduler.static_batch_gathering() && arrivals_done()) {
      scheduler.release_static_batch(/*no_more_arrivals=*/true);
    }
    const std::optional<double> duration = replicas_[r]->begin_step(loop_.now_s());
    if (!duration && scheduler.static_batch_gathering() && gather_timer_s_[r] == kNoEvent) {
      gather_timer_s_[r] = loop_.now_s() + sim_.config_.static_batch_timeout_s;
      loop_.schedule(gather_timer_s_[r], EventKind::kTimeout, r);
    }
    return duration;
  }

  void on_sample() {
    bool active = !source_->finished();
    for (const auto& replica : replicas_) {
      observer_.on_sample(RunReport::sample(loop_.now_s(), replica->index(),
                                            replica->scheduler().stats(),
                                            replica->busy() ? replica->last_step_tokens() : 0));
      active = active || replica->has_unfinished();
    }
    if (active) loop_.schedule_in(sim_.config_.sample_interval_s, EventKind::kSample);
  }

  const Simulation& sim_;
  Observer& observer_;
  EventLoop loop_;
  std::unique_ptr<RequestSource> source_;
  Router router_;
  RunReport report_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<ReplicaLoad> loads_;
  std::vector<double> gather_timer_s_;
  std::vector<bool> wave_pending_;        // per lock-stepped server: a kDispatch is queued
  std::unique_ptr<ServicePath> service_;  // null for "service": "none"
  double pending_arrival_s_ = kNoEvent;
  uint64_t done_ = 0;
};

SchedulerConfig scheduler_config_for(const SimulationConfig& config, const MemoryPlan& plan) {
  const EngineConfig& e = plan.engine;
  SchedulerConfig sc;
  sc.max_num_seqs = e.max_num_seqs;
  sc.max_num_batched_tokens = e.max_num_batched_tokens;
  sc.max_model_len = e.max_model_len;
  sc.block_size = e.block_size;
  sc.num_gpu_blocks = plan.num_gpu_blocks;
  sc.enable_chunked_prefill = e.enable_chunked_prefill;
  sc.enable_prefix_caching = e.enable_prefix_caching;
  sc.long_prefill_token_threshold = config.long_prefill_token_threshold;
  sc.policy = config.batching;
  sc.queue_order = config.queue_order;
  sc.static_batch_size = config.static_batch_size;
  sc.hash_salt = config.seed;
  sc.num_speculative_tokens = e.speculative ? e.speculative->num_speculative_tokens : 0;
  sc.validate();
  return sc;
}

void check_run_settings(const SimulationConfig& config) {
  if (!(config.static_batch_timeout_s >= 0)) {
    throw ConfigError("engine.static_batch_timeout_s must be >= 0");
  }
  if (!(config.sample_interval_s >= 0)) {
    throw ConfigError("metrics.sample_interval_s must be >= 0");
  }
}

Simulation::Simulation(SimulationConfig config) : config_(std::move(config)) {
  plan_ = MemoryPlan::compute(config_.model, config_.gpu, config_.parallel, config_.engine);
  scheduler_config_ = scheduler_config_for(config_, plan_);
  check_run_settings(config_);
  config_.metrics.num_gpus = config_.parallel.total_gpus();
  if (config_.metrics.price_per_gpu_hour == 0) {
    config_.metrics.price_per_gpu_hour = config_.gpu.price_per_hour_usd;
  }
  const CostModelChoice choice{config_.profile.get(), config_.calibrated, config_.roofline};
  cost_model_ = make_cost_model(choice, config_.model, config_.gpu, config_.parallel, plan_.engine);
  if (config_.workload.kind == WorkloadKind::kAgent) {
    parse_agent_workload(config_.workload, agent_limits());
  }
}

AgentLimits Simulation::agent_limits() const {
  return {config_.model.name, scheduler_config_.max_model_len};
}

Simulation::~Simulation() = default;

SimulationResult Simulation::run(Observer& observer) {
  Driver driver(*this, observer);
  return driver.run();
}

}  // namespace servesim
