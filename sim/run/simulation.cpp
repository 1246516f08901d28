#include "sim/run/simulation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "models/config_error.h"
#include "sim/agent/agent_workload.h"
#include "sim/core/event_loop.h"
#include "sim/service/service_path.h"
#include "sim/serving/cluster.h"
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
                tenant_labels(sim.config_.service.tenants)) {
    const SimulationConfig& c = sim.config_;
    uint32_t replicas = 0;
    uint32_t groups = 0;
    int longest = 0;
    for (uint32_t k = 0; k < sim.deployments_.size(); ++k) {
      const ClusterSpec spec = sim.deployments_[k].cluster_spec(k, c);
      auto& cluster =
          clusters_.emplace_back(std::make_unique<Cluster>(spec, replicas, groups, loop_, *this));
      replicas += cluster->num_replicas();
      groups += cluster->num_groups();
      cluster_of_replica_.resize(replicas, spec.index);
      cluster_of_group_.resize(groups, spec.index);
      longest = std::max(longest, cluster->max_model_len());
    }
    if (sim.deployments_.size() > 1) {
      for (const BuiltDeployment& b : sim.deployments_) deployment_metrics_.emplace_back(b.metrics);
    }
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
      for (const BuiltDeployment& b : sim.deployments_) {
        const DisaggregationSpec& d = b.spec.disaggregation;
        deployments.push_back({b.spec.name, d.enabled ? d.decode.instances : 1});
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

  const std::string& deployment_name(uint32_t k) const { return sim_.deployments_[k].spec.name; }

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

Simulation::Simulation(SimulationConfig config) : config_(std::move(config)) {
  check_deployments(config_);
  deployments_.push_back(BuiltDeployment::build(own_deployment(config_), config_));
  for (size_t k = 0; k < config_.deployments.size(); ++k) {
    const DeploymentSpec& more = config_.deployments[k];
    try {
      deployments_.push_back(BuiltDeployment::build(more, config_));
    } catch (const ConfigError& e) {
      throw ConfigError("deployments[" + std::to_string(k) + "] (\"" + more.name +
                        "\"): " + e.what());
    }
  }
  count_gpus();
  check_run_settings(config_);
  if (config_.workload.kind == WorkloadKind::kAgent) {
    parse_agent_workload(config_.workload, agent_limits());
  }
}

// The run's GPUs are every deployment's; the scenario's price_per_gpu_hour holds for each of
// them, else each GPU's own, averaged.
void Simulation::count_gpus() {
  const bool price_given = config_.metrics.price_per_gpu_hour != 0;
  double gpus = 0;
  double dollars_per_hour = 0;
  for (const BuiltDeployment& b : deployments_) {
    gpus += b.metrics.num_gpus;
    dollars_per_hour += b.metrics.num_gpus * b.metrics.price_per_gpu_hour;
  }
  config_.metrics.num_gpus = static_cast<int>(gpus);
  if (price_given) return;
  config_.metrics.price_per_gpu_hour =
      deployments_.size() == 1 ? own().metrics.price_per_gpu_hour : dollars_per_hour / gpus;
}

const BuiltRole& Simulation::own_prefill() const {
  static const BuiltRole kNone;
  return own().prefill ? *own().prefill : kNone;
}

double Simulation::host_kv_bandwidth_Bps(bool prefill) const {
  return own().host_kv_bandwidth_Bps(prefill);
}

AgentLimits Simulation::agent_limits() const {
  AgentLimits limits;
  for (const BuiltDeployment& b : deployments_) {
    limits.deployments.push_back({b.spec.name, b.max_model_len()});
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
