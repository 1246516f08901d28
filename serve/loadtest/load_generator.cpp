#include "serve/loadtest/load_generator.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "models/config_error.h"
#include "models/json_file.h"
#include "serve/loadtest/completion_call.h"
#include "serve/loadtest/connection_pool.h"
#include "serve/loadtest/http_get.h"
#include "serve/loadtest/request_body.h"
#include "serve/loadtest/server_sample.h"
#include "sim/metrics/percentile.h"
#include "sim/serving/run_report.h"
#include "sim/workload/request_prompt.h"

namespace servesim {
namespace {

namespace asio = net::asio;
using boost::system::error_code;

constexpr double kProbeTimeoutS = 5;        // seconds for each start-up GET
constexpr size_t kProbeMaxBytes = 4 << 20;  // bytes of a start-up or /metrics answer
// A client whose connection fails waits before its next send: kFirstBackoffS after the first
// failure, doubling with each consecutive one up to kMaxBackoffS, none once anything answers.
// Without it, a closed loop against a port nobody listens on re-sends as fast as the kernel
// refuses (about 9,000 attempts a second per client on loopback).
constexpr double kFirstBackoffS = 0.01;  // seconds
constexpr double kMaxBackoffS = 1.0;     // seconds

bool connection_failed(ErrorCause cause) {
  return cause == ErrorCause::kRefused || cause == ErrorCause::kNetwork;
}

// Seconds before the next send after `failures` consecutive connection failures.
double connection_backoff_s(int failures) {
  if (failures == 0) return 0;
  return std::min(kMaxBackoffS, kFirstBackoffS * std::ldexp(1.0, std::min(failures - 1, 30)));
}

// The end of the workload's own schedule, if it has one (seconds).
double workload_end_s(const WorkloadSpec& w) {
  if (w.kind == WorkloadKind::kStepped)
    return static_cast<double>(w.steps.size()) * w.step_duration_s;
  return std::isfinite(w.duration_s) ? w.duration_s : 0;
}

size_t default_connections(const WorkloadSpec& w) {
  if (w.kind == WorkloadKind::kClosedLoop) return static_cast<size_t>(w.clients);
  if (w.kind == WorkloadKind::kStepped)
    return static_cast<size_t>(*std::max_element(w.steps.begin(), w.steps.end()));
  return LoadtestOptions::kDefaultOpenLoopConnections;
}

// Re-raises an exception that escaped a coroutine, so it leaves io_context::run().
void rethrow(std::exception_ptr e) {
  if (e) std::rethrow_exception(e);
}

// The first model id of a GET /v1/models answer ({"data": [{"id": ...}]}); empty if none.
std::string first_model_id(const nlohmann::json& models) {
  if (!models.is_object()) return "";
  const auto data = models.find("data");
  if (data == models.end() || !data->is_array() || data->empty()) return "";
  const nlohmann::json& first = data->front();
  if (!first.is_object() || !first.contains("id") || !first["id"].is_string()) return "";
  return first["id"].get<std::string>();
}

// A probe's answer as summary.json records it: its JSON, else its text, with every byte that is
// not UTF-8 shown as U+FFFD (the summary's writer refuses such bytes, which would lose the run).
nlohmann::json json_or_text(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_discarded()) return j;
  return nlohmann::json::parse(json_text(body, -1));
}

}  // namespace

LoadGenerator::LoadGenerator(LoadtestOptions options, const SimulationConfig& config)
    : options_(std::move(options)), config_(config) {
  if (!(options_.timeout_s > 0)) throw ConfigError("--timeout-s must be > 0 seconds");
  if (!(options_.max_duration_s >= 0)) throw ConfigError("--max-duration-s must be >= 0");
  if (!(options_.scrape_interval_s >= 0)) throw ConfigError("scrape interval must be >= 0");
  if (config_.model.vocab_size < 1) {
    throw ConfigError("model '" + config_.model.name + "': vocab_size must be >= 1");
  }
  if (options_.max_connections == 0)
    options_.max_connections = default_connections(config_.workload);
  if (options_.max_duration_s == 0) {
    const double end_s = workload_end_s(config_.workload);
    options_.max_duration_s =
        end_s > 0 ? end_s + options_.timeout_s : LoadtestOptions::kDefaultMaxDurationS;
  }
}

