#include "sim/run/simulation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "models/config_error.h"
#include "models/cost_model_factory.h"
#include "sim/agent/agent_workload.h"
#include "sim/core/event_loop.h"
#include "sim/service/service_path.h"
#include "sim/serving/disaggregated_flow.h"
#include "sim/serving/host_kv_link.h"
#include "sim/serving/kv_transfer_link.h"
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
// Engine steps without progress, beyond the longest prompt's, that make a run a stall.
constexpr uint64_t kLivelockSteps = 1'000'000;
// KV offload: seconds a host-tier transfer costs beside its bytes: submitting the DMA copy
// and the worker's seeing it complete. An estimate, the same as the "pcie" KV-transfer
// preset's (docs/kv-offload.md); no measurement at hand.
constexpr double kHostKvLatency_s = 10e-6;

// KV offload: bytes/s per direction of each GPU's host link (engine.kv_offloading_bandwidth_GBps,
// else the GPU's PCIe figure).
double host_bandwidth_Bps(const MemoryPlan& plan, const HardwareSpec& gpu) {
  return plan.engine.kv_offloading_bandwidth_Bps.value_or(gpu.pcie_Bps);
}

// A host tier needs a link to move blocks over.
void check_host_link(const MemoryPlan& plan, const HardwareSpec& gpu) {
  if (plan.num_host_kv_blocks > 0 && !(host_bandwidth_Bps(plan, gpu) > 0)) {
    throw ConfigError("engine.kv_offloading_size_gib: GPU " + gpu.name +
                      " has no PCIe bandwidth (pcie_gbs 0); set "
                      "engine.kv_offloading_bandwidth_GBps");
  }
}

// What servesim models of vLLM's --async-scheduling: one engine core overlapping its host
// work with a single GPU step at a time, as continuous batching runs it.
void check_async_scheduling(const EngineConfig& engine, const ParallelConfig& parallel,
                            SchedulingPolicy batching) {
  if (!engine.async_scheduling) return;
  if (parallel.pp > 1) {
    throw ConfigError(
        "engine.async_scheduling with pipeline parallelism is not modelled (vLLM 0.14 turns it "
        "off there): set it false or parallel.pipeline_parallel_size 1");
  }
  if (batching == SchedulingPolicy::kStatic) {
    throw ConfigError(
        "engine.async_scheduling needs continuous batching: set engine.batching "
        "\"continuous\" or async_scheduling false");
  }
}

