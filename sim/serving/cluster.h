// Cluster: one deployment of a run as it serves — its replicas (each the shared Scheduler plus
// a SimulatedExecutor), the routers among them, the lock-step groups of expert-parallel
// servers, and for a disaggregated deployment its prefill and decode instances with the KV
// transfer links between them and the flow of each request across both; with KV offload,
// each replica's link to its host tier. A run has one Cluster per deployment, every one built
// the same way from a ClusterSpec; the run hands it requests (deliver, abort) and the events
// it owns (owns, handle), and it reports what users see through a ClusterListener.
//
// Replica numbering: a cluster's replicas are numbered on from `first_replica`, so indices are
// unique across the run (records, time series and step events name them), and its lock-step
// groups on from `first_group`; its KV hand-off events carry its `index`. Event kinds it owns:
// kStepEnd, kTimeout (static-batch gathering), kDispatch (a lock-step group's wave), kKvHandoff,
// kKvLoaded, kHostKvLoaded, kHostKvStored.
//
// Ownership: owns its replicas, routers, links and flow; borrows the EventLoop, the listener,
// and each role's scheduler config and cost model (they must outlive it). Not thread-safe.
// Invariant: a request of this cluster is in at most its prefill side and one decode replica.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/sched/scheduler_config.h"
#include "models/cost_model.h"
#include "models/parallel_config.h"
#include "sim/core/event_loop.h"
#include "sim/core/observer.h"
#include "sim/metrics/replica_summary.h"
#include "sim/serving/disaggregated_flow.h"
#include "sim/serving/disaggregation_spec.h"
#include "sim/serving/host_kv_link.h"
#include "sim/serving/kv_transfer_link.h"
#include "sim/serving/replica.h"
#include "sim/serving/router.h"

namespace servesim {

// What a cluster tells the run around it. As a ReplicaListener it hears what users see: a
// token (a prefill instance's is not one; on_token is called for every token, keep it cheap)
// and a request leaving the deployment with the record the user sees (a disaggregated
// request's composed from both sides). An aggregated deployment's replicas report to it
// directly, so a token costs one call.
class ClusterListener : public ReplicaListener {
 public:
  // A request moved on without a token for the user (a prefill instance finished it).
  virtual void on_progress() = 0;
  // One of the cluster's replicas ended a step at now_s (after its updates took effect).
  virtual void on_step_end(double now_s) = 0;
  // Nothing more will reach any deployment: static batches stop gathering.
  virtual bool arrivals_done() = 0;
};

// One role's instances: `servers` `vllm serve` instances of parallel.dp replicas each.
struct ClusterRole {
  int servers = 1;
  ParallelConfig parallel;
  const SchedulerConfig* scheduler = nullptr;  // borrowed; REQUIRES: non-null
  const CostModel* cost_model = nullptr;       // borrowed; REQUIRES: non-null
  ReplicaOptions options;
  double kv_bytes_per_token = 0;     // bytes: one GPU's share of a token's KV, all its layers
  double host_kv_bandwidth_Bps = 0;  // bytes/s per direction of each GPU's host link
};

struct ClusterSpec {
  uint32_t index = 0;  // the deployment's place in the run (RequestSpec::deployment)
  // One role (aggregated replicas) or two: the prefill instances, then the decode instances.
  std::vector<ClusterRole> roles;
  RouterPolicy router = RouterPolicy::kRoundRobin;  // to the prefill instances when disaggregated
  uint64_t router_seed = 0;
  RouterPolicy decode_router = RouterPolicy::kRoundRobin;  // disaggregated only
  uint64_t decode_router_seed = 0;
  KvTransferSpec kv_transfer;           // disaggregated only
  int num_layers = 0;                   // the model's, for layer-wise KV transfers
  double static_batch_timeout_s = 0.1;  // seconds: longest wait to fill a static batch
  double host_kv_latency_s = 0;         // seconds a host-tier transfer costs beside its bytes

  bool disaggregated() const { return roles.size() == 2; }
  // REQUIRES: disaggregated().
  const ClusterRole& prefill() const { return roles.front(); }
  // The replicas that answer users: the aggregated ones, or the decode instances.
  const ClusterRole& serving() const { return roles.back(); }
};

class Cluster final : public ReplicaListener {
 public:
  // REQUIRES: one or two roles. Throws ConfigError for an invalid scheduler config.
  Cluster(const ClusterSpec& spec, uint32_t first_replica, uint32_t first_group, EventLoop& loop,
          ClusterListener& listener);
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  static bool owns(EventKind kind) {
    constexpr uint32_t kOwned = event_bit(EventKind::kStepEnd) | event_bit(EventKind::kTimeout) |
                                event_bit(EventKind::kDispatch) | event_bit(EventKind::kKvHandoff) |
                                event_bit(EventKind::kKvLoaded) |
                                event_bit(EventKind::kHostKvLoaded) |
                                event_bit(EventKind::kHostKvStored);
    return (kOwned & event_bit(kind)) != 0;
  }
  // REQUIRES: owns(event.kind) and the event is this cluster's (its replica, group or index).
  void handle(const Event& event);