// One run's state: everything lives on the io_context's thread.
class LoadGenerator::Run {
 public:
  Run(const LoadtestOptions& options, const SimulationConfig& config, LoadtestObserver& observer)
      : options_(options),
        config_(config),
        observer_(observer),
        pool_(io_.get_executor(), options.max_connections),
        source_(make_request_source(config.workload)),
        report_(config.metrics, config.workload, config.step_warmup_s, observer),
        monitor_(1, options.lag_threshold_s),
        arrival_timer_(io_),
        tick_timer_(io_),
        scrape_timer_(io_),
        deadline_timer_(io_) {
    result_.max_connections = options.max_connections;
    result_.max_duration_s = options.max_duration_s;
    result_.max_requests = options.max_requests;
    if (config.workload.num_requests > 0 &&
        (result_.max_requests == 0 || config.workload.num_requests < result_.max_requests)) {
      result_.max_requests = config.workload.num_requests;
    }
  }

  LoadtestResult go();

 private:
  double now_s() const { return std::chrono::duration<double>(net::Clock::now() - start_).count(); }
  net::Clock::time_point at(double t_s) const {
    return start_ +
           std::chrono::duration_cast<net::Clock::duration>(std::chrono::duration<double>(t_s));
  }
  void spawn(asio::awaitable<void> task) { asio::co_spawn(io_, std::move(task), rethrow); }

  asio::awaitable<void> probe();
  asio::awaitable<void> arrivals();
  asio::awaitable<void> call(RequestSpec spec);
  asio::awaitable<void> ticker();
  asio::awaitable<void> scraper();
  asio::awaitable<void> deadline();
  void on_call_done(const CallResult& call);
  void emit_status();
  void emit_client_sample();
  void stop(const std::string& reason, bool partial);
  void maybe_finish();

  const LoadtestOptions& options_;
  const SimulationConfig& config_;
  LoadtestObserver& observer_;
  asio::io_context io_;
  CallTarget target_;
  ConnectionPool pool_;
  std::unique_ptr<RequestSource> source_;
  RunReport report_;
  ClientMonitor monitor_;
  asio::steady_timer arrival_timer_;
  asio::steady_timer tick_timer_;
  asio::steady_timer scrape_timer_;
  asio::steady_timer deadline_timer_;
  net::Clock::time_point start_;
  std::unordered_set<CompletionCall*> live_;
  std::vector<int32_t> prompt_;      // scratch for request_prompt_into
  std::vector<double> recent_ttft_;  // seconds, since the last status
  bool stopping_ = false;            // no new requests
  bool arrivals_done_ = false;
  bool done_ = false;  // everything ended; timers wind down
  uint64_t ended_ = 0;
  uint64_t unfinished_ = 0;  // calls spawned and not ended (live_ holds only the started ones)
  uint64_t failed_ = 0;
  // Consecutive connection failures by client (closed loop: the virtual user; open loop: 0).
  std::unordered_map<uint32_t, int> connection_failures_;
  LoadtestResult result_;
};

asio::awaitable<void> LoadGenerator::Run::probe() {
  const std::string& host = target_.host_header;
  HttpAnswer models = co_await http_get(target_.endpoints, host, options_.url.target("/v1/models"),
                                        kProbeTimeoutS, kProbeMaxBytes);
  if (models.ok()) result_.server.models = json_or_text(models.body);
  result_.model = options_.model;
  if (result_.model.empty()) result_.model = first_model_id(result_.server.models);
  if (result_.model.empty()) {
    throw ConfigError(
        "GET " + options_.url.text + "/v1/models gave no model id (" +
        (models.error.empty() ? "HTTP " + std::to_string(models.status) : models.error) +
        "): is the server up? Or name the model with --model");
  }
  HttpAnswer version = co_await http_get(target_.endpoints, host, options_.url.target("/version"),
                                         kProbeTimeoutS, kProbeMaxBytes);
  if (version.ok()) result_.server.version = json_or_text(version.body);
  if (options_.scrape_interval_s > 0) {
    HttpAnswer metrics = co_await http_get(target_.endpoints, host, options_.url.target("/metrics"),
                                           kProbeTimeoutS, kProbeMaxBytes);
    result_.server.metrics = metrics.ok();
    if (metrics.ok()) {
      ServerSample unused;
      if (server_sample(parse_prometheus_text(metrics.body).samples, unused))
        result_.server.timeseries_source = "server /metrics";
    }
  }
  if (result_.server.timeseries_source.empty()) result_.server.timeseries_source = "client";
}