// The replica's share of an engine's --async-scheduling settings.
void apply_async_scheduling(const EngineConfig& engine, ReplicaOptions& options) {
  options.async_scheduling = engine.async_scheduling;
  options.async_host_overlap = engine.async_host_overlap;
}

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
        decode_router_(sim.config_.disaggregation.decode_router,
                       sim.config_.seed ^ 0x6465636f6465ULL),
        report_(sim.config_.metrics, sim.config_.workload, sim.config_.step_warmup_s, observer,
                tenant_labels(sim.config_.service.tenants)),
        prefill_side_(*this) {
    const SimulationConfig& c = sim.config_;
    ReplicaOptions options;
    options.vocab_size = c.model.vocab_size;
    options.sliding_window = c.model.sliding_window;
    const DisaggregationSpec& d = c.disaggregation;
    // Only decode steps speculate: a disaggregated deployment's are its decode instances'.
    options.speculative = make_speculative_cost_model(c.model, d.enabled ? d.decode.gpu : c.gpu,
                                                      d.enabled ? d.decode.parallel : c.parallel,
                                                      sim.plan_.engine, c.roofline);
    options.seed = c.seed;
    apply_async_scheduling(sim.plan_.engine, options);
    if (d.enabled) {
      router_ = Router(d.prefill_router, c.seed ^ 0x726f75746572ULL);
      ReplicaOptions prefill_options = options;
      prefill_options.speculative = nullptr;
      apply_async_scheduling(sim.prefill_.plan.engine, prefill_options);
      add_servers(d.prefill.instances, d.prefill.parallel, sim.prefill_.scheduler,
                  *sim.prefill_.cost_model, prefill_options,
                  {sim.prefill_.plan.kv_bytes_per_token, sim.host_kv_bandwidth_Bps(true)});
      num_prefill_ = static_cast<uint32_t>(replicas_.size());
      links_.resize(static_cast<size_t>(d.decode.instances * d.decode.parallel.dp));
    }
    const KvPath own_kv{sim.plan_.kv_bytes_per_token, sim.host_kv_bandwidth_Bps()};
    if (d.enabled) {
      add_servers(d.decode.instances, d.decode.parallel, sim.scheduler_config_, *sim.cost_model_,
                  options, own_kv);
    } else {
      add_servers(c.parallel.servers, c.parallel, sim.scheduler_config_, *sim.cost_model_, options,
                  own_kv);
    }
    num_own_ = static_cast<uint32_t>(replicas_.size());
    add_deployments(options);
    const bool any_host_tier =
        std::any_of(replicas_.begin(), replicas_.end(), [](const std::unique_ptr<Replica>& r) {
          return r->scheduler().config().num_host_kv_blocks > 0;
        });
    if (any_host_tier) {
      // Every replica gets a link (one without a host tier never uses its own), each with its
      // GPUs' bandwidth.
      for (const KvPath& kv : kv_)
        host_links_.emplace_back(kv.host_bandwidth_Bps, kHostKvLatency_s);
    }
    loads_.resize(replicas_.size());
    // Every step moves a prefill on by a token or samples one, so no request producing a token
    // or leaving in more steps than the longest prompt's recompute could take, and a million
    // more, is a run going round in circles (a preempted request that took back only the blocks
    // it gave up and ran out again, for ever, once was).
    int64_t longest = 0;
    for (const auto& replica : replicas_) {
      longest = std::max<int64_t>(longest, replica->scheduler().config().max_model_len);
    }
    livelock_steps_ = kLivelockSteps + 2 * static_cast<uint64_t>(longest);
    gather_timer_s_.assign(replicas_.size(), kNoEvent);
    if (c.service.enabled) {
      const uint32_t clients = TenantAssigner::partitioned_clients(c.workload);
      // A disaggregated deployment's decode instances stream its answers, each a `vllm serve`
      // of its own with its own API server.
      std::vector<ServiceDeployment> deployments{
          {c.model.name, c.disaggregation.enabled ? c.disaggregation.decode.instances : 1}};
      for (const DeploymentSpec& more : c.deployments) deployments.push_back({more.name, 1});
      service_ = std::make_unique<ServicePath>(c.service, c.seed ^ 0x73657276696365ULL, loop_,
                                               *this, clients, deployments);
    }
  }

  SimulationResult run() {
    schedule_next_arrival();
    const double interval = sim_.config_.sample_interval_s;
    if (interval > 0) loop_.schedule(0.0, EventKind::kSample);
    const StopReason reason = loop_.run(*this, observer_);
    if (reason == StopReason::kDrained) check_not_stalled();

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
      if (!host_links_.empty()) {
        replica->scheduler().host_kv().check_invariants();
        result.replicas.back().host_kv = host_kv_summary(*replica);
      }
      if (num_prefill_ > 0 && static_cast<uint32_t>(replica->index()) < num_own_) {
        const bool prefill = static_cast<uint32_t>(replica->index()) < num_prefill_;
        result.replicas.back().role = prefill ? ReplicaRole::kPrefill : ReplicaRole::kDecode;
      }
      result.extrapolated_steps += replica->extrapolated_steps();
    }
    for (size_t k = 0; k < deployment_metrics_.size(); ++k) {
      const std::string& name =
          k == 0 ? sim_.config_.model.name : sim_.config_.deployments[k - 1].name;
      result.deployments.push_back({name, deployment_metrics_[k].summary()});
      if (k == 0) continue;
      for (uint32_t r = ends_[k - 1]; r < ends_[k]; ++r) {
        result.replicas[r].deployment = static_cast<uint32_t>(k);
      }
    }
    result.sessions = session_summary_of(*source_);
    if (result.sessions) result.sessions->cost_usd = cost_per_session(result);
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
        end_step(event.target);
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
        groups_[event.target].wave_pending = false;
        start_together(groups_[event.target]);
        break;
      case EventKind::kKvHandoff:
        on_handoff(event.payload);
        break;
      case EventKind::kKvLoaded:
        on_kv_loaded(event.target, event.payload);
        break;
      case EventKind::kHostKvLoaded:
        if (replicas_[event.target]->host_load_done(event.payload)) try_start(event.target);
        break;
      case EventKind::kHostKvStored:
        if (replicas_[event.target]->host_stores_done(event.payload)) try_start(event.target);
        break;
      default:
        throw std::logic_error("simulation: unexpected event kind");
    }
  }

  Progress progress() const override { return {done_, source_->expected_total()}; }

  void on_token(const RequestSpec& request, std::optional<double> gap_s) override {
    steps_without_progress_ = 0;
    if (service_) {
      service_->on_engine_token(request.id);
    } else if (gap_s) {
      inter_token_gap(request, *gap_s);
    }
  }

  void on_request_left(const RequestSpec& request, const RequestRecord& record) override {
    steps_without_progress_ = 0;
    // A decode instance that refused the request never loaded its KV: the prefill instance
    // still holds the blocks.
    const int p = flow_.prefill_replica(record.id);
    if (p >= 0 && replicas_[static_cast<size_t>(p)]->scheduler().release_kv(record.id)) {
      try_start(static_cast<uint32_t>(p));
    }
    const RequestRecord user_record = flow_.finish(record);
    if (service_) {
      service_->on_engine_left(user_record, loop_.now_s());
      return;
    }
    complete(request, user_record, loop_.now_s());
  }

  void deliver(const RequestSpec& request, double now_s) override {
    if (request.deployment > 0) {
      const size_t k = request.deployment;
      const uint32_t target = route(deployment_routers_[k - 1], request, ends_[k - 1], ends_[k]);
      replicas_[target]->admit(request, now_s, *this);
      try_start(target);
      return;
    }
    const uint32_t target = route(router_, request, 0, num_prefill_ > 0 ? num_prefill_ : num_own_);
    if (num_prefill_ > 0) {
      flow_.arrived(request, now_s);
      originals_.insert_or_assign(request.id, request);
      replicas_[target]->admit(DisaggregatedFlow::prefill_request(request), now_s, prefill_side_,
                               KvTransfer::kSendAfterFinish);
    } else {
      replicas_[target]->admit(request, now_s, *this);
    }
    try_start(target);
    if (service_ && arrivals_done()) {
      for (uint32_t r = 0; r < replicas_.size(); ++r) try_start(r);
    }
  }

  void complete(const RequestSpec& request, const RequestRecord& record, double now_s) override {
    ++done_;
    report_.request_left(record);
    if (!deployment_metrics_.empty()) deployment_metrics_[request.deployment].add(record);
    const double client_done_s = record.status == RequestOutcome::kOk
                                     ? now_s
                                     : std::max(now_s, record.arrival_s + kMinClientTurnaround_s);
    source_->on_request_left(request, record, client_done_s);
    schedule_next_arrival();
  }

  void abort(uint64_t id, double now_s) override {
    (void)now_s;
    flow_.forget(id);
    originals_.erase(id);
    // A disaggregated request can be on both sides at once: loading on a decode instance
    // while its prefill instance still holds its blocks.
    for (uint32_t r = 0; r < replicas_.size(); ++r) {
      if (replicas_[r]->abort(id)) try_start(r);
    }
  }

  void client_gap(const RequestSpec& request, double gap_s) override {
    inter_token_gap(request, gap_s);
  }

 private:
  // Data-parallel ranks whose MoE layers form one expert-parallel group: they step together.
  struct LockstepGroup {
    uint32_t first = 0;         // replica index of rank 0
    uint32_t count = 0;         // ranks
    bool wave_pending = false;  // a kDispatch is queued
  };
  static constexpr int32_t kNoGroup = -1;

  // What one replica's GPUs move per token of KV, and over which host link.
  struct KvPath {
    double bytes_per_token = 0;     // one GPU's share of a token's KV, all its layers
    double host_bandwidth_Bps = 0;  // KV offload: per direction, per GPU
  };

  // `servers` vLLM servers of parallel.dp replicas each (one per data-parallel rank), after
  // the replicas already made; an expert-parallel server's ranks form a lock-step group.
  void add_servers(int servers, const ParallelConfig& parallel, const SchedulerConfig& scheduler,
                   const CostModel& cost_model, const ReplicaOptions& options, KvPath kv) {
    for (int s = 0; s < servers; ++s) {
      const auto first = static_cast<uint32_t>(replicas_.size());
      for (int rank = 0; rank < parallel.dp; ++rank) {
        replicas_.emplace_back(std::make_unique<Replica>(static_cast<int>(replicas_.size()),
                                                         scheduler, cost_model, options));
        kv_.push_back(kv);
      }
      group_of_.resize(replicas_.size(), kNoGroup);
      if (!parallel.lockstep()) continue;
      for (uint32_t r = first; r < replicas_.size(); ++r) {
        group_of_[r] = static_cast<int32_t>(groups_.size());
      }
      groups_.push_back({first, static_cast<uint32_t>(parallel.dp), false});
    }
  }

  // The scenario's more deployments' replicas, after its own (each with its own speculative
  // model, router and metrics); their requests' metrics apart from the own deployment's.
  void add_deployments(const ReplicaOptions& own_options) {
    const SimulationConfig& c = sim_.config_;
    if (c.deployments.empty()) return;
    for (const MetricsOptions& m : sim_.deployment_metrics_) deployment_metrics_.emplace_back(m);
    ends_.push_back(num_own_);
    for (size_t k = 0; k < c.deployments.size(); ++k) {
      const DeploymentSpec& d = c.deployments[k];
      const Role& role = sim_.deployments_[k];
      ReplicaOptions options = own_options;
      options.vocab_size = d.model.vocab_size;
      options.sliding_window = d.model.sliding_window;
      options.speculative =
          make_speculative_cost_model(d.model, d.gpu, d.parallel, role.plan.engine, c.roofline);
      apply_async_scheduling(role.plan.engine, options);
      add_servers(d.parallel.servers, d.parallel, role.scheduler, *role.cost_model, options,
                  {role.plan.kv_bytes_per_token, host_bandwidth_Bps(role.plan, d.gpu)});
      ends_.push_back(static_cast<uint32_t>(replicas_.size()));
      deployment_routers_.emplace_back(d.router, c.seed ^ (0x6465706c6f79ULL + k));
    }
  }

  // Dollars of GPU time per completed session: every GPU of the run at its price, over the
  // request metrics' duration (first arrival to last answer), as $ per 1M tokens counts it.
  double cost_per_session(const SimulationResult& result) const {
    const MetricsOptions& m = sim_.config_.metrics;
    const double duration_s = result.summary.duration_s;
    if (!(m.price_per_gpu_hour > 0) || result.sessions->completed == 0 ||
        !std::isfinite(duration_s)) {
      return MetricsSummary::kNone;
    }
    return m.price_per_gpu_hour * m.num_gpus * duration_s / 3600.0 /
           static_cast<double>(result.sessions->completed);
  }

  void inter_token_gap(const RequestSpec& request, double gap_s) {
    report_.inter_token_gap(request, gap_s);
    if (!deployment_metrics_.empty()) {
      deployment_metrics_[request.deployment].add_itl(gap_s, request.id, request.arrival_s);
    }
  }

  // What a prefill instance reports: its token is not the client's (the decode instance
  // samples the first one again), and its finishing hands the request on.
  class PrefillSide final : public ReplicaListener {
   public:
    explicit PrefillSide(Driver& driver) : driver_(driver) {}
    void on_token(const RequestSpec&, std::optional<double>) override {}
    void on_request_left(const RequestSpec& request, const RequestRecord& record) override {
      driver_.on_prefilled(request, record);
    }

   private:
    Driver& driver_;
  };

  ReplicaListener& listener_for(uint32_t r) {
    return r < num_prefill_ ? static_cast<ReplicaListener&>(prefill_side_) : *this;
  }

  // Replicas [first, end) by `router`; returns the replica's index.
  uint32_t route(Router& router, const RequestSpec& request, size_t first, size_t end) {
    const std::span<ReplicaLoad> loads(loads_.data() + first, end - first);
    if (router.reads_load()) {
      for (size_t r = first; r < end; ++r) loads_[r] = replicas_[r]->load();
    }
    return static_cast<uint32_t>(first + router.route(request, loads));
  }

  void on_prefilled(const RequestSpec& request, const RequestRecord& record) {
    steps_without_progress_ = 0;
    const double now = loop_.now_s();
    if (record.status == RequestOutcome::kOk && !flow_.prefilled(record, now)) {
      // No longer wanted (aborted as it finished): nothing reads its blocks.
      replicas_[static_cast<size_t>(record.replica)]->scheduler().release_kv(request.id);
      return;
    }
    if (record.status != RequestOutcome::kOk) {
      // Refused by the prefill instance (too long): the user sees that refusal.
      flow_.forget(request.id);
      const auto it = originals_.find(request.id);
      const RequestSpec original = it != originals_.end() ? std::move(it->second) : request;
      if (it != originals_.end()) originals_.erase(it);
      on_request_left(original, record);
      return;
    }
    loop_.schedule(now + sim_.config_.disaggregation.kv_transfer.handoff_s, EventKind::kKvHandoff,
                   0, request.id);
  }

  void on_handoff(uint64_t id) {
    const auto it = originals_.find(id);
    if (it == originals_.end()) return;  // aborted on the way; its prefill blocks are freed
    const RequestSpec request = std::move(it->second);
    originals_.erase(it);
    const uint32_t d = route(decode_router_, request, num_prefill_, num_own_);
    replicas_[d]->admit(request, loop_.now_s(), *this, KvTransfer::kLoadPrompt);
    try_start(d);
  }

  void end_step(uint32_t r) {
    Replica& replica = *replicas_[r];
    replica.end_step(loop_.now_s(), listener_for(r));
    if (++steps_without_progress_ > livelock_steps_) {
      throw_stalled("no request produced a token or left in its last " +
                    std::to_string(livelock_steps_) + " engine steps");
    }
    if (replica.host_store_blocks() > 0) {
      // Copied to the host once the step that computed them has run (vLLM 0.11-0.14 submits a
      // step's stores after its forward pass).
      const double bytes = static_cast<double>(replica.host_store_blocks()) *
                           replica.scheduler().config().block_size * kv_[r].bytes_per_token;
      loop_.schedule(host_links_[r].store(loop_.now_s(), bytes), EventKind::kHostKvStored, r,
                     replica.host_store_step());
    }
    if (service_) service_->on_engine_step_end(loop_.now_s());
    try_start(r);
  }

  HostKvSummary host_kv_summary(const Replica& replica) const {
    const SchedulerStats st = replica.scheduler().stats();
    const HostKvLink& link = host_links_[static_cast<size_t>(replica.index())];
    HostKvSummary h;
    h.blocks = st.host_kv_blocks_total;
    h.hit_tokens = st.host_kv_hit_tokens;
    h.queried_tokens = replica.scheduler().kv_cache().prefix_stats().queries_tokens +
                       replica.scheduler().kv_cache().prefix_stats().preempted_queries_tokens;
    h.stored_blocks = st.host_kv_stored_blocks;
    h.evicted_blocks = st.host_kv_evicted_blocks;
    h.bandwidth_Bps = link.bandwidth_Bps();
    h.load_busy_s = link.load_busy_s();
    h.store_busy_s = link.store_busy_s();
    h.loaded_bytes = link.loaded_bytes();
    h.stored_bytes = link.stored_bytes();
    return h;
  }

  void start_host_load(uint32_t r, const KvLoad& load) {
    const double now = loop_.now_s();
    const double bytes = static_cast<double>(load.num_tokens) * kv_[r].bytes_per_token;
    const double done_s = host_links_[r].load(now, bytes);
    replicas_[r]->host_load_started(load.request_id, done_s - now);
    loop_.schedule(done_s, EventKind::kHostKvLoaded, r, load.request_id);
  }

  void start_kv_loads(uint32_t d) {
    const DisaggregationSpec& spec = sim_.config_.disaggregation;
    const double prefill_bytes = sim_.prefill_.plan.kv_bytes_per_token;
    const double decode_bytes = sim_.plan_.kv_bytes_per_token;
    for (const KvLoad& load : replicas_[d]->started_kv_loads()) {
      if (load.from_host) {
        start_host_load(d, load);
        continue;
      }
      const double now = loop_.now_s();
      flow_.load_started(load.request_id, now);
      const double transfer_s =
          spec.kv_transfer.transfer_s(load.num_tokens, prefill_bytes, decode_bytes);
      const double done_s = links_[d - num_prefill_].start(now, transfer_s, spec.kv_transfer,
                                                           flow_.prefill_start_s(load.request_id),
                                                           sim_.config_.model.num_layers);
      loop_.schedule(done_s, EventKind::kKvLoaded, d, load.request_id);
    }
  }

  void on_kv_loaded(uint32_t d, uint64_t id) {
    flow_.loaded(id, loop_.now_s());
    const int p = flow_.prefill_replica(id);
    if (p >= 0 && replicas_[static_cast<size_t>(p)]->scheduler().release_kv(id)) {
      try_start(static_cast<uint32_t>(p));
    }
    if (replicas_[d]->scheduler().finish_kv_load(id)) try_start(d);
  }

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
    if (const int32_t group = group_of_[r]; group != kNoGroup) {
      // Once every request of this instant has reached its replica (a kDispatch event at the
      // same time runs after them), so that replicas given work together start together.
      LockstepGroup& g = groups_[static_cast<size_t>(group)];
      if (!g.wave_pending) {
        g.wave_pending = true;
        loop_.schedule(loop_.now_s(), EventKind::kDispatch, static_cast<uint32_t>(group));
      }
      return;
    }
    if (replicas_[r]->busy()) return;
    if (const std::optional<double> duration = begin_step(r)) {
      loop_.schedule_in(*duration, EventKind::kStepEnd, r);
    }
  }

  // Expert parallelism over several replicas: vLLM runs the MoE layers of all data-parallel
  // ranks of a server together (idle ranks run dummy batches), so once none of the group's
  // replicas is busy each with work begins a step, all ending with the slowest.
  void start_together(const LockstepGroup& group) {
    const uint32_t first = group.first;
    const uint32_t end = first + group.count;
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
    if (!replicas_[r]->started_kv_loads().empty()) start_kv_loads(r);
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
    // With nothing else queued no event can ever finish what is active: sampling on would keep
    // the run alive for ever, so the loop drains instead and run() reports the stall.
    if (active && !loop_.empty()) {
      loop_.schedule_in(sim_.config_.sample_interval_s, EventKind::kSample);
    }
  }

  void check_not_stalled() const {
    bool unfinished = !source_->finished();
    for (const auto& replica : replicas_) unfinished = unfinished || replica->has_unfinished();
    if (unfinished) throw_stalled("nothing was left to run");
  }

  [[noreturn]] void throw_stalled(const std::string& what) const {
    std::ostringstream message;
    message << "the simulation stalled at " << loop_.now_s() << " s simulated: " << what
            << ", with " << done_;
    if (const uint64_t total = source_->expected_total(); total > 0) message << " of " << total;
    message << " requests finished";
    for (const auto& replica : replicas_) {
      if (!replica->has_unfinished()) continue;
      const SchedulerStats s = replica->scheduler().stats();
      message << "; replica " << replica->index() << ": " << s.num_running << " running, "
              << s.num_waiting << " waiting (" << s.num_loading_kv << " loading KV), "
              << s.kv_blocks_used << " of " << s.kv_blocks_total << " KV blocks in use";
    }
    message << ". This is a servesim defect: please report it with the scenario (seed "
            << sim_.config_.seed << ")";
    throw SimulationStalled(message.str());
  }

  const Simulation& sim_;
  Observer& observer_;
  EventLoop loop_;
  std::unique_ptr<RequestSource> source_;
  Router router_;  // the prefill instances' when disaggregated
  Router decode_router_;
  RunReport report_;
  PrefillSide prefill_side_;
  uint32_t num_prefill_ = 0;  // replicas [0, num_prefill_) are prefill instances
  uint32_t num_own_ = 0;      // replicas [0, num_own_) are the scenario's own deployment's
  // With more deployments, deployment k's replicas end at ends_[k] (ends_[0] = num_own_): a
  // more deployment k's are [ends_[k - 1], ends_[k]).
  std::vector<uint32_t> ends_;
  std::vector<Router> deployment_routers_;            // per more deployment
  std::vector<MetricsCollector> deployment_metrics_;  // per deployment, own first; or none
  DisaggregatedFlow flow_;
  // Disaggregated requests as sent, until handed to a decode instance.
  std::unordered_map<uint64_t, RequestSpec> originals_;
  std::vector<KvTransferLink> links_;   // per decode replica (each rank of a decode instance)
  std::vector<KvPath> kv_;              // per replica
  std::vector<HostKvLink> host_links_;  // per replica, with KV offload
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<ReplicaLoad> loads_;
  std::vector<double> gather_timer_s_;
  std::vector<LockstepGroup> groups_;     // the lock-stepped servers
  std::vector<int32_t> group_of_;         // per replica: its index in groups_, or kNoGroup
  std::unique_ptr<ServicePath> service_;  // null for "service": "none"
  double pending_arrival_s_ = kNoEvent;
  uint64_t done_ = 0;
  uint64_t steps_without_progress_ = 0;  // engine steps since a request last made progress
  uint64_t livelock_steps_ = 0;          // more of them is a stall (see the constructor)
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
  sc.num_host_kv_blocks = plan.num_host_kv_blocks;
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

