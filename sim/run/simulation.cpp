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

// Executes the events of one run as a composition: the workload's source sends requests,
// through the service path when there is one, to the cluster of the deployment each names;
// what the clusters return reaches the report (and the sources' clients). Arrivals and samples
// are its own events; the service path's and the clusters' go to them.
class Simulation::Driver final : public EventHandler,
                                 public ClusterListener,
                                 public ServicePathHost {
 public:
  Driver(const Simulation& sim, Observer& observer)
      : sim_(sim),
        observer_(observer),
        source_(make_simulation_source(sim.config_.workload, sim.agent_limits(), observer)),
        report_(sim.config_.metrics, sim.config_.workload, sim.config_.step_warmup_s, observer,
                tenant_labels(sim.config_.service.tenants)),
        specs_(sim.cluster_specs()) {
    const SimulationConfig& c = sim.config_;
    uint32_t replicas = 0;
    uint32_t groups = 0;
    int longest = 0;
    for (const ClusterSpec& spec : specs_) {
      auto& cluster =
          clusters_.emplace_back(std::make_unique<Cluster>(spec, replicas, groups, loop_, *this));
      replicas += cluster->num_replicas();
      groups += cluster->num_groups();
      cluster_of_replica_.resize(replicas, spec.index);
      cluster_of_group_.resize(groups, spec.index);
      longest = std::max(longest, cluster->max_model_len());
    }
    for (const MetricsOptions& m : sim.deployment_metrics_) deployment_metrics_.emplace_back(m);
    // Every step moves a prefill on by a token or samples one, so no request producing a token
    // or leaving in more steps than the longest prompt's recompute could take, and a million
    // more, is a run going round in circles (a preempted request that took back only the blocks
    // it gave up and ran out again, for ever, once was).
    livelock_steps_ = kLivelockSteps + 2 * static_cast<uint64_t>(longest);
    if (c.service.enabled) {
      const uint32_t clients = TenantAssigner::partitioned_clients(c.workload);
      // A disaggregated deployment's decode instances stream its answers, each a `vllm serve`
      // of its own with its own API server.
      std::vector<ServiceDeployment> deployments;
      for (const ClusterSpec& spec : specs_) {
        deployments.push_back(
            {deployment_name(spec.index), spec.disaggregated() ? spec.serving().servers : 1});
      }
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
    for (const auto& cluster : clusters_) {
      for (ReplicaSummary& s : cluster->summaries()) result.replicas.push_back(std::move(s));
      result.extrapolated_steps += cluster->extrapolated_steps();
    }
    for (size_t k = 0; k < deployment_metrics_.size(); ++k) {
      result.deployments.push_back(
          {deployment_name(static_cast<uint32_t>(k)), deployment_metrics_[k].summary()});
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
    } else if (Cluster::owns(event.kind)) {
      cluster_of(event).handle(event);
    } else if (event.kind == EventKind::kArrival) {
      on_arrival();
    } else if (event.kind == EventKind::kSample) {
      on_sample();
    } else {
      throw std::logic_error("simulation: unexpected event kind");
    }
  }

  Progress progress() const override { return {done_, source_->expected_total()}; }

  // ClusterListener.
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
    if (service_) {
      service_->on_engine_left(record, loop_.now_s());
      return;
    }
    complete(request, record, loop_.now_s());
  }

  void on_progress() override { steps_without_progress_ = 0; }

  void on_step_end(double now_s) override {
    if (++steps_without_progress_ > livelock_steps_) {
      throw_stalled("no request produced a token or left in its last " +
                    std::to_string(livelock_steps_) + " engine steps");
    }
    if (service_) service_->on_engine_step_end(now_s);
  }

  // Nothing more will reach the clusters: the workload is exhausted and nothing is on its
  // way through the service path.
  bool arrivals_done() override {
    return source_->finished() && (!service_ || service_->upstream() == 0);
  }

  // ServicePathHost.
  void deliver(const RequestSpec& request, double now_s) override {
    clusters_[request.deployment]->deliver(request, now_s);
    if (request.deployment == 0 && service_ && arrivals_done()) start_all();
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
    for (const auto& cluster : clusters_) cluster->abort(id);
  }

  void client_gap(const RequestSpec& request, double gap_s) override {
    inter_token_gap(request, gap_s);
  }

 private:
  Cluster& cluster_of(const Event& event) {
    switch (event.kind) {
      case EventKind::kDispatch:
        return *clusters_[cluster_of_group_[event.target]];
      case EventKind::kKvHandoff:
        return *clusters_[event.target];
      default:
        return *clusters_[cluster_of_replica_[event.target]];
    }
  }

  const std::string& deployment_name(uint32_t k) const {
    return k == 0 ? sim_.config_.model.name : sim_.config_.deployments[k - 1].name;
  }

  void start_all() {
    for (const auto& cluster : clusters_) cluster->try_start_all();
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
    if (arrivals_done()) start_all();
  }

  void on_sample() {
    bool active = !source_->finished();
    for (const auto& cluster : clusters_) {
      const bool working = cluster->sample(loop_.now_s(), observer_);
      active = active || working;
    }
    // With nothing else queued no event can ever finish what is active: sampling on would keep
    // the run alive for ever, so the loop drains instead and run() reports the stall.
    if (active && !loop_.empty()) {
      loop_.schedule_in(sim_.config_.sample_interval_s, EventKind::kSample);
    }
  }

  void check_not_stalled() {
    bool unfinished = !source_->finished();
    for (const auto& cluster : clusters_) unfinished = unfinished || cluster->has_unfinished();
    if (unfinished) throw_stalled("nothing was left to run");
  }

  [[noreturn]] void throw_stalled(const std::string& what) const {
    std::ostringstream message;
    message << "the simulation stalled at " << loop_.now_s() << " s simulated: " << what
            << ", with " << done_;
    if (const uint64_t total = source_->expected_total(); total > 0) message << " of " << total;
    message << " requests finished";
    for (const auto& cluster : clusters_) cluster->describe_unfinished(message);
    message << ". This is a servesim defect: please report it with the scenario (seed "
            << sim_.config_.seed << ")";
    throw SimulationStalled(message.str());
  }

  const Simulation& sim_;
  Observer& observer_;
  EventLoop loop_;
  std::unique_ptr<RequestSource> source_;
  RunReport report_;
  std::vector<ClusterSpec> specs_;
  std::vector<std::unique_ptr<Cluster>> clusters_;    // per deployment, the scenario's own first
  std::vector<uint32_t> cluster_of_replica_;          // per replica (global index): its cluster
  std::vector<uint32_t> cluster_of_group_;            // per lock-step group: its cluster
  std::vector<MetricsCollector> deployment_metrics_;  // per deployment, own first; or none
  std::unique_ptr<ServicePath> service_;              // null for "service": "none"
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

Simulation::Role Simulation::build_role(const HardwareSpec& gpu, const ParallelConfig& parallel,
                                        const EngineConfig& engine) const {
  check_async_scheduling(engine, parallel, config_.batching);
  Role role;
  role.plan = MemoryPlan::compute(config_.model, gpu, parallel, engine);
  role.scheduler = scheduler_config_for(config_, role.plan);
  const CostModelChoice choice{config_.profile.get(), config_.calibrated, config_.roofline};
  role.cost_model = make_cost_model(choice, config_.model, gpu, parallel, role.plan.engine);
  return role;
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
        prefill_ = build_role(role->gpu, role->parallel, role->engine);
        // A prefill instance answers with the first token, which no draft precedes; its
        // speculative config only sizes its memory (a draft model's weights).
        prefill_.scheduler.num_speculative_tokens = 0;
      } else {
        own_ = build_role(role->gpu, role->parallel, role->engine);
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
    own_ = build_role(config_.gpu, config_.parallel, config_.engine);
    config_.metrics.num_gpus = config_.parallel.total_gpus();
    if (config_.metrics.price_per_gpu_hour == 0) {
      config_.metrics.price_per_gpu_hour = config_.gpu.price_per_hour_usd;
    }
  }
  if (!config_.deployments.empty()) build_deployments(price_given);
  check_run_settings(config_);
  for (const bool prefill : {false, true}) {
    try {
      check_host_link(prefill ? prefill_.plan : own_.plan, gpu_of(prefill));
    } catch (const ConfigError& e) {
      throw ConfigError(std::string(prefill ? "disaggregation.prefill: " : "") + e.what());
    }
  }
  if (config_.workload.kind == WorkloadKind::kAgent) {
    parse_agent_workload(config_.workload, agent_limits());
  }
}

