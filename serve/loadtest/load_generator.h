// LoadGenerator: `servesim loadtest`'s engine — plays a scenario's workload against an
// OpenAI-compatible endpoint in real time and measures it from the client's side, in the
// simulator's own terms (RequestRecords, MetricsSummary, per-step summaries, TimeSamples), so
// a measured run and `servesim simulate` on the same scenario compare line by line.
//
//   LoadGenerator generator(options, scenario.config);
//   LoadtestResult result = generator.run(observer);  // blocks for the run's duration
//
// The workload is the simulator's RequestSource (make_request_source on the scenario's
// WorkloadSpec): open loop, closed loop, stepped, shared prefixes, multi-turn, traces. A
// request is sent when it is due on the wall clock, whatever the server is doing, and its
// latency counts from that due time (no coordinated omission); a closed-loop client's next
// request is due when its last one ended plus its think time — and, after a connection that
// failed (refused, unreachable), a backoff of 10 ms doubling per consecutive failure up to 1 s,
// so a server that is down is probed, not flooded. Prompt ids are the simulator's
// (request_prompt_into over the scenario model's vocabulary).
//
// Bounds: only the URL's host and port are contacted; at most max_connections at once; no
// request is issued after max_requests or once max_duration_s has passed, when anything
// still in flight is cancelled and the result marked partial. Observer::should_stop()
// (Ctrl-C) stops the same way.
// Threading: one io_context thread (the caller's) runs every request, timer and scrape;
// observer callbacks run on it. Ownership: borrows the observer during run(). run() may be
// called once.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/loadtest/call_result.h"
#include "serve/loadtest/client_monitor.h"
#include "serve/loadtest/endpoint_url.h"
#include "serve/loadtest/prometheus_text.h"
#include "serve/loadtest/stream_chunk.h"
#include "sim/core/observer.h"
#include "sim/metrics/metrics.h"
#include "sim/scenario/simulation_config.h"

namespace servesim {

struct LoadtestOptions {
  static constexpr size_t kDefaultOpenLoopConnections = 256;
  static constexpr double kDefaultMaxDurationS = 3600;  // when the workload sets no end

  EndpointUrl url;
  ApiKind api = ApiKind::kCompletions;
  std::string model;              // the request's "model"; empty: GET /v1/models' first id
  size_t max_connections = 0;     // 0: the workload's clients (closed, stepped), else 256
  double timeout_s = 120;         // seconds per request, counted from its due time
  uint64_t max_requests = 0;      // 0: the workload's own num_requests (if any)
  double max_duration_s = 0;      // seconds; 0: the workload's end + timeout_s, else 3600
  double scrape_interval_s = 1;   // seconds between GET /metrics; 0: never
  double status_interval_s = 1;   // seconds between LoadtestObserver::on_status calls
  double lag_threshold_s = 0.02;  // event-loop lag p99 above this: the client is the bottleneck
  double tick_s = 0.01;           // seconds between the lag timer's ticks
};

// What the endpoint said about itself before the load started.
struct ServerInfo {
  nlohmann::json models;          // GET /v1/models' answer; null when none
  nlohmann::json version;         // GET /version's answer (JSON, or the text); null when none
  bool metrics = false;           // GET /metrics answered 200
  std::string timeseries_source;  // "server /metrics" or "client"
};

// Once a second or so, for a progress line.
struct LiveStatus {
  double elapsed_s = 0;  // seconds since the load started
  int step = -1;         // stepped: the current step (0-based); else -1
  int steps = 0;         // stepped: how many steps
  int clients = 0;       // closed loop / stepped: active clients; else requests in flight
  uint64_t done = 0;     // requests ended (any outcome)
  uint64_t errors = 0;   // of which failed
  size_t in_flight = 0;
  double p50_ttft_s = RequestRecord::kNever;  // seconds, requests done since the last status
};

class LoadtestObserver : public Observer {
 public:
  // Every request that ended (cancelled ones too), after its record went to on_request_done.
  virtual void on_call(const CallResult& call) { (void)call; }
  virtual void on_server_metrics(double time_s, const std::vector<PromSample>& samples) {
    (void)time_s, (void)samples;
  }
  virtual void on_status(const LiveStatus& status) { (void)status; }
};

struct LoadtestResult {
  MetricsSummary summary;
  std::vector<MetricsSummary> by_step;             // stepped workloads: one per step
  std::array<uint64_t, kNumErrorCauses> errors{};  // requests by ErrorCause (kNone: ok)
  std::map<int, uint64_t> http_status;             // answers by status; 0: no answer
  uint64_t sent = 0;                               // requests issued
  uint64_t output_mismatch = 0;  // ok requests whose output length was not the asked one
  ServerInfo server;
  std::string model;     // the "model" sent
  uint64_t scrapes = 0;  // /metrics answers recorded
  ClientHealth client;
  double wall_s = 0;           // seconds from the load's start to its end
  bool partial = false;        // stopped before the workload ended (Ctrl-C, duration)
  std::string stop_reason;     // "workload finished", "max_requests", "max_duration_s",
                               // "interrupted"
  size_t max_connections = 0;  // as resolved
  uint64_t max_requests = 0;   // as resolved; 0: none
  double max_duration_s = 0;   // seconds, as resolved
};

class LoadGenerator {
 public:
  // Throws ConfigError for invalid options (timeout, durations) or a vocabulary < 1.
  LoadGenerator(LoadtestOptions options, const SimulationConfig& config);

  // Throws ConfigError when the host cannot be resolved, or when no --model was given and
  // GET /v1/models gives none.
  LoadtestResult run(LoadtestObserver& observer);

  const LoadtestOptions& options() const { return options_; }

 private:
  class Run;

  LoadtestOptions options_;
  SimulationConfig config_;
};

}  // namespace servesim