void check_deployments(const SimulationConfig& config) {
  if (config.deployments.empty()) return;
  if (config.workload.kind != WorkloadKind::kAgent) {
    throw ConfigError(
        "deployments: only an agent workload's llm steps call another deployment (by its "
        "\"deployment\"); other workloads send every request to the scenario's own: remove "
        "\"deployments\" or simulate each deployment apart");
  }
  const nlohmann::json& agent = config.workload.agent;
  if (agent.is_object() && ((agent.contains("record_trace") && agent.at("record_trace") == true) ||
                            agent.contains("trace"))) {
    throw ConfigError(
        "deployments: a session trace has no deployment per call yet, so one run with several "
        "deployments can neither record nor replay one (drop agent.record_trace / agent.trace)");
  }
}

void Simulation::build_role(const HardwareSpec& gpu, const ParallelConfig& parallel,
                            const EngineConfig& engine, MemoryPlan& plan,
                            SchedulerConfig& scheduler,
                            std::unique_ptr<CostModel>& cost_model) const {
  check_async_scheduling(engine, parallel, config_.batching);
  plan = MemoryPlan::compute(config_.model, gpu, parallel, engine);
  scheduler = scheduler_config_for(config_, plan);
  const CostModelChoice choice{config_.profile.get(), config_.calibrated, config_.roofline};
  cost_model = make_cost_model(choice, config_.model, gpu, parallel, plan.engine);
}