LoadtestResult LoadGenerator::Run::go() {
  net::tcp::resolver resolver(io_);
  error_code ec;
  target_.endpoints = resolver.resolve(options_.url.host, options_.url.port, ec);
  if (ec)
    throw ConfigError("URL '" + options_.url.text + "': cannot resolve '" + options_.url.host +
                      "': " + ec.message());
  target_.host_header = options_.url.host_header();
  target_.target = options_.url.target(api_path(options_.api));
  target_.api = options_.api;
  spawn(probe());
  io_.run();
  io_.restart();

  start_ = target_.start = net::Clock::now();
  monitor_.start();
  spawn(arrivals());
  spawn(ticker());
  spawn(deadline());
  if (result_.server.metrics) spawn(scraper());
  io_.run();

  result_.wall_s = now_s();
  result_.client = monitor_.finish();
  result_.summary = report_.summary();
  result_.by_step = report_.by_step();
  if (result_.stop_reason.empty()) result_.stop_reason = "workload finished";
  return std::move(result_);
}

asio::awaitable<void> LoadGenerator::Run::arrivals() {
  while (!stopping_) {
    if (result_.max_requests > 0 && result_.sent >= result_.max_requests) {
      if (config_.workload.num_requests != result_.max_requests)
        result_.stop_reason = "max_requests";
      break;
    }
    const std::optional<double> next = source_->next_arrival_s();
    if (!next && source_->finished()) break;
    arrival_timer_.expires_at(next ? at(*next) : net::Clock::time_point::max());
    error_code ec;
    co_await arrival_timer_.async_wait(net::with_ec(ec));
    const double now = now_s();
    for (std::optional<double> due = source_->next_arrival_s(); !stopping_ && due && *due <= now;
         due = source_->next_arrival_s()) {
      if (result_.max_requests > 0 && result_.sent >= result_.max_requests) break;
      ++result_.sent;
      ++unfinished_;
      spawn(call(source_->pop()));
    }
  }
  arrivals_done_ = true;
  maybe_finish();
}

asio::awaitable<void> LoadGenerator::Run::call(RequestSpec spec) {
  request_prompt_into(spec, config_.model.vocab_size, prompt_);
  CompletionCall call(pool_, target_, spec,
                      completion_request_body(spec, prompt_, result_.model, options_.api),
                      options_.timeout_s);
  live_.insert(&call);
  if (stopping_) call.cancel();  // stopped between being due and starting
  co_await call.run();
  live_.erase(&call);
  on_call_done(call.result());
}

void LoadGenerator::Run::on_call_done(const CallResult& call) {
  ++ended_;
  --unfinished_;
  ++result_.errors[static_cast<size_t>(call.cause)];
  if (call.cause != ErrorCause::kCancelled) {
    ++result_.http_status[call.http_status];
    if (call.ok()) {
      for (double gap_s : call.gaps_s) report_.inter_token_gap(call.spec, gap_s);
      recent_ttft_.push_back(call.first_token_s - call.spec.arrival_s);
      if (call.output_tokens() != call.spec.output_tokens) ++result_.output_mismatch;
    } else {
      ++failed_;
    }
    report_.request_left(to_record(call));
  }
  observer_.on_call(call);
  int& failures = connection_failures_[call.spec.client];
  failures = connection_failed(call.cause) ? failures + 1 : 0;
  source_->on_request_done(call.spec, now_s() + connection_backoff_s(failures));
  arrival_timer_.cancel();  // the source may have a new arrival due earlier
  maybe_finish();
}

void LoadGenerator::Run::stop(const std::string& reason, bool partial) {
  if (stopping_) return;
  stopping_ = true;
  result_.partial = partial;
  result_.stop_reason = reason;
  arrival_timer_.cancel();
  for (CompletionCall* call : live_) call->cancel();
}

