#include "sim/service/service_path.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/metrics/diagnosis.h"

namespace servesim {
namespace {

// Output jobs share the API server stations with intake jobs; their ids carry this bit.
constexpr uint64_t kOutputJob = uint64_t{1} << 63;
// An attempt's id is its request's id with the attempt number less one in bits 48..62, so the
// first attempt keeps the request's id.
constexpr int kAttemptShift = 48;
// kStationDone events of the client machine's threads carry this bit in their target.
constexpr uint32_t kClientStation = uint32_t{1} << 31;

// A job's work varies around its mean: lognormal with mean 1 and coefficient of variation cv.
double lognormal_factor(double cv, Rng& rng) {
  if (cv <= 0) return 1.0;
  const double sigma2 = std::log1p(cv * cv);
  return rng.lognormal(-0.5 * sigma2, std::sqrt(sigma2));
}

uint64_t attempt_key(uint64_t id, int attempt) {
  return id | (static_cast<uint64_t>(attempt - 1) << kAttemptShift);
}

}  // namespace

ServicePath::ServicePath(const ServiceSpec& spec, uint64_t seed, EventLoop& loop,
                         ServicePathHost& host, uint32_t tenant_clients,
                         const std::vector<ServiceDeployment>& deployments)
    : spec_(spec),
      loop_(loop),
      host_(host),
      network_rng_(Rng(seed).fork(0x6e6574)),
      retry_rng_(Rng(seed).fork(0x726574)) {
  if (!spec_.enabled) throw std::logic_error("ServicePath: the service is \"none\"");
  const auto add = [&](const StationSpec& s, const std::string& name, int workers) {
    stations_.emplace_back(name, workers, s.queue_capacity);
    station_specs_.push_back(&s);
    station_rngs_.push_back(Rng(seed).fork(0x737461 + stations_.size()));
  };
  if (spec_.gateway) add(*spec_.gateway, "gateway", spec_.gateway->workers);
  first_frontend_ = stations_.size();
  const std::vector<ServiceDeployment> groups =
      deployments.empty() ? std::vector<ServiceDeployment>{{"", 1}} : deployments;
  const size_t workers = static_cast<size_t>(spec_.frontend.station.workers);
  num_frontends_ = 0;
  for (const ServiceDeployment& g : groups) {
    const size_t count = workers * static_cast<size_t>(std::max(1, g.servers));
    const std::string name = groups.size() == 1 ? "frontend" : "frontend " + g.name;
    deployment_first_frontend_.push_back(num_frontends_);
    deployment_frontends_.push_back(count);
    for (size_t p = 0; p < count; ++p)
      add(spec_.frontend.station, count == 1 ? name : name + "#" + std::to_string(p), 1);
    num_frontends_ += count;
  }
  first_stage_ = stations_.size();
  for (const StationSpec& s : spec_.stages) add(s, s.name, s.workers);
  step_tokens_.resize(num_frontends_);
  if (spec_.rate_limit && spec_.rate_limit->requests_per_s > 0) {
    request_bucket_.emplace(spec_.rate_limit->requests_per_s, spec_.rate_limit->burst);
  }
  if (spec_.rate_limit && spec_.rate_limit->tokens_per_min > 0) {
    token_bucket_.emplace(spec_.rate_limit->tokens_per_min / 60.0,
                          spec_.rate_limit->tokens_per_min);
  }
  if (!spec_.tenants.empty()) {
    tenants_.emplace(spec_.tenants, tenant_clients, seed);
    quotas_.emplace(spec_.tenants);
  }
  for (const ConnectionPoolSpec& p : spec_.pools)
    pools_.emplace_back("pool " + p.name, p.connections);
  if (spec_.client.machine) {
    for (int t = 0; t < spec_.client.machine->threads; ++t) {
      client_threads_.emplace_back(kClientStationName, 1, 0);
      client_rngs_.push_back(Rng(seed).fork(0x636c69000000ULL + static_cast<uint64_t>(t)));
    }
  }
}

// A job's work varies around its mean: lognormal with mean 1 and the station's coefficient
// of variation.
double ServicePath::variability(size_t station) {
  return lognormal_factor(station_specs_[station]->cv, station_rngs_[station]);
}

size_t ServicePath::frontend_station(uint64_t key, uint32_t deployment) const {
  return first_frontend_ + deployment_first_frontend_[deployment] +
         static_cast<size_t>(key % deployment_frontends_[deployment]);
}

// Hops in order: the gateway (if any), the request's API server process, then each stage;
// past the last one the request reaches the engine.
size_t ServicePath::hop_station(const Flight& f) const {
  const size_t h = static_cast<size_t>(f.hop);
  if (h < first_frontend_) return 0;
  if (h == first_frontend_) return frontend_station(f.key, f.spec.deployment);
  return first_stage_ + (h - first_frontend_ - 1);
}

void ServicePath::send(const RequestSpec& request, double now_s) {
  if (!tenants_) {
    send_attempt(request, request.id, 1, now_s);
    return;
  }
  RequestSpec with_tenant = request;
  with_tenant.tenant = tenants_->assign(request);
  with_tenant.priority = spec_.tenants[with_tenant.tenant].priority;
  send_attempt(with_tenant, request.id, 1, now_s);
}

void ServicePath::send_attempt(const RequestSpec& request, uint64_t key, int attempt,
                               double now_s) {
  Flight& f = flights_[key];
  f.spec = request;
  f.key = key;
  f.attempt = attempt;
  f.sent_s = now_s;
  f.one_way_s = 0.5 * spec_.rtt_s.sample(network_rng_);
  f.segments.retry_s = now_s - request.arrival_s;
  f.segments.network_s = f.one_way_s;
  ++upstream_;
  if (spec_.client.timeout_s > 0) {
    loop_.schedule(now_s + spec_.client.timeout_s, EventKind::kDeadline, kClientDeadline, key);
  }
  if (tenants_) f.pool = spec_.tenants[request.tenant].pool_index;
  if (f.pool >= 0 && !pools_[static_cast<size_t>(f.pool)].acquire(key, now_s)) {
    f.in_pool = true;
    f.at_client = true;  // it has not left: a timeout now sends no disconnect
    const double wait_timeout_s = spec_.pools[static_cast<size_t>(f.pool)].wait_timeout_s;
    if (wait_timeout_s > 0) {
      loop_.schedule(now_s + wait_timeout_s, EventKind::kDeadline, kPoolDeadline, key);
    }
    return;
  }
  f.holds_connection = f.pool >= 0;
  leave_client(f, now_s);
}

// The attempt has its connection (or needs none): it goes out through the client machine, or
// straight onto the network, after its wait for the connection (the pool segment).
void ServicePath::leave_client(Flight& f, double now_s) {
  f.segments.pool_s = now_s - f.sent_s;
  if (spec_.client.machine) {
    f.at_client = true;
    submit_client(ClientWork::kSend, f, now_s);
  } else {
    f.at_client = false;
    ++f.refs;
    loop_.schedule(now_s + f.one_way_s, EventKind::kNetworkDelivery, kToServer, f.key);
  }
}

// The attempt lets its connection go (its answer is over, or it stopped waiting for one); the
// pool's longest waiter takes it and leaves.
void ServicePath::release_connection(Flight& f, double now_s) {
  if (f.pool < 0) return;
  ClientConnectionPool& pool = pools_[static_cast<size_t>(f.pool)];
  if (f.in_pool) {
    f.in_pool = false;
    f.at_client = false;
    pool.withdraw(f.key, now_s);
    leave_upstream(f);
    return;
  }
  if (!f.holds_connection) return;
  f.holds_connection = false;
  if (const std::optional<uint64_t> next = pool.release(now_s)) {
    Flight& waiter = flights_.at(*next);
    waiter.in_pool = false;
    waiter.holds_connection = true;
    leave_client(waiter, now_s);
  }
}

void ServicePath::handle(const Event& event, double now_s) {
  switch (event.kind) {
    case EventKind::kStationDone:
      if (event.target & kClientStation) {
        client_done(event.target & ~kClientStation, event.payload, now_s);
      } else {
        station_done(event.target, event.payload, now_s);
      }
      return;
    case EventKind::kDeadline:
      deadline(event.target, event.payload, now_s);
      return;
    case EventKind::kClientWake:
      retry_wake(event.payload, now_s);
      return;
    default:
      break;
  }
  const auto it = flights_.find(event.payload);
  if (it == flights_.end()) throw std::logic_error("ServicePath: delivery of an unknown request");
  Flight& f = it->second;
  --f.refs;
  if (event.target == kToServer) {
    arrive_at_hop(f, now_s);
  } else if (event.target == kChunkToClient) {
    if (!f.failed) submit_client(ClientWork::kChunk, f, now_s);
  } else if (!f.answered) {
    answer(f, now_s);
  }
  settle(f);
}

// An attempt is forgotten once its client has the outcome and nothing refers to it.
void ServicePath::settle(Flight& f) {
  if (f.refs == 0 && f.answered) flights_.erase(f.key);
}

// The tenant's limits are looked at first and charged only once every limit has passed; the
// gateway's buckets charge as they pass, as they always have.
RateLimitKind ServicePath::refusing_limit(Flight& f, double now_s) {
  const double tokens = static_cast<double>(f.spec.prompt_tokens) + f.spec.output_tokens;
  if (quotas_) {
    const RateLimitKind tenant = quotas_->check(f.spec.tenant, tokens, now_s);
    if (tenant != RateLimitKind::kNone) return tenant;
  }
  if (request_bucket_ && !request_bucket_->try_take(now_s, 1.0)) {
    return RateLimitKind::kGatewayRequests;
  }
  if (token_bucket_ && !token_bucket_->try_take(now_s, tokens)) {
    return RateLimitKind::kGatewayTokens;
  }
  if (quotas_) {
    quotas_->admit(f.spec.tenant, tokens, now_s);
    f.holds_slot = true;
  }
  return RateLimitKind::kNone;
}

void ServicePath::arrive_at_hop(Flight& f, double now_s) {
  if (f.cancelled) {
    leave_upstream(f);
    return;
  }
  if (static_cast<size_t>(f.hop) == stations_.size() - num_frontends_ + 1) {
    f.engine_arrival_s = now_s;
    leave_upstream(f);
    f.where = Where::kEngine;
    RequestSpec at_engine = f.spec;
    at_engine.id = f.key;
    at_engine.arrival_s = now_s;
    host_.deliver(at_engine, now_s);
    return;
  }
  // The rate limit sits at the first station a request meets: the gateway, else the API server.
  if (f.hop == 0) {
    if (const RateLimitKind limit = refusing_limit(f, now_s); limit != RateLimitKind::kNone) {
      leave_upstream(f);
      reply_error(f, RequestOutcome::kRejected, FailureCause::kRateLimited, now_s, limit);
      return;
    }
  }
  if (f.hop == 0 && spec_.gateway && spec_.gateway_timeout_s > 0) {
    loop_.schedule(now_s + spec_.gateway_timeout_s, EventKind::kDeadline, kGatewayDeadline, f.key);
  }
  const size_t station = hop_station(f);
  const StationSpec& s = *station_specs_[station];
  const double work_s =
      (s.request_s.sample(station_rngs_[station]) + s.per_prompt_token_s * f.spec.prompt_tokens) *
      variability(station);
  f.hop_arrival_s = now_s;
  submit(station, StationJob{f.key, work_s, now_s}, &f, now_s);
}

// An intake job (for `intake`) may be refused by a full queue; an output job (intake null) is
// work the API server owes and is never refused.
void ServicePath::submit(size_t station, const StationJob& job, Flight* intake, double now_s) {
  switch (stations_[station].arrive(job, now_s, /*droppable=*/intake != nullptr)) {
    case Station::Arrival::kStarted:
      loop_.schedule(now_s + job.service_s, EventKind::kStationDone, static_cast<uint32_t>(station),
                     job.id);
      break;
    case Station::Arrival::kQueued:
      break;
    case Station::Arrival::kRejected:
      leave_upstream(*intake);
      reply_error(*intake, RequestOutcome::kRejected, FailureCause::kQueueFull, now_s);
      return;
  }
  if (intake) ++intake->refs;
}

void ServicePath::station_done(uint32_t station, uint64_t job, double now_s) {
  if (const std::optional<StationJob> next = stations_[station].finish(now_s)) {
    loop_.schedule(now_s + next->service_s, EventKind::kStationDone, station, next->id);
  }
  if (job & kOutputJob) {
    output_done(job, now_s);
    return;
  }
  Flight& f = flights_.at(job);
  --f.refs;
  const double spent_s = now_s - f.hop_arrival_s;
  if (station < first_frontend_) {
    f.segments.gateway_s += spent_s;
  } else if (station < first_stage_) {
    f.segments.frontend_s += spent_s;
  } else {
    f.segments.pre_model_s += spent_s;
  }
  ++f.hop;
  arrive_at_hop(f, now_s);
  settle(f);
}

void ServicePath::leave_upstream(Flight& f) {
  --upstream_;
  f.where = Where::kDone;
}

// The server answers the attempt with an error, which reaches the client one way later.
void ServicePath::reply_error(Flight& f, RequestOutcome status, FailureCause cause, double now_s,
                              RateLimitKind limit) {
  f.failed = true;
  RequestRecord r;
  r.id = f.key;
  r.prompt_tokens = f.spec.prompt_tokens;
  r.status = status;
  r.cause = cause;
  r.limit = limit;
  f.engine = r;
  ++f.refs;
  loop_.schedule(now_s + f.one_way_s, EventKind::kNetworkDelivery, kToClient, f.key);
}

void ServicePath::deadline(uint32_t kind, uint64_t key, double now_s) {
  const auto it = flights_.find(key);
  if (it == flights_.end()) return;  // the attempt is long over
  Flight& f = it->second;
  if (kind == kClientDeadline) {
    if (!f.answered) client_gives_up(f, now_s);
  } else if (kind == kPoolDeadline) {
    if (f.in_pool && !f.answered) client_gives_up(f, now_s);
  } else if (kind == kGatewayDeadline) {
    if (!f.failed && f.where != Where::kDone && f.tokens_received == 0) {
      gateway_times_out(f, now_s);
    }
  } else {
    // The client's disconnect reaches the server.
    --f.refs;
    if (f.where == Where::kEngine) {
      f.where = Where::kDone;
      host_.abort(f.key, now_s);
    } else if (f.where == Where::kUpstream) {
      f.cancelled = true;
    }
  }
  settle(f);
}

// The client stops waiting: the attempt has timed out for it now, and the server learns of
// the closed connection one way later.
void ServicePath::client_gives_up(Flight& f, double now_s) {
  // An attempt still in its send job never left: the job drops it when it completes.
  const bool server_busy = f.where != Where::kDone && !f.at_client;
  f.failed = true;
  RequestRecord r;
  r.id = f.key;
  r.prompt_tokens = f.spec.prompt_tokens;
  r.status = RequestOutcome::kTimedOut;
  r.cause = FailureCause::kTimedOut;
  f.engine = r;
  if (server_busy) {
    ++f.refs;
    loop_.schedule(now_s + f.one_way_s, EventKind::kDeadline, kDisconnect, f.key);
  }
  answer(f, now_s);
}

// 504 from the gateway: the engine (or the stage holding it) lets the attempt go.
void ServicePath::gateway_times_out(Flight& f, double now_s) {
  if (f.where == Where::kEngine) {
    f.where = Where::kDone;
    host_.abort(f.key, now_s);
  } else {
    f.cancelled = true;
  }
  reply_error(f, RequestOutcome::kTimedOut, FailureCause::kTimedOut, now_s);
}

// The client has the attempt's outcome (its last token or its error): once the client machine
// has finished with it, a success or a final failure goes to the host, a failure the policy
// retries is sent again after its backoff.
void ServicePath::answer(Flight& f, double now_s) {
  f.answered = true;
  if (f.holds_slot) {
    quotas_->release(f.spec.tenant);
    f.holds_slot = false;
  }
  release_connection(f, now_s);
  if (spec_.client.machine) {
    submit_client(ClientWork::kFinish, f, now_s);
    return;
  }
  report_outcome(f, now_s);
}

void ServicePath::report_outcome(Flight& f, double now_s) {
  RequestRecord record = client_record(f);
  const RetrySpec& retry = spec_.client.retry;
  if (record.status != RequestOutcome::kOk && f.attempt < retry.max_attempts &&
      retry.retries(record.cause)) {
    const uint64_t next = attempt_key(f.spec.id, f.attempt + 1);
    backoff_.emplace(next, f.spec);
    loop_.schedule(now_s + retry.backoff_s(f.attempt, retry_rng_), EventKind::kClientWake, 0, next);
    return;
  }
  host_.complete(f.spec, record, now_s);
}

void ServicePath::retry_wake(uint64_t key, double now_s) {
  const auto it = backoff_.find(key);
  const RequestSpec request = std::move(it->second);
  backoff_.erase(it);
  send_attempt(request, key, static_cast<int>(key >> kAttemptShift) + 1, now_s);
}

void ServicePath::on_engine_token(uint64_t id) {
  const auto it = flights_.find(id);
  if (it == flights_.end()) return;
  step_tokens_[frontend_station(id, it->second.spec.deployment) - first_frontend_].push_back(
      &it->second);
}

void ServicePath::on_engine_step_end(double now_s) {
  const FrontendSpec& fe = spec_.frontend;
  for (size_t p = 0; p < num_frontends_; ++p) {
    std::vector<Flight*>& flights = step_tokens_[p];
    if (flights.empty()) continue;
    for (Flight* f : flights) {
      if (std::isnan(f->engine_first_token_s)) f->engine_first_token_s = now_s;
      ++f->refs;
    }
    const size_t station = first_frontend_ + p;
    const double work_s = (fe.step_s.sample(station_rngs_[station]) +
                           fe.per_output_token_s * static_cast<double>(flights.size())) *
                          variability(station);
    const uint64_t job = kOutputJob | next_batch_++;
    std::vector<Flight*>& batch = batches_[job];
    batch.swap(flights);
    flights.clear();
    submit(station, StationJob{job, work_s, now_s}, /*intake=*/nullptr, now_s);
  }
}

void ServicePath::output_done(uint64_t job, double now_s) {
  const auto it = batches_.find(job);
  for (Flight* flight : it->second) {
    Flight& f = *flight;
    --f.refs;
    if (f.failed) {
      // Dropped: its client has gone.
    } else if (spec_.client.machine) {
      ++f.refs;
      loop_.schedule(now_s + f.one_way_s, EventKind::kNetworkDelivery, kChunkToClient, f.key);
    } else {
      receive_token(f, now_s + f.one_way_s);
    }
    settle(f);
  }
  batches_.erase(it);
}

// The client has (or, ideal, will have at rx_s) the attempt's next token; the last one
// completes the answer.
void ServicePath::receive_token(Flight& f, double rx_s) {
  if (f.tokens_received++ == 0) {
    f.first_rx_s = rx_s;
  } else {
    host_.client_gap(f.spec, rx_s - f.last_rx_s);
  }
  f.last_rx_s = rx_s;
  if (f.engine && f.tokens_received == f.engine->output_tokens) {
    ++f.refs;
    loop_.schedule(rx_s, EventKind::kNetworkDelivery, kToClient, f.key);
  }
}

size_t ServicePath::client_thread(const Flight& f) const {
  return static_cast<size_t>(f.spec.id % client_threads_.size());
}

void ServicePath::submit_client(ClientWork work, Flight& f, double now_s) {
  const ClientMachineSpec& m = *spec_.client.machine;
  const size_t thread = client_thread(f);
  Rng& rng = client_rngs_[thread];
  double mean_s = 0;
  switch (work) {
    case ClientWork::kSend:
      mean_s = m.send_s.sample(rng) + m.per_prompt_token_s * f.spec.prompt_tokens;
      break;
    case ClientWork::kChunk:
      mean_s = m.chunk_s.sample(rng);
      break;
    case ClientWork::kFinish:
      mean_s = m.finish_s.sample(rng);
      break;
  }
  const StationJob job{next_client_job_++, mean_s * lognormal_factor(m.cv, rng), now_s};
  client_jobs_.emplace(job.id, ClientJob{work, f.key});
  ++f.refs;
  if (client_threads_[thread].arrive(job, now_s, /*droppable=*/false) ==
      Station::Arrival::kStarted) {
    loop_.schedule(now_s + job.service_s, EventKind::kStationDone,
                   kClientStation | static_cast<uint32_t>(thread), job.id);
  }
}

void ServicePath::client_done(uint32_t thread, uint64_t job, double now_s) {
  if (const std::optional<StationJob> next = client_threads_[thread].finish(now_s)) {
    loop_.schedule(now_s + next->service_s, EventKind::kStationDone, kClientStation | thread,
                   next->id);
  }
  const auto it = client_jobs_.find(job);
  const ClientJob done = it->second;
  client_jobs_.erase(it);
  Flight& f = flights_.at(done.key);
  --f.refs;
  switch (done.work) {
    case ClientWork::kSend:
      sent(f, now_s);
      break;
    case ClientWork::kChunk:
      if (!f.failed) receive_token(f, now_s);
      break;
    case ClientWork::kFinish:
      report_outcome(f, now_s);
      break;
  }
  settle(f);
}

// The send job is done: the attempt leaves the client, unless its client gave up meanwhile.
void ServicePath::sent(Flight& f, double now_s) {
  f.at_client = false;
  if (f.failed) {
    leave_upstream(f);
    return;
  }
  f.segments.network_s += now_s - f.sent_s - f.segments.pool_s;
  ++f.refs;
  loop_.schedule(now_s + f.one_way_s, EventKind::kNetworkDelivery, kToServer, f.key);
}

void ServicePath::on_engine_left(const RequestRecord& engine, double now_s) {
  Flight& f = flights_.at(engine.id);
  f.where = Where::kDone;
  if (f.failed) return;  // its client has gone; the disconnect had not reached the engine
  f.engine = engine;
  if (engine.status != RequestOutcome::kOk) {
    // Refused by the engine (too long): the error goes straight back.
    f.failed = true;
    ++f.refs;
    loop_.schedule(now_s + f.one_way_s, EventKind::kNetworkDelivery, kToClient, engine.id);
  } else if (f.tokens_received == engine.output_tokens) {
    // The ideal client's last token may still be on its way; the machine's has been parsed.
    ++f.refs;
    loop_.schedule(spec_.client.machine ? now_s : f.last_rx_s, EventKind::kNetworkDelivery,
                   kToClient, engine.id);
  }
}

// The record as the client saw it: sent at its arrival time, first and last token when they
// reached it; the engine's times stay in first_scheduled_s and the segments.
RequestRecord ServicePath::client_record(const Flight& f) const {
  RequestRecord r = *f.engine;
  r.id = f.spec.id;
  r.arrival_s = f.spec.arrival_s;
  r.step_index = f.spec.step_index;
  r.attempts = f.attempt;
  r.tenant = f.spec.tenant;
  if (r.status != RequestOutcome::kOk) {
    r.first_scheduled_s = r.first_token_s = r.finish_s = RequestRecord::kNever;
    r.segments = RequestSegments{};
    return r;
  }
  const double engine_first_token_s = r.first_token_s;
  const double engine_finish_s = r.finish_s;
  RequestSegments s = f.segments;
  s.engine_queue_s = r.segments.engine_queue_s;
  s.prefill_s = r.segments.prefill_s;
  s.decode_queue_s = r.segments.decode_queue_s;
  s.kv_transfer_s = r.segments.kv_transfer_s;
  s.decode_s = r.segments.decode_s;
  s.stream_s = f.last_rx_s - engine_finish_s;
  s.first_token_stream_s = f.first_rx_s - engine_first_token_s;
  r.segments = s;
  r.first_token_s = f.first_rx_s;
  r.finish_s = f.last_rx_s;
  return r;
}

// The client machine's threads as one station: jobs and queues summed, utilisation the mean,
// the largest queue of any one thread, waits and service times per job.
StationStats ServicePath::client_stats(double now_s) const {
  StationStats all;
  all.name = kClientStationName;
  all.workers = static_cast<int>(client_threads_.size());
  double wait_s = 0;
  double service_s = 0;
  for (const Station& t : client_threads_) {
    const StationStats s = t.stats(now_s);
    all.jobs += s.jobs;
    all.utilisation += s.utilisation / static_cast<double>(client_threads_.size());
    all.mean_queue += s.mean_queue;
    all.max_queue = std::max(all.max_queue, s.max_queue);
    wait_s += s.mean_wait_s * static_cast<double>(s.jobs);
    service_s += s.mean_service_s * static_cast<double>(s.jobs);
  }
  if (all.jobs > 0) {
    all.mean_wait_s = wait_s / static_cast<double>(all.jobs);
    all.mean_service_s = service_s / static_cast<double>(all.jobs);
  }
  return all;
}

std::vector<StationStats> ServicePath::station_stats(double now_s) const {
  std::vector<StationStats> out;
  if (!client_threads_.empty()) out.push_back(client_stats(now_s));
  for (const ClientConnectionPool& p : pools_) out.push_back(p.stats(now_s));
  for (const Station& s : stations_) out.push_back(s.stats(now_s));
  return out;
}

}  // namespace servesim