void Simulation::build_disaggregated() {
  const DisaggregationSpec& d = config_.disaggregation;
  if (config_.parallel.dp != 1) {
    throw ConfigError(
        "parallel.data_parallel_size must be 1 with disaggregation: set "
        "disaggregation.prefill.instances and disaggregation.decode.instances instead");
  }
  if (config_.batching == SchedulingPolicy::kStatic) {
    throw ConfigError(
        "engine.batching \"static\" cannot be disaggregated (a prefill instance runs each "
        "request for one token): use \"continuous\"");
  }
  const std::pair<const DisaggregatedRole*, const char*> roles[] = {{&d.prefill, "prefill"},
                                                                    {&d.decode, "decode"}};
  for (const auto& [role, name] : roles) {
    try {
      if (role == &d.prefill) {
        build_role(role->gpu, role->parallel, role->engine, prefill_.plan, prefill_.scheduler,
                   prefill_.cost_model);
        // A prefill instance answers with the first token, which no draft precedes; its
        // speculative config only sizes its memory (a draft model's weights).
        prefill_.scheduler.num_speculative_tokens = 0;
      } else {
        build_role(role->gpu, role->parallel, role->engine, plan_, scheduler_config_, cost_model_);
      }
    } catch (const ConfigError& e) {
      throw ConfigError(std::string("disaggregation.") + name + ": " + e.what());
    }
  }
  config_.metrics.num_gpus = d.total_gpus();
  if (config_.metrics.price_per_gpu_hour == 0) {
    // The deployment's hourly price spread over its GPUs.
    const double prefill_gpus = d.prefill.instances * d.prefill.parallel.total_gpus();
    const double decode_gpus = d.decode.instances * d.decode.parallel.total_gpus();
    config_.metrics.price_per_gpu_hour = (prefill_gpus * d.prefill.gpu.price_per_hour_usd +
                                          decode_gpus * d.decode.gpu.price_per_hour_usd) /
                                         (prefill_gpus + decode_gpus);
  }
}

