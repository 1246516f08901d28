// ServicePath: the request path above the engine, as stations on the simulation's event
// loop. A request the client sends crosses the network (half a round trip), waits for and
// passes the gateway (rate limit, auth, routing), the API server's intake (parse, chat
// template, tokenisation), and each pre-model stage, and only then reaches the engine; every
// engine step's tokens go back through the API server's output processing (detokenisation,
// one stream chunk per request: one job per step and API server process, as vLLM V1's
// output handler takes one EngineCoreOutputs batch per step) and the network to the client.
// The client's TTFT, ITL and E2E are what it receives, and its next closed-loop request
// leaves only then.
//
// The API server is `frontend.station.workers` single-threaded processes (vLLM's
// --api-server-count); each request is pinned to one of them (by id), so its chunks stay in
// order. The gateway and the stages are multi-worker FIFO stations.
//
// Timeouts and retries (spec.client, spec.gateway_timeout_s): each send is an attempt with its
// own id (the request's id plus the attempt number in bits 48..62). A client whose attempt's
// last token has not arrived timeout_s after it sent it gives up; its disconnect reaches the
// server one way later, which aborts the attempt in the engine (vLLM aborts a request whose
// client disconnects: its KV blocks are freed) or drops it at its next hop upstream. The
// gateway answers 504 when an attempt's first token has not left the API server timeout_s
// after the attempt reached the gateway, and aborts it. A failed attempt whose cause the retry
// policy names is sent again after a capped exponential backoff; the host sees only the final
// outcome of each request (its record carries the attempts), so a closed-loop client retries
// within its cycle and an open loop's retries are extra arrivals.
//
// Tenants (spec.tenants): a request's tenant is chosen when its client first sends it
// (TenantAssigner: by share per arrival, or by client partition for closed loops) and with it
// its vLLM priority, so the engine sees RequestSpec.tenant and .priority set. Where the request
// meets the first station, its tenant's quotas (TenantQuotas) are checked before the
// gateway's own rate limit: a refusal is HTTP 429 rate_limited, its record naming the limit.
// A tenant's in-flight slot is held from there until the client has the attempt's outcome.
//
// Connection pools (spec.pools): a request of a tenant with a pool takes one of its
// connections before it is sent, or waits for one (the pool segment, RequestSegments.pool_s),
// and the wait counts in its timeout; past the pool's wait_timeout_s it gives up as timed out. The
// connection is let go when the client has the attempt's outcome (or gives up), and a retry takes
// one again. Each pool reports as a station row "pool <name>".
//
// The client machine (spec.client.machine): the load generator's CPU as `threads` one-job-at-a-
// time stations shared by every client, each request pinned to one by its id (its connection
// lives on one event loop, so its chunks are parsed in order). A send becomes a send job there
// and the attempt leaves the client when it completes (its wait and work count in the network
// segment); each chunk the network delivers becomes a chunk job, and the token is received —
// timestamped for TTFT, ITL and E2E — when it completes (in the stream segments); the client
// has an attempt's outcome when its finish job completes, and only then retries or reports it
// (a closed-loop client's next request waits for it). The station report shows the threads as
// one "client" row. Without the block none of these jobs or events exist.
//
// Seams: the run's driver implements ServicePathHost (deliver to the engine, report the
// client-side record) and forwards the path's events (kNetworkDelivery, kStationDone) and
// the engine's tokens, step ends and finished requests. Determinism: every draw comes from
// streams forked off the seed. Memory: per request in flight plus the current step's batch.
// Owns its stations; borrows the loop and the host. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/core/event_loop.h"
#include "sim/core/request_record.h"
#include "sim/core/rng.h"
#include "sim/service/client_connection_pool.h"
#include "sim/service/service_spec.h"
#include "sim/service/station.h"
#include "sim/service/tenant_assigner.h"
#include "sim/service/tenant_quotas.h"
#include "sim/service/token_bucket.h"
#include "sim/workload/request_source.h"

