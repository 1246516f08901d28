#include "sim/serving/cluster.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "sim/serving/run_report.h"

namespace servesim {
namespace {

constexpr double kNoEvent = std::numeric_limits<double>::infinity();

}  // namespace

Cluster::Cluster(const ClusterSpec& spec, uint32_t first_replica, uint32_t first_group,
                 EventLoop& loop, ClusterListener& listener)
    : spec_(spec),
      first_(first_replica),
      first_group_(first_group),
      loop_(loop),
      listener_(listener),
      prefill_side_(*this),
      router_(spec.router, spec.router_seed),
      decode_router_(spec.decode_router, spec.decode_router_seed) {
  if (spec_.roles.empty() || spec_.roles.size() > 2) {
    throw std::logic_error("cluster: a deployment has one role or two");
  }
  if (spec_.disaggregated()) {
    add_servers(spec_.prefill());
    num_prefill_ = num_replicas();
    links_.resize(static_cast<size_t>(spec_.serving().servers * spec_.serving().parallel.dp));
  }
  add_servers(spec_.serving());
  const bool any_host_tier =
      std::any_of(replicas_.begin(), replicas_.end(), [](const std::unique_ptr<Replica>& r) {
        return r->scheduler().config().num_host_kv_blocks > 0;
      });
  if (any_host_tier) {
    // Every replica gets a link (one without a host tier never uses its own), each with its
    // GPUs' bandwidth.
    const auto link_of = [&](uint32_t r) {
      const bool prefill = r < num_prefill_;
      return (prefill ? spec_.prefill() : spec_.serving()).host_kv_bandwidth_Bps;
    };
    for (uint32_t r = 0; r < num_replicas(); ++r) {
      host_links_.emplace_back(link_of(r), spec_.host_kv_latency_s);
    }
  }
  loads_.resize(replicas_.size());
  gather_timer_s_.assign(replicas_.size(), kNoEvent);
}

// An expert-parallel server's ranks form a lock-step group.
void Cluster::add_servers(const ClusterRole& role) {
  for (int s = 0; s < role.servers; ++s) {
    const uint32_t first = num_replicas();
    for (int rank = 0; rank < role.parallel.dp; ++rank) {
      replicas_.emplace_back(std::make_unique<Replica>(static_cast<int>(first_ + num_replicas()),
                                                       *role.scheduler, *role.cost_model,
                                                       role.options));
      kv_bytes_per_token_.push_back(role.kv_bytes_per_token);
    }
    group_of_.resize(replicas_.size(), kNoGroup);
    if (!role.parallel.lockstep()) continue;
    for (uint32_t r = first; r < num_replicas(); ++r) {
      group_of_[r] = static_cast<int32_t>(groups_.size());
    }
    groups_.push_back({first, static_cast<uint32_t>(role.parallel.dp), false});
  }
}

void Cluster::handle(const Event& event) {
  switch (event.kind) {
    case EventKind::kStepEnd:
      end_step(local(event.target));
      break;
    case EventKind::kTimeout: {
      const uint32_t r = local(event.target);
      gather_timer_s_[r] = kNoEvent;
      if (replicas_[r]->scheduler().static_batch_gathering()) {
        replicas_[r]->scheduler().release_static_batch();
      }
      try_start(r);
      break;
    }
    case EventKind::kDispatch: {
      LockstepGroup& group = groups_[event.target - first_group_];
      group.wave_pending = false;
      start_together(group);
      break;
    }
    case EventKind::kKvHandoff:
      on_handoff(event.payload);
      break;
    case EventKind::kKvLoaded:
      on_kv_loaded(local(event.target), event.payload);
      break;
    case EventKind::kHostKvLoaded: {
      const uint32_t r = local(event.target);
      if (replicas_[r]->host_load_done(event.payload)) try_start(r);
      break;
    }
    case EventKind::kHostKvStored: {
      const uint32_t r = local(event.target);
      if (replicas_[r]->host_stores_done(event.payload)) try_start(r);
      break;
    }
    default:
      throw std::logic_error("cluster: an event kind it does not own");
  }
}

void Cluster::deliver(const RequestSpec& request, double now_s) {
  const uint32_t target =
      route(router_, request, 0, spec_.disaggregated() ? num_prefill_ : num_replicas());
  if (spec_.disaggregated()) {
    flow_.arrived(request, now_s);
    originals_.insert_or_assign(request.id, request);
    replicas_[target]->admit(DisaggregatedFlow::prefill_request(request), now_s, prefill_side_,
                             KvTransfer::kSendAfterFinish);
  } else {
    replicas_[target]->admit(request, now_s, listener_);
  }
  try_start(target);
}

void Cluster::abort(uint64_t id) {
  flow_.forget(id);
  originals_.erase(id);
  for (uint32_t r = 0; r < num_replicas(); ++r) {
    if (replicas_[r]->abort(id)) try_start(r);
  }
}

void Cluster::try_start_all() {
  for (uint32_t r = 0; r < num_replicas(); ++r) try_start(r);
}

int Cluster::max_model_len() const {
  int longest = 0;
  for (const auto& replica : replicas_) {
    longest = std::max(longest, replica->scheduler().config().max_model_len);
  }
  return longest;
}

bool Cluster::has_unfinished() const {
  return std::any_of(replicas_.begin(), replicas_.end(),
                     [](const std::unique_ptr<Replica>& r) { return r->has_unfinished(); });
}

bool Cluster::sample(double now_s, Observer& observer) const {
  bool active = false;
  for (const auto& replica : replicas_) {
    observer.on_sample(RunReport::sample(now_s, replica->index(), replica->scheduler().stats(),
                                         replica->busy() ? replica->last_step_tokens() : 0));
    active = active || replica->has_unfinished();
  }
  return active;
}

std::vector<ReplicaSummary> Cluster::summaries() const {
  std::vector<ReplicaSummary> out;
  for (uint32_t r = 0; r < num_replicas(); ++r) {
    const Replica& replica = *replicas_[r];
    // Once per run, O(blocks): a block pool that lost count is a bug, never a result.
    replica.scheduler().kv_cache().check_invariants();
    ReplicaSummary& s = out.emplace_back(RunReport::replica_summary(
        replica.scheduler().stats(), replica.scheduler().config(), replica.steps(),
        replica.busy_s(), replica.op_totals(), replica.admission()));
    if (!host_links_.empty()) {
      replica.scheduler().host_kv().check_invariants();
      s.host_kv = host_kv_summary(r);
    }
    if (spec_.disaggregated())
      s.role = r < num_prefill_ ? ReplicaRole::kPrefill : ReplicaRole::kDecode;
    s.deployment = spec_.index;
  }
  return out;
}

int64_t Cluster::extrapolated_steps() const {
  int64_t steps = 0;
  for (const auto& replica : replicas_) steps += replica->extrapolated_steps();
  return steps;
}

void Cluster::describe_unfinished(std::ostream& out) const {
  for (const auto& replica : replicas_) {
    if (!replica->has_unfinished()) continue;
    const SchedulerStats s = replica->scheduler().stats();
    out << "; replica " << replica->index() << ": " << s.num_running << " running, "
        << s.num_waiting << " waiting (" << s.num_loading_kv << " loading KV), " << s.kv_blocks_used
        << " of " << s.kv_blocks_total << " KV blocks in use";
  }
}

void Cluster::on_token(const RequestSpec& request, std::optional<double> gap_s) {
  listener_.on_token(request, gap_s);
}

void Cluster::on_request_left(const RequestSpec& request, const RequestRecord& record) {
  // A decode instance that refused the request never loaded its KV: the prefill instance
  // still holds the blocks.
  release_prefill_blocks(record.id);
  listener_.on_request_left(request, flow_.finish(record));
}

ReplicaListener& Cluster::listener_for(uint32_t r) {
  return r < num_prefill_ ? static_cast<ReplicaListener&>(prefill_side_) : serving_listener();
}

ReplicaListener& Cluster::serving_listener() {
  return spec_.disaggregated() ? static_cast<ReplicaListener&>(*this) : listener_;
}

// Local replicas [first, end) by `router`; returns the local index.
uint32_t Cluster::route(Router& router, const RequestSpec& request, uint32_t first, uint32_t end) {
  const std::span<ReplicaLoad> loads(loads_.data() + first, end - first);
  if (router.reads_load()) {
    for (uint32_t r = first; r < end; ++r) loads_[r] = replicas_[r]->load();
  }
  return first + static_cast<uint32_t>(router.route(request, loads));
}

void Cluster::try_start(uint32_t r) {
  if (const int32_t group = group_of_[r]; group != kNoGroup) {
    // Once every request of this instant has reached its replica (a kDispatch event at the
    // same time runs after them), so that replicas given work together start together.
    LockstepGroup& g = groups_[static_cast<size_t>(group)];
    if (!g.wave_pending) {
      g.wave_pending = true;
      loop_.schedule(loop_.now_s(), EventKind::kDispatch,
                     first_group_ + static_cast<uint32_t>(group));
    }
    return;
  }
  if (replicas_[r]->busy()) return;
  if (const std::optional<double> duration = begin_step(r)) {
    loop_.schedule_in(*duration, EventKind::kStepEnd, first_ + r);
  }
}

// Expert parallelism over several replicas: vLLM runs the MoE layers of all data-parallel
// ranks of a server together (idle ranks run dummy batches), so once none of the group's
// replicas is busy each with work begins a step, all ending with the slowest.
void Cluster::start_together(LockstepGroup& group) {
  const uint32_t end = group.first + group.count;
  for (uint32_t r = group.first; r < end; ++r) {
    if (replicas_[r]->busy()) return;
  }
  double slowest_s = -1;
  for (uint32_t r = group.first; r < end; ++r) {
    if (const std::optional<double> duration = begin_step(r)) {
      slowest_s = std::max(slowest_s, *duration);
    }
  }
  for (uint32_t r = group.first; r < end; ++r) {
    if (replicas_[r]->busy()) loop_.schedule_in(slowest_s, EventKind::kStepEnd, first_ + r);
  }
}

// Begins replica r's next step and returns its duration, or arms its static-batch timer.
std::optional<double> Cluster::begin_step(uint32_t r) {
  Scheduler& scheduler = replicas_[r]->scheduler();
  if (scheduler.static_batch_gathering() && listener_.arrivals_done()) {
    scheduler.release_static_batch(/*no_more_arrivals=*/true);
  }
  const std::optional<double> duration = replicas_[r]->begin_step(loop_.now_s());
  if (!replicas_[r]->started_kv_loads().empty()) start_kv_loads(r);
  if (!duration && scheduler.static_batch_gathering() && gather_timer_s_[r] == kNoEvent) {
    gather_timer_s_[r] = loop_.now_s() + spec_.static_batch_timeout_s;
    loop_.schedule(gather_timer_s_[r], EventKind::kTimeout, first_ + r);
  }
  return duration;
}

void Cluster::end_step(uint32_t r) {
  Replica& replica = *replicas_[r];
  const double now = loop_.now_s();
  replica.end_step(now, listener_for(r));
  if (replica.host_store_blocks() > 0) {
    // Copied to the host once the step that computed them has run (vLLM 0.11-0.14 submits a
    // step's stores after its forward pass).
    const double bytes = static_cast<double>(replica.host_store_blocks()) *
                         replica.scheduler().config().block_size * kv_bytes_per_token_[r];
    loop_.schedule(host_links_[r].store(now, bytes), EventKind::kHostKvStored, first_ + r,
                   replica.host_store_step());
  }
  listener_.on_step_end(now);
  try_start(r);
}

void Cluster::on_prefilled(const RequestSpec& request, const RequestRecord& record) {
  listener_.on_progress();
  const double now = loop_.now_s();
  if (record.status == RequestOutcome::kOk && !flow_.prefilled(record, now)) {
    // No longer wanted (aborted as it finished): nothing reads its blocks.
    replicas_[local(static_cast<uint32_t>(record.replica))]->scheduler().release_kv(request.id);
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
  loop_.schedule(now + spec_.kv_transfer.handoff_s, EventKind::kKvHandoff, spec_.index, request.id);
}

void Cluster::on_handoff(uint64_t id) {
  const auto it = originals_.find(id);
  if (it == originals_.end()) return;  // aborted on the way; its prefill blocks are freed
  const RequestSpec request = std::move(it->second);
  originals_.erase(it);
  const uint32_t d = route(decode_router_, request, num_prefill_, num_replicas());
  replicas_[d]->admit(request, loop_.now_s(), *this, KvTransfer::kLoadPrompt);
  try_start(d);
}

void Cluster::start_kv_loads(uint32_t d) {
  for (const KvLoad& load : replicas_[d]->started_kv_loads()) {
    if (load.from_host) {
      start_host_load(d, load);
      continue;
    }
    if (!spec_.disaggregated())
      throw std::logic_error("cluster: a KV transfer without a prefill side");
    const double now = loop_.now_s();
    flow_.load_started(load.request_id, now);
    const double transfer_s = spec_.kv_transfer.transfer_s(
        load.num_tokens, spec_.prefill().kv_bytes_per_token, spec_.serving().kv_bytes_per_token);
    const double done_s =
        links_[d - num_prefill_].start(now, transfer_s, spec_.kv_transfer,
                                       flow_.prefill_start_s(load.request_id), spec_.num_layers);
    loop_.schedule(done_s, EventKind::kKvLoaded, first_ + d, load.request_id);
  }
}

void Cluster::start_host_load(uint32_t r, const KvLoad& load) {
  const double now = loop_.now_s();
  const double bytes = static_cast<double>(load.num_tokens) * kv_bytes_per_token_[r];
  const double done_s = host_links_[r].load(now, bytes);
  replicas_[r]->host_load_started(load.request_id, done_s - now);
  loop_.schedule(done_s, EventKind::kHostKvLoaded, first_ + r, load.request_id);
}

void Cluster::on_kv_loaded(uint32_t d, uint64_t id) {
  flow_.loaded(id, loop_.now_s());
  release_prefill_blocks(id);
  if (replicas_[d]->scheduler().finish_kv_load(id)) try_start(d);
}

// The prefill instance that holds the request's blocks (if any) frees them.
void Cluster::release_prefill_blocks(uint64_t id) {
  const int p = flow_.prefill_replica(id);
  if (p < 0) return;
  const uint32_t r = local(static_cast<uint32_t>(p));
  if (replicas_[r]->scheduler().release_kv(id)) try_start(r);
}

HostKvSummary Cluster::host_kv_summary(uint32_t r) const {
  const Replica& replica = *replicas_[r];
  const SchedulerStats st = replica.scheduler().stats();
  const HostKvLink& link = host_links_[r];
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

}  // namespace servesim