// Each more deployment is sized and priced on its own model and GPU, by the roofline: a
// calibrated profile describes the scenario's own model and GPU.
void Simulation::build_deployments(bool price_given) {
  check_deployments(config_);
  double gpus = config_.metrics.num_gpus;
  double price = gpus * config_.metrics.price_per_gpu_hour;
  // Each deployment's calls are counted on its own GPUs at its price (the scenario's, when set).
  const auto own_metrics = [&](int own_gpus, double gpu_price) {
    MetricsOptions m = config_.metrics;
    m.num_gpus = own_gpus;
    if (!price_given) m.price_per_gpu_hour = gpu_price;
    return m;
  };
  // The own deployment's price per GPU as built (a disaggregated one's, averaged over roles).
  deployment_metrics_.push_back(
      own_metrics(config_.metrics.num_gpus, config_.metrics.price_per_gpu_hour));
  for (size_t k = 0; k < config_.deployments.size(); ++k) {
    const DeploymentSpec& d = config_.deployments[k];
    Role& role = deployments_.emplace_back();
    try {
      check_async_scheduling(d.engine, d.parallel, config_.batching);
      role.plan = MemoryPlan::compute(d.model, d.gpu, d.parallel, d.engine);
      role.scheduler = scheduler_config_for(config_, role.plan);
      const CostModelChoice choice{nullptr, config_.calibrated, config_.roofline};
      role.cost_model = make_cost_model(choice, d.model, d.gpu, d.parallel, role.plan.engine);
      check_host_link(role.plan, d.gpu);
    } catch (const ConfigError& e) {
      throw ConfigError("deployments[" + std::to_string(k) + "] (\"" + d.name + "\"): " + e.what());
    }
    const int own = d.parallel.total_gpus();
    gpus += own;
    price += own * d.gpu.price_per_hour_usd;
    deployment_metrics_.push_back(own_metrics(own, d.gpu.price_per_hour_usd));
  }
  config_.metrics.num_gpus = static_cast<int>(gpus);
  // The scenario's price_per_gpu_hour holds for every GPU; else each GPU's own, averaged.
  if (!price_given) config_.metrics.price_per_gpu_hour = price / gpus;
}