namespace servesim {

class ServicePathHost {
 public:
  virtual ~ServicePathHost() = default;
  // The request reaches the engine at now_s (its arrival_s is the client's send time).
  virtual void deliver(const RequestSpec& request, double now_s) = 0;
  // The client has the whole answer, or has given up, at now_s: the record is final.
  virtual void complete(const RequestSpec& request, const RequestRecord& record, double now_s) = 0;
  // The client of attempt `id` (the id deliver() was given) went away: abort it in the engine.
  virtual void abort(uint64_t id, double now_s) = 0;
  // The client received a token `gap_s` seconds after the request's previous one.
  virtual void client_gap(const RequestSpec& request, double gap_s) = 0;
};

// One deployment as the service path sees it: `servers` `vllm serve` instances that stream its
// answers, each with its own frontend.station.workers API server processes (a disaggregated
// deployment's decode instances; one server for an aggregated one, whose data-parallel ranks
// share the API servers of their one `vllm serve --data-parallel-size`).
struct ServiceDeployment {
  std::string name;
  int servers = 1;  // REQUIRES: >= 1
};

class ServicePath {
 public:
  // REQUIRES: spec.enabled. tenant_clients: the closed-loop clients the tenants partition
  // (TenantAssigner::partitioned_clients); 0 for an open loop, whose arrivals draw theirs.
  // deployments: the own first, then SimulationConfig::deployments; empty is one deployment of
  // one server. With several, each has its own API server processes (stations "frontend
  // NAME"), and a request goes through those of its RequestSpec::deployment, pinned to one by
  // its id (as a router spreads requests over a deployment's servers).
  ServicePath(const ServiceSpec& spec, uint64_t seed, EventLoop& loop, ServicePathHost& host,
              uint32_t tenant_clients = 0, const std::vector<ServiceDeployment>& deployments = {});
  ServicePath(const ServicePath&) = delete;  // stations point into spec_
  ServicePath& operator=(const ServicePath&) = delete;

  // The client sends `request` now.
  void send(const RequestSpec& request, double now_s);
  // The events the path schedules.
  static bool owns(EventKind kind) {
    return kind == EventKind::kNetworkDelivery || kind == EventKind::kStationDone ||
           kind == EventKind::kDeadline || kind == EventKind::kClientWake;
  }
  void handle(const Event& event, double now_s);

  // The engine produced a token of request `id` in the step ending now (call for every
  // sampled token, then on_engine_step_end once).
  void on_engine_token(uint64_t id);
  void on_engine_step_end(double now_s);
  // The engine is done with the request (finished or refused); `engine` has engine times.
  void on_engine_left(const RequestRecord& engine, double now_s);

  size_t in_flight() const { return flights_.size(); }
  // Requests sent that have neither reached the engine nor been refused on the way, and
  // retries waiting out their backoff.
  size_t upstream() const { return upstream_ + backoff_.size(); }
  // Every station's books up to now_s: the client machine (its threads as one row), gateway,
  // API server processes, stages.
  std::vector<StationStats> station_stats(double now_s) const;

 private:
  // Where an attempt is on the server's side.
  enum class Where : uint8_t { kUpstream, kEngine, kDone };
  // One attempt, from the client's send until its answer (or the client's giving up) and every
  // event and output job that refers to it are done.
  struct Flight {
    RequestSpec spec;   // as the client sent it: the request's own id and first send time
    uint64_t key = 0;   // the attempt's id (flights_, stations, the engine)
    int attempt = 1;    // 1 = the first send
    double sent_s = 0;  // when this attempt was sent, seconds
    int refs = 0;       // pending events and jobs that refer to it
    Where where = Where::kUpstream;
    bool failed = false;      // the attempt failed: its tokens are dropped, nothing is streamed
    bool cancelled = false;   // the server gave up on it upstream: dropped at its next hop
    bool answered = false;    // the client has its outcome
    bool holds_slot = false;  // counts in its tenant's in-flight requests
    bool at_client = false;   // its send job has not completed: it has not left the client
    int pool = -1;            // its tenant's connection pool; -1: none
    bool in_pool = false;     // waiting for a connection of its pool
    bool holds_connection = false;
    double one_way_s = 0;      // network delay each way, seconds
    double hop_arrival_s = 0;  // when it reached its current station, seconds
    int hop = 0;               // intake hops passed: gateway, frontend, stages
    RequestSegments segments;  // upstream segments so far
    double engine_arrival_s = 0;
    double engine_first_token_s = RequestRecord::kNever;
    int tokens_received = 0;
    double first_rx_s = RequestRecord::kNever;  // client receive times, seconds
    double last_rx_s = RequestRecord::kNever;
    std::optional<RequestRecord> engine;  // once the engine is done with it
  };
  enum Hop : uint32_t { kToServer = 0, kToClient = 1, kChunkToClient = 2 };
  // A job on the client machine, for its completion.
  enum class ClientWork : uint8_t { kSend, kChunk, kFinish };
  struct ClientJob {
    ClientWork work = ClientWork::kSend;
    uint64_t key = 0;  // the attempt
  };
  enum DeadlineKind : uint32_t {
    kClientDeadline = 0,
    kGatewayDeadline = 1,
    kDisconnect = 2,
    kPoolDeadline = 3,  // a waiter's pool wait_timeout_s
  };

