#include "sim/service/service_path.h"

#include <cmath>
#include <stdexcept>

namespace servesim {
namespace {

// Output jobs share the API server stations with intake jobs; their ids carry this bit.
constexpr uint64_t kOutputJob = uint64_t{1} << 63;

}  // namespace

ServicePath::ServicePath(const ServiceSpec& spec, uint64_t seed, EventLoop& loop,
                         ServicePathHost& host)
    : spec_(spec), loop_(loop), host_(host), network_rng_(Rng(seed).fork(0x6e6574)) {
  if (!spec_.enabled) throw std::logic_error("ServicePath: the service is \"none\"");
  const auto add = [&](const StationSpec& s, const std::string& name, int workers) {
    stations_.emplace_back(name, workers, s.queue_capacity);
    station_specs_.push_back(&s);
    station_rngs_.push_back(Rng(seed).fork(0x737461 + stations_.size()));
  };
  if (spec_.gateway) add(*spec_.gateway, "gateway", spec_.gateway->workers);
  first_frontend_ = stations_.size();
  num_frontends_ = static_cast<size_t>(spec_.frontend.station.workers);
  for (size_t p = 0; p < num_frontends_; ++p) {
    add(spec_.frontend.station, num_frontends_ == 1 ? "frontend" : "frontend#" + std::to_string(p),
        1);
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
}

// A job's work varies around its mean: lognormal with mean 1 and the station's coefficient
// of variation.
double ServicePath::variability(size_t station) {
  const double cv = station_specs_[station]->cv;
  if (cv <= 0) return 1.0;
  const double sigma2 = std::log1p(cv * cv);
  return station_rngs_[station].lognormal(-0.5 * sigma2, std::sqrt(sigma2));
}

size_t ServicePath::frontend_station(uint64_t id) const {
  return first_frontend_ + static_cast<size_t>(id % num_frontends_);
}

// Hops in order: the gateway (if any), the request's API server process, then each stage;
// past the last one the request reaches the engine.
size_t ServicePath::hop_station(const Flight& f) const {
  const size_t h = static_cast<size_t>(f.hop);
  if (h < first_frontend_) return 0;
  if (h == first_frontend_) return frontend_station(f.spec.id);
  return first_stage_ + (h - first_frontend_ - 1);
}

void ServicePath::send(const RequestSpec& request, double now_s) {
  const uint64_t id = request.id;
  Flight& f = flights_[id];
  f.spec = request;
  f.one_way_s = 0.5 * spec_.rtt_s.sample(network_rng_);
  f.segments.network_s = f.one_way_s;
  ++upstream_;
  loop_.schedule(now_s + f.one_way_s, EventKind::kNetworkDelivery, kToServer, id);
}

void ServicePath::handle(const Event& event, double now_s) {
  if (event.kind == EventKind::kStationDone) {
    station_done(event.target, event.payload, now_s);
    return;
  }
  const auto it = flights_.find(event.payload);
  if (it == flights_.end()) throw std::logic_error("ServicePath: delivery of an unknown request");
  if (event.target == kToServer) {
    arrive_at_hop(event.payload, it->second, now_s);
    return;
  }
  const RequestSpec spec = std::move(it->second.spec);
  const RequestRecord record = client_record(it->second);
  flights_.erase(it);
  host_.complete(spec, record, now_s);
}

bool ServicePath::rate_limited(const Flight& f, double now_s) {
  if (request_bucket_ && !request_bucket_->try_take(now_s, 1.0)) return true;
  const double tokens = static_cast<double>(f.spec.prompt_tokens) + f.spec.output_tokens;
  return token_bucket_ && !token_bucket_->try_take(now_s, tokens);
}

void ServicePath::arrive_at_hop(uint64_t id, Flight& f, double now_s) {
  if (static_cast<size_t>(f.hop) == stations_.size() - num_frontends_ + 1) {
    f.engine_arrival_s = now_s;
    --upstream_;
    RequestSpec at_engine = f.spec;
    at_engine.arrival_s = now_s;
    host_.deliver(at_engine, now_s);
    return;
  }
  // The rate limit sits at the first station a request meets: the gateway, else the API server.
  if (f.hop == 0 && rate_limited(f, now_s)) {
    fail(id, f, FailureCause::kRateLimited, now_s);
    return;
  }
  const size_t station = hop_station(f);
  const StationSpec& s = *station_specs_[station];
  const double work_s =
      (s.request_s.sample(station_rngs_[station]) + s.per_prompt_token_s * f.spec.prompt_tokens) *
      variability(station);
  f.hop_arrival_s = now_s;
  submit(station, StationJob{id, work_s, now_s}, /*droppable=*/true, f, now_s);
}

void ServicePath::submit(size_t station, const StationJob& job, bool droppable, Flight& f,
                         double now_s) {
  switch (stations_[station].arrive(job, now_s, droppable)) {
    case Station::Arrival::kStarted:
      loop_.schedule(now_s + job.service_s, EventKind::kStationDone, static_cast<uint32_t>(station),
                     job.id);
      break;
    case Station::Arrival::kQueued:
      break;
    case Station::Arrival::kRejected:
      fail(job.id, f, FailureCause::kQueueFull, now_s);
      break;
  }
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
  const double spent_s = now_s - f.hop_arrival_s;
  if (station < first_frontend_) {
    f.segments.gateway_s += spent_s;
  } else if (station < first_stage_) {
    f.segments.frontend_s += spent_s;
  } else {
    f.segments.pre_model_s += spent_s;
  }
  ++f.hop;
  arrive_at_hop(job, f, now_s);
}

void ServicePath::fail(uint64_t id, Flight& f, FailureCause cause, double now_s) {
  --upstream_;
  RequestRecord r;
  r.id = id;
  r.prompt_tokens = f.spec.prompt_tokens;
  r.status = RequestOutcome::kRejected;
  r.cause = cause;
  f.engine = r;
  loop_.schedule(now_s + f.one_way_s, EventKind::kNetworkDelivery, kToClient, id);
}

void ServicePath::on_engine_token(uint64_t id) {
  const auto it = flights_.find(id);
  if (it == flights_.end()) return;
  step_tokens_[frontend_station(id) - first_frontend_].push_back(&it->second);
}

void ServicePath::on_engine_step_end(double now_s) {
  const FrontendSpec& fe = spec_.frontend;
  for (size_t p = 0; p < num_frontends_; ++p) {
    std::vector<Flight*>& flights = step_tokens_[p];
    if (flights.empty()) continue;
    for (Flight* f : flights) {
      if (std::isnan(f->engine_first_token_s)) f->engine_first_token_s = now_s;
    }
    const size_t station = first_frontend_ + p;
    const double work_s = (fe.step_s.sample(station_rngs_[station]) +
                           fe.per_output_token_s * static_cast<double>(flights.size())) *
                          variability(station);
    const uint64_t job = kOutputJob | next_batch_++;
    std::vector<Flight*>& batch = batches_[job];
    batch.swap(flights);
    flights.clear();
    submit(station, StationJob{job, work_s, now_s}, /*droppable=*/false, *batch.front(), now_s);
  }
}

void ServicePath::output_done(uint64_t job, double now_s) {
  const auto it = batches_.find(job);
  for (Flight* flight : it->second) {
    Flight& f = *flight;
    const double rx_s = now_s + f.one_way_s;
    if (f.tokens_received++ == 0) {
      f.first_rx_s = rx_s;
    } else {
      host_.client_gap(f.spec, rx_s - f.last_rx_s);
    }
    f.last_rx_s = rx_s;
    if (f.engine && f.tokens_received == f.engine->output_tokens) {
      loop_.schedule(rx_s, EventKind::kNetworkDelivery, kToClient, f.spec.id);
    }
  }
  batches_.erase(it);
}

void ServicePath::on_engine_left(const RequestRecord& engine, double now_s) {
  Flight& f = flights_.at(engine.id);
  f.engine = engine;
  if (engine.status != RequestOutcome::kOk) {
    // Refused by the engine (too long): the error goes straight back.
    loop_.schedule(now_s + f.one_way_s, EventKind::kNetworkDelivery, kToClient, engine.id);
  } else if (f.tokens_received == engine.output_tokens) {
    loop_.schedule(f.last_rx_s, EventKind::kNetworkDelivery, kToClient, engine.id);
  }
}

// The record as the client saw it: sent at its arrival time, first and last token when they
// reached it; the engine's times stay in first_scheduled_s and the segments.
RequestRecord ServicePath::client_record(const Flight& f) const {
  RequestRecord r = *f.engine;
  r.arrival_s = f.spec.arrival_s;
  r.step_index = f.spec.step_index;
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
  s.decode_s = r.segments.decode_s;
  s.stream_s = f.last_rx_s - engine_finish_s;
  s.first_token_stream_s = f.first_rx_s - engine_first_token_s;
  r.segments = s;
  r.first_token_s = f.first_rx_s;
  r.finish_s = f.last_rx_s;
  return r;
}

std::vector<StationStats> ServicePath::station_stats(double now_s) const {
  std::vector<StationStats> out;
  for (const Station& s : stations_) out.push_back(s.stats(now_s));
  return out;
}

}  // namespace servesim