Simulation::Simulation(SimulationConfig config) : config_(std::move(config)) {
  const bool price_given = config_.metrics.price_per_gpu_hour != 0;
  if (config_.disaggregation.enabled) {
    build_disaggregated();
  } else {
    build_role(config_.gpu, config_.parallel, config_.engine, plan_, scheduler_config_,
               cost_model_);
    config_.metrics.num_gpus = config_.parallel.total_gpus();
    if (config_.metrics.price_per_gpu_hour == 0) {
      config_.metrics.price_per_gpu_hour = config_.gpu.price_per_hour_usd;
    }
  }
  if (!config_.deployments.empty()) build_deployments(price_given);
  check_run_settings(config_);
  for (const bool prefill : {false, true}) {
    try {
      check_host_link(prefill ? prefill_.plan : plan_, gpu_of(prefill));
    } catch (const ConfigError& e) {
      throw ConfigError(std::string(prefill ? "disaggregation.prefill: " : "") + e.what());
    }
  }
  if (config_.workload.kind == WorkloadKind::kAgent) {
    parse_agent_workload(config_.workload, agent_limits());
  }
}

double Simulation::host_kv_bandwidth_Bps(bool prefill) const {
  return host_bandwidth_Bps(prefill ? prefill_.plan : plan_, gpu_of(prefill));
}

const HardwareSpec& Simulation::gpu_of(bool prefill) const {
  const DisaggregationSpec& d = config_.disaggregation;
  if (!d.enabled) return config_.gpu;
  return prefill ? d.prefill.gpu : d.decode.gpu;
}

AgentLimits Simulation::agent_limits() const {
  int max_model_len = scheduler_config_.max_model_len;
  if (config_.disaggregation.enabled) {
    max_model_len = std::min(max_model_len, prefill_.scheduler.max_model_len);
  }
  AgentLimits limits;
  limits.deployments.push_back({config_.model.name, max_model_len});
  for (size_t k = 0; k < deployments_.size(); ++k) {
    limits.deployments.push_back(
        {config_.deployments[k].name, deployments_[k].scheduler.max_model_len});
  }
  for (const TenantSpec& t : config_.service.tenants) limits.tenants.push_back(t.name);
  return limits;
}

Simulation::~Simulation() = default;

SimulationResult Simulation::run(Observer& observer) {
  Driver driver(*this, observer);
  return driver.run();
}

}  // namespace servesim