  void send_attempt(const RequestSpec& request, uint64_t key, int attempt, double now_s);
  void leave_client(Flight& f, double now_s);
  void release_connection(Flight& f, double now_s);
  void deadline(uint32_t kind, uint64_t key, double now_s);
  void client_gives_up(Flight& f, double now_s);
  void gateway_times_out(Flight& f, double now_s);
  void leave_upstream(Flight& f);
  void reply_error(Flight& f, RequestOutcome status, FailureCause cause, double now_s,
                   RateLimitKind limit = RateLimitKind::kNone);
  void answer(Flight& f, double now_s);
  void report_outcome(Flight& f, double now_s);
  void receive_token(Flight& f, double rx_s);

  size_t client_thread(const Flight& f) const;
  void submit_client(ClientWork work, Flight& f, double now_s);
  void client_done(uint32_t thread, uint64_t job, double now_s);
  void sent(Flight& f, double now_s);
  StationStats client_stats(double now_s) const;
  void retry_wake(uint64_t key, double now_s);
  void settle(Flight& f);

  double variability(size_t station);
  void arrive_at_hop(Flight& f, double now_s);
  void submit(size_t station, const StationJob& job, Flight* intake, double now_s);
  void station_done(uint32_t station, uint64_t job, double now_s);
  void output_done(uint64_t job, double now_s);
  RateLimitKind refusing_limit(Flight& f, double now_s);
  size_t hop_station(const Flight& f) const;
  size_t frontend_station(uint64_t key, uint32_t deployment) const;
  RequestRecord client_record(const Flight& f) const;

  ServiceSpec spec_;
  EventLoop& loop_;
  ServicePathHost& host_;
  Rng network_rng_;
  std::vector<Station> stations_;                  // [gateway] frontend processes... stages...
  std::vector<const StationSpec*> station_specs_;  // into spec_, per station
  std::vector<Rng> station_rngs_;
  size_t first_frontend_ = 0;
  size_t num_frontends_ = 1;  // API server processes of every deployment
  // Per deployment: its first API server process (counted from first_frontend_) and how many.
  std::vector<size_t> deployment_first_frontend_;
  std::vector<size_t> deployment_frontends_;
  size_t first_stage_ = 0;
  std::optional<TokenBucket> request_bucket_;
  std::optional<TokenBucket> token_bucket_;
  std::optional<TenantAssigner> tenants_;  // with spec.tenants only
  std::optional<TenantQuotas> quotas_;
  std::vector<ClientConnectionPool> pools_;  // spec.pools, in order
  std::unordered_map<uint64_t, Flight> flights_;
  // Flights with a token in this step, per API server process, and in each output job. A
  // flight is erased only after its last token's job, and unordered_map nodes do not move.
  std::vector<std::vector<Flight*>> step_tokens_;
  std::unordered_map<uint64_t, std::vector<Flight*>> batches_;
  uint64_t next_batch_ = 0;
  size_t upstream_ = 0;
  // The client machine's threads (spec.client.machine), their draws, and their jobs by id.
  std::vector<Station> client_threads_;
  std::vector<Rng> client_rngs_;
  std::unordered_map<uint64_t, ClientJob> client_jobs_;
  uint64_t next_client_job_ = 0;
  Rng retry_rng_;                                      // backoff jitter
  std::unordered_map<uint64_t, RequestSpec> backoff_;  // retries waiting, by attempt id
};

}  // namespace servesim