double Simulation::host_kv_bandwidth_Bps(bool prefill) const {
  return host_bandwidth_Bps(prefill ? prefill_.plan : own_.plan, gpu_of(prefill));
}

const HardwareSpec& Simulation::gpu_of(bool prefill) const {
  const DisaggregationSpec& d = config_.disaggregation;
  if (!d.enabled) return config_.gpu;
  return prefill ? d.prefill.gpu : d.decode.gpu;
}

AgentLimits Simulation::agent_limits() const {
  int max_model_len = own_.scheduler.max_model_len;
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

// Each deployment as its cluster builds it: the roles as built here, their replicas' options,
// routers and seeds. The seeds are those the run has always used, so fingerprints hold.
std::vector<ClusterSpec> Simulation::cluster_specs() const {
  const SimulationConfig& c = config_;
  const DisaggregationSpec& d = c.disaggregation;
  const auto role = [&](int servers, const ParallelConfig& parallel, const Role& built,
                        const ReplicaOptions& options, double host_bandwidth) {
    ClusterRole r;
    r.servers = servers;
    r.parallel = parallel;
    r.scheduler = &built.scheduler;
    r.cost_model = built.cost_model.get();
    r.options = options;
    r.kv_bytes_per_token = built.plan.kv_bytes_per_token;
    r.host_kv_bandwidth_Bps = host_bandwidth;
    return r;
  };
  const auto base = [&](uint32_t index) {
    ClusterSpec spec;
    spec.index = index;
    spec.static_batch_timeout_s = c.static_batch_timeout_s;
    spec.host_kv_latency_s = kHostKvLatency_s;
    return spec;
  };
  ReplicaOptions options;
  options.vocab_size = c.model.vocab_size;
  options.sliding_window = c.model.sliding_window;
  // Only decode steps speculate: a disaggregated deployment's are its decode instances'.
  options.speculative = make_speculative_cost_model(c.model, d.enabled ? d.decode.gpu : c.gpu,
                                                    d.enabled ? d.decode.parallel : c.parallel,
                                                    own_.plan.engine, c.roofline);
  options.seed = c.seed;
  apply_async_scheduling(own_.plan.engine, options);

  std::vector<ClusterSpec> specs;
  ClusterSpec& own = specs.emplace_back(base(0));
  own.num_layers = c.model.num_layers;
  own.router = d.enabled ? d.prefill_router : c.router;
  own.router_seed = c.seed ^ 0x726f75746572ULL;
  own.decode_router = d.decode_router;
  own.decode_router_seed = c.seed ^ 0x6465636f6465ULL;
  own.kv_transfer = d.kv_transfer;
  if (d.enabled) {
    ReplicaOptions prefill_options = options;
    prefill_options.speculative = nullptr;
    apply_async_scheduling(prefill_.plan.engine, prefill_options);
    own.roles.push_back(role(d.prefill.instances, d.prefill.parallel, prefill_, prefill_options,
                             host_kv_bandwidth_Bps(true)));
    own.roles.push_back(
        role(d.decode.instances, d.decode.parallel, own_, options, host_kv_bandwidth_Bps()));
  } else {
    own.roles.push_back(
        role(c.parallel.servers, c.parallel, own_, options, host_kv_bandwidth_Bps()));
  }
  for (size_t k = 0; k < c.deployments.size(); ++k) {
    const DeploymentSpec& more = c.deployments[k];
    const Role& built = deployments_[k];
    ReplicaOptions more_options = options;
    more_options.vocab_size = more.model.vocab_size;
    more_options.sliding_window = more.model.sliding_window;
    more_options.speculative = make_speculative_cost_model(more.model, more.gpu, more.parallel,
                                                           built.plan.engine, c.roofline);
    apply_async_scheduling(built.plan.engine, more_options);
    ClusterSpec& spec = specs.emplace_back(base(static_cast<uint32_t>(k + 1)));
    spec.num_layers = more.model.num_layers;
    spec.router = more.router;
    spec.router_seed = c.seed ^ (0x6465706c6f79ULL + k);
    spec.roles.push_back(role(more.parallel.servers, more.parallel, built, more_options,
                              host_bandwidth_Bps(built.plan, more.gpu)));
  }
  return specs;
}

Simulation::~Simulation() = default;

SimulationResult Simulation::run(Observer& observer) {
  Driver driver(*this, observer);
  return driver.run();
}

}  // namespace servesim