void LoadGenerator::Run::maybe_finish() {
  if (done_ || !arrivals_done_ || unfinished_ > 0) return;
  done_ = true;
  tick_timer_.cancel();
  scrape_timer_.cancel();
  deadline_timer_.cancel();
  pool_.close_idle();
}

asio::awaitable<void> LoadGenerator::Run::deadline() {
  deadline_timer_.expires_at(at(options_.max_duration_s));
  error_code ec;
  co_await deadline_timer_.async_wait(net::with_ec(ec));
  if (!ec && !done_) stop("max_duration_s", true);
}

asio::awaitable<void> LoadGenerator::Run::ticker() {
  const auto tick = std::chrono::duration_cast<net::Clock::duration>(
      std::chrono::duration<double>(options_.tick_s));
  net::Clock::time_point due = net::Clock::now();
  double next_status_s = options_.status_interval_s;
  double next_sample_s = 0;
  const bool client_samples =
      result_.server.timeseries_source == "client" && config_.sample_interval_s > 0;
  while (!done_) {
    due += tick;
    tick_timer_.expires_at(due);
    error_code ec;
    co_await tick_timer_.async_wait(net::with_ec(ec));
    if (done_) break;
    const net::Clock::time_point now = net::Clock::now();
    monitor_.on_tick(std::chrono::duration<double>(now - due).count());
    if (now - due > tick) due = now;  // a stall is measured once, not replayed as a burst
    if (!stopping_ && observer_.should_stop()) stop("interrupted", true);
    const double t = now_s();
    if (t >= next_status_s) {
      monitor_.on_window();
      emit_status();
      next_status_s += options_.status_interval_s;
    }
    if (client_samples && t >= next_sample_s) {
      emit_client_sample();
      next_sample_s += config_.sample_interval_s;
    }
  }
}

void LoadGenerator::Run::emit_status() {
  LiveStatus s;
  s.elapsed_s = now_s();
  const WorkloadSpec& w = config_.workload;
  if (w.kind == WorkloadKind::kStepped) {
    s.steps = static_cast<int>(w.steps.size());
    s.step = std::min(w.step_at(s.elapsed_s), s.steps - 1);
    s.clients = w.steps[static_cast<size_t>(s.step)];
  } else if (w.kind == WorkloadKind::kClosedLoop) {
    s.clients = w.clients;
  } else {
    s.clients = static_cast<int>(live_.size());
  }
  s.done = ended_;
  s.errors = failed_;
  s.in_flight = live_.size();
  s.p50_ttft_s = percentile(std::move(recent_ttft_), 50);
  recent_ttft_.clear();
  observer_.on_status(s);
}

// Without the server's gauges, the client's own view: requests streaming tokens count as
// running, requests sent or due that have no token yet as waiting.
void LoadGenerator::Run::emit_client_sample() {
  TimeSample s;
  s.time_s = now_s();
  for (const CompletionCall* call : live_) {
    if (call->result().token_chunks > 0)
      ++s.running;
    else
      ++s.waiting;
  }
  observer_.on_sample(s);
}

asio::awaitable<void> LoadGenerator::Run::scraper() {
  const std::string target = options_.url.target("/metrics");
  const double timeout_s = std::min(1.0, options_.scrape_interval_s);
  for (double next_s = 0; !done_; next_s += options_.scrape_interval_s) {
    scrape_timer_.expires_at(at(next_s));
    error_code ec;
    co_await scrape_timer_.async_wait(net::with_ec(ec));
    if (done_) break;
    HttpAnswer answer = co_await http_get(target_.endpoints, target_.host_header, target, timeout_s,
                                          kProbeMaxBytes);
    if (!answer.ok() || done_) continue;
    const double t = now_s();
    const PromScrape scrape = parse_prometheus_text(answer.body);
    ++result_.scrapes;
    observer_.on_server_metrics(t, scrape.samples);
    ServerSample sample;
    if (result_.server.timeseries_source != "client" && server_sample(scrape.samples, sample)) {
      observer_.on_sample(to_time_sample(sample, t));
    }
  }
}

LoadtestResult LoadGenerator::run(LoadtestObserver& observer) {
  Run run(options_, config_, observer);
  return run.go();
}

}  // namespace servesim