  // The request reaches the deployment at now_s: routed, admitted, started.
  void deliver(const RequestSpec& request, double now_s);
  // Drops request `id` wherever it is (a disaggregated one may be on both sides at once).
  void abort(uint64_t id);
  // Every replica starts a step if it is idle with work.
  void try_start_all();

  uint32_t first_replica() const { return first_; }
  uint32_t num_replicas() const { return static_cast<uint32_t>(replicas_.size()); }
  uint32_t first_group() const { return first_group_; }
  uint32_t num_groups() const { return static_cast<uint32_t>(groups_.size()); }
  // The longest max_model_len of its replicas, tokens.
  int max_model_len() const;
  bool has_unfinished() const;
  // One time-series sample per replica to the observer; whether any replica has work left.
  bool sample(double now_s, Observer& observer) const;
  // Once, at the end of a run: checks every block pool and returns each replica's summary.
  std::vector<ReplicaSummary> summaries() const;
  int64_t extrapolated_steps() const;
  // "; replica N: ... running, ..." for each replica with work left (a stall's message).
  void describe_unfinished(std::ostream& out) const;

  // ReplicaListener, for a disaggregated deployment's decode instances.
  void on_token(const RequestSpec& request, std::optional<double> gap_s) override;
  void on_request_left(const RequestSpec& request, const RequestRecord& record) override;

 private:
  // Data-parallel ranks whose MoE layers form one expert-parallel group: they step together.
  struct LockstepGroup {
    uint32_t first = 0;         // local replica index of rank 0
    uint32_t count = 0;         // ranks
    bool wave_pending = false;  // a kDispatch is queued
  };
  static constexpr int32_t kNoGroup = -1;

  // What a prefill instance reports: its token is not the client's (the decode instance
  // samples the first one again), and its finishing hands the request on.
  class PrefillSide final : public ReplicaListener {
   public:
    explicit PrefillSide(Cluster& cluster) : cluster_(cluster) {}
    void on_token(const RequestSpec&, std::optional<double>) override {}
    void on_request_left(const RequestSpec& request, const RequestRecord& record) override {
      cluster_.on_prefilled(request, record);
    }

   private:
    Cluster& cluster_;
  };

  void add_servers(const ClusterRole& role);
  uint32_t local(uint32_t replica) const { return replica - first_; }
  ReplicaListener& listener_for(uint32_t r);
  // Where the replicas that answer users report: the run itself when aggregated.
  ReplicaListener& serving_listener();
  uint32_t route(Router& router, const RequestSpec& request, uint32_t first, uint32_t end);
  void try_start(uint32_t r);
  void start_together(LockstepGroup& group);
  std::optional<double> begin_step(uint32_t r);
  void end_step(uint32_t r);
  void on_prefilled(const RequestSpec& request, const RequestRecord& record);
  void on_handoff(uint64_t id);
  void start_kv_loads(uint32_t d);
  void start_host_load(uint32_t r, const KvLoad& load);
  void on_kv_loaded(uint32_t d, uint64_t id);
  void release_prefill_blocks(uint64_t id);
  HostKvSummary host_kv_summary(uint32_t r) const;

  ClusterSpec spec_;
  uint32_t first_;        // global index of replicas_[0]
  uint32_t first_group_;  // global index of groups_[0]
  EventLoop& loop_;
  ClusterListener& listener_;
  PrefillSide prefill_side_;
  Router router_;
  Router decode_router_;
  uint32_t num_prefill_ = 0;  // local replicas [0, num_prefill_) are prefill instances
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<double> kv_bytes_per_token_;  // per local replica
  std::vector<ReplicaLoad> loads_;
  std::vector<double> gather_timer_s_;  // per local replica: its static-batch timer, or none
  std::vector<LockstepGroup> groups_;
  std::vector<int32_t> group_of_;       // per local replica: its index in groups_, or kNoGroup
  std::vector<KvTransferLink> links_;   // per decode replica (each rank of a decode instance)
  std::vector<HostKvLink> host_links_;  // per local replica, with KV offload; else empty
  DisaggregatedFlow flow_;
  // Disaggregated requests as sent, until handed to a decode instance.
  std::unordered_map<uint64_t, RequestSpec> originals_;
};

}  // namespace servesim
