// The client machine (service.client.machine): a saturated load generator caps throughput at
// threads / per-request work, chunks are received in order per request, segments still sum to
// E2E, the absent block changes nothing, runs are deterministic, a timeout while a request
// waits for its send job ends the run, the diagnosis names the client, and bad input fails on
// one line naming the key.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "models/catalog.h"
#include "models/config_error.h"
#include "sim/metrics/diagnosis.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"
#include "sim/service/service_path.h"
#include "tests/sim/service_test_run.h"

namespace servesim {
namespace {

using testing::config_of;
using testing::Records;
using testing::run;
using testing::sum_to_e2e;
using testing::sum_to_ttft;

nlohmann::json closed_scenario(int clients, int requests, const nlohmann::json& service) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "model": "Llama-2-7B", "gpu": "A100-80GB", "engine": {"max_model_len": 4096},
    "workload": {"arrival": {"type": "closed"}, "prompt_tokens": 128, "output_tokens": 16},
    "seed": 3})");
  j["workload"]["arrival"]["clients"] = clients;
  j["workload"]["num_requests"] = requests;
  j["service"] = service;
  return j;
}

// A slow client: 1 ms per send, 2 ms per chunk, 1 ms per finish, no spread: 16 chunks make a
// request 34 ms of the client's work.
nlohmann::json slow_client(int threads) {
  nlohmann::json s = nlohmann::json::parse(R"({
    "network": {"rtt_s": 0.001},
    "client": {"machine": {"send_s": 0.001, "per_prompt_token_s": 0, "chunk_s": 0.002,
                           "finish_s": 0.001, "cv": 0}}})");
  s["client"]["machine"]["threads"] = threads;
  return s;
}

const StationStats& client_station(const SimulationResult& r) {
  EXPECT_FALSE(r.stations.empty());
  EXPECT_EQ(r.stations.front().name, "client");
  return r.stations.front();
}

TEST(ClientMachine, ASaturatedClientCapsThroughputAtThreadsOverItsWorkPerRequest) {
  // 256 users per thread keep the client's threads busy (with fewer, a thread can run dry
  // while its users' next sends wait behind chunks in FIFO order and the engine works on
  // them); the engine alone would serve several times more.
  const double work_s = 0.001 + 16 * 0.002 + 0.001;
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    const SimulationResult r =
        run(config_of(closed_scenario(256 * threads, 3000, slow_client(threads))));
    EXPECT_NEAR(r.summary.request_throughput, threads / work_s, 0.05 * threads / work_s);
    EXPECT_LE(r.summary.request_throughput, threads / work_s * 1.001);
    const StationStats& c = client_station(r);
    EXPECT_EQ(c.workers, threads);
    EXPECT_EQ(c.jobs, 3000u * 18u);  // a send, 16 chunks and a finish per request
    EXPECT_NEAR(c.mean_service_s, work_s / 18, 1e-9);
    EXPECT_GT(c.utilisation, 0.9);
    EXPECT_GT(c.mean_queue, 10);
  }
}

TEST(ClientMachine, SegmentsSumToE2eAndTtftAndTheClientsWaitsShowInThem) {
  Records records;
  const SimulationResult r = run(config_of(closed_scenario(64, 300, slow_client(1))), &records);
  ASSERT_EQ(records.all.size(), 300u);
  for (const RequestRecord& rec : records.all) {
    SCOPED_TRACE(rec.id);
    ASSERT_EQ(rec.status, RequestOutcome::kOk);
    EXPECT_NEAR(sum_to_e2e(rec.segments), rec.e2e_s(), 1e-9);
    EXPECT_NEAR(sum_to_ttft(rec.segments), rec.ttft_s(), 1e-9);
    // The send job (1 ms, and its wait) adds to the half round trip; the last chunk's job to
    // the stream.
    EXPECT_GE(rec.segments.network_s, 0.0005 + 0.001 - 1e-12);
    EXPECT_GE(rec.segments.stream_s, 0.0005 + 0.002 - 1e-12);
  }
  EXPECT_GT(r.summary.time.segments[static_cast<size_t>(Segment::kStream)].mean_s, 0.01);
}

TEST(ClientMachine, AbsentBlockKeepsTheIdealClientEventForEvent) {
  nlohmann::json ideal = slow_client(1);
  ideal["client"].erase("machine");
  const SimulationResult a = run(config_of(closed_scenario(8, 100, ideal)));
  nlohmann::json no_client = ideal;
  no_client.erase("client");
  const SimulationResult b = run(config_of(closed_scenario(8, 100, no_client)));
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.stations.size(), 1u);  // the API server alone: no client row
  const SimulationResult with = run(config_of(closed_scenario(8, 100, slow_client(1))));
  EXPECT_NE(with.fingerprint, a.fingerprint);
  EXPECT_GT(with.events, a.events);
}

TEST(ClientMachine, SameSeedSameRunAnotherSeedAnotherRun) {
  nlohmann::json service = slow_client(3);
  service["client"]["machine"]["cv"] = 0.5;
  nlohmann::json j = closed_scenario(32, 200, service);
  const SimulationResult a = run(config_of(j));
  const SimulationResult b = run(config_of(j));
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.summary.ttft.p99_s, b.summary.ttft.p99_s);
  j["seed"] = 4;
  EXPECT_NE(run(config_of(j)).fingerprint, a.fingerprint);
}

TEST(ClientMachine, DefaultsAreTheMeasuredCosts) {
  const ServiceSpec s =
      ServiceSpec::from_json(nlohmann::json::parse(R"({"client": {"machine": {}}})"), "t", "");
  ASSERT_TRUE(s.client.machine);
  const ClientMachineSpec& m = *s.client.machine;
  EXPECT_EQ(m.threads, 1);
  EXPECT_DOUBLE_EQ(m.send_s.mean(), kClientSendS);
  EXPECT_DOUBLE_EQ(m.per_prompt_token_s, kClientPerPromptTokenS);
  EXPECT_DOUBLE_EQ(m.chunk_s.mean(), kClientChunkS);
  EXPECT_DOUBLE_EQ(m.finish_s.mean(), kClientFinishS);
  EXPECT_DOUBLE_EQ(m.cv, kClientCv);
}

TEST(ClientMachine, ATimeoutWhileWaitingForTheSendJobEndsTheRequestAndTheRun) {
  // One thread, 1 s per send, a 0.5 s timeout: the first request leaves at 1 s, after its
  // deadline; every other one times out still queued for the client's thread.
  nlohmann::json service = nlohmann::json::parse(R"({
    "client": {"timeout_s": 0.5, "machine": {"threads": 1, "send_s": 1.0, "cv": 0}}})");
  nlohmann::json j = closed_scenario(4, 8, service);
  Records records;
  run(config_of(j), &records);
  ASSERT_EQ(records.all.size(), 8u);
  for (const RequestRecord& rec : records.all) EXPECT_EQ(rec.status, RequestOutcome::kTimedOut);
}

TEST(ClientMachine, RetriesTimeoutsAndTenantsRunThroughTheMachineToTheEnd) {
  // A rate limit that refuses most of a 200-user burst, retries with backoff, a 2 s client
  // timeout and two tenants: every outcome passes a finish job, every retry a send job.
  nlohmann::json service = nlohmann::json::parse(R"({
    "network": {"rtt_s": 0.002},
    "gateway": {"rate_limit": {"requests_per_s": 50, "burst": 20}},
    "client": {"timeout_s": 2,
               "retry": {"max_attempts": 4, "initial_backoff_s": 0.05, "max_backoff_s": 1},
               "machine": {"threads": 2, "chunk_s": 0.0002, "send_s": 0.001, "cv": 0.3}},
    "tenants": [{"name": "a", "share": 0.5, "max_in_flight": 60}, {"name": "b", "share": 0.5}]})");
  Records records;
  const SimulationResult r = run(config_of(closed_scenario(200, 1500, service)), &records);
  ASSERT_EQ(records.all.size(), 1500u);
  uint64_t retried = 0, failed = 0, least_jobs = 0;
  for (const RequestRecord& rec : records.all) {
    // A send and a finish per attempt, and an ok request's 16 chunks (a timed-out attempt may
    // have parsed some too).
    least_jobs += 2 * static_cast<uint64_t>(rec.attempts);
    if (rec.status == RequestOutcome::kOk) least_jobs += 16;
    EXPECT_GE(rec.attempts, 1);
    EXPECT_LE(rec.attempts, 4);
    retried += rec.attempts > 1;
    if (rec.status != RequestOutcome::kOk) {
      ++failed;
      continue;
    }
    EXPECT_NEAR(sum_to_e2e(rec.segments) + rec.segments.retry_s, rec.e2e_s(), 1e-9);
  }
  EXPECT_GT(retried, 0u);
  EXPECT_LT(failed, 1500u);
  EXPECT_GE(client_station(r).jobs, least_jobs);
}

// Drives a ServicePath alone: the host hands the engine's tokens back one per step.
class Bench final : public EventHandler, public ServicePathHost {
 public:
  Bench(const ServiceSpec& spec, int tokens) : path_(spec, 1, loop_, *this), tokens_(tokens) {}

  void handle(const Event& e) override {
    if (ServicePath::owns(e.kind)) {
      path_.handle(e, loop_.now_s());
      return;
    }
    ++steps_;  // kStepEnd: every delivered request gets a token
    for (uint64_t id : running_) path_.on_engine_token(id);
    path_.on_engine_step_end(loop_.now_s());
    if (steps_ < tokens_) {
      loop_.schedule_in(0.0002, EventKind::kStepEnd);
      return;
    }
    for (uint64_t id : running_) {
      RequestRecord r;
      r.id = id;
      r.output_tokens = tokens_;
      r.first_token_s = first_step_s_;
      r.finish_s = loop_.now_s();
      path_.on_engine_left(r, loop_.now_s());
    }
  }
  void deliver(const RequestSpec& request, double now_s) override {
    running_.push_back(request.id);
    if (running_.size() == 6) {
      first_step_s_ = now_s + 0.0002;
      loop_.schedule(first_step_s_, EventKind::kStepEnd);
    }
  }
  void complete(const RequestSpec& request, const RequestRecord& record, double) override {
    done[request.id] = record;
  }
  void abort(uint64_t, double) override {}
  void client_gap(const RequestSpec& request, double gap_s) override {
    gaps[request.id].push_back(gap_s);
  }

  void run() {
    for (uint64_t id = 0; id < 6; ++id) {
      RequestSpec r;
      r.id = id;
      r.prompt_tokens = 64;
      r.output_tokens = tokens_;
      path_.send(r, 0.0);
    }
    NullObserver null;
    loop_.run(*this, null);
  }

  std::map<uint64_t, std::vector<double>> gaps;
  std::map<uint64_t, RequestRecord> done;
  const ServicePath& path() const { return path_; }

 private:
  EventLoop loop_;
  ServicePath path_;
  int tokens_;
  int steps_ = 0;
  double first_step_s_ = 0;
  std::vector<uint64_t> running_;
};

TEST(ClientMachine, ChunksAreReceivedInOrderPerRequest) {
  // Chunk jobs far slower than the steps (0.2 ms apart) and widely spread: three threads
  // queue deep, yet each request's chunks come out in order, one gap per chunk after the first.
  const ServiceSpec spec = ServiceSpec::from_json(nlohmann::json::parse(R"({
    "frontend": {"request_s": 0, "per_prompt_token_s": 0, "step_s": 0,
                 "per_output_token_s": 0, "cv": 0},
    "client": {"machine": {"threads": 3, "chunk_s": {"type": "exponential", "mean": 0.001},
                           "cv": 1.0}}})"),
                                                  "t", "");
  Bench bench(spec, 40);
  bench.run();
  ASSERT_EQ(bench.done.size(), 6u);
  for (const auto& [id, gaps] : bench.gaps) {
    SCOPED_TRACE(id);
    ASSERT_EQ(gaps.size(), 39u);
    for (double g : gaps) EXPECT_GT(g, 0);
    const RequestRecord& r = bench.done.at(id);
    EXPECT_EQ(r.status, RequestOutcome::kOk);
    EXPECT_GT(r.finish_s, r.first_token_s);
  }
  EXPECT_EQ(bench.path().in_flight(), 0u);
}

TEST(ClientMachine, TheDiagnosisNamesTheClientAtNinetyPercentBusyWithAQueue) {
  RunFacts facts;
  facts.summary.completed = 100;
  facts.summary.request_throughput = 29.4;
  StationStats client;
  client.name = "client";
  client.workers = 1;
  client.utilisation = 0.90;
  client.mean_queue = 1.0;
  client.mean_wait_s = 0.2;
  client.mean_service_s = 0.002;
  facts.stations = {client};
  std::vector<Finding> why = diagnose(facts);
  ASSERT_FALSE(why.empty());
  EXPECT_EQ(why[0].code, "client_bound");
  EXPECT_NE(why[0].text.find("the load generator is the bottleneck"), std::string::npos);
  EXPECT_NE(why[0].text.find("service.client.machine.threads"), std::string::npos);
  EXPECT_EQ(why[0].evidence[0].metric, "service.stations[client].utilisation");
  // A busier server station would be station_saturated; the client never is.
  facts.stations[0].utilisation = 0.99;
  why = diagnose(facts);
  for (const Finding& f : why) EXPECT_NE(f.code, "station_saturated");
  facts.stations[0].utilisation = 0.89;
  for (const Finding& f : diagnose(facts)) EXPECT_NE(f.code, "client_bound");
  facts.stations[0].utilisation = 0.95;
  facts.stations[0].mean_queue = 0.5;
  for (const Finding& f : diagnose(facts)) EXPECT_NE(f.code, "client_bound");
}

std::vector<Finding> diagnose_scenario(const std::vector<std::string>& overrides,
                                       SimulationResult& r) {
  const Scenario s = load_scenario(
      SERVESIM_SOURCE_DIR "/configs/scenarios/service-client-bound.json", overrides, Catalog());
  r = run(s.config);
  return diagnose({r.summary, r.replicas, r.stations, r.simulated_s});
}

TEST(ClientMachine, TheBundledScenarioBlamesItsOneThreadClientAndFourThreadsClearIt) {
  SimulationResult one;
  const std::vector<Finding> why = diagnose_scenario({}, one);
  ASSERT_FALSE(why.empty());
  EXPECT_EQ(why[0].code, "client_bound") << why[0].text;
  EXPECT_EQ(why[0].text.rfind("the load generator is the bottleneck", 0), 0u) << why[0].text;
  EXPECT_GE(client_station(one).utilisation, 0.9);
  SimulationResult four;
  for (const Finding& f : diagnose_scenario({"service.client.machine.threads=4"}, four)) {
    EXPECT_NE(f.code, "client_bound") << f.text;
  }
  EXPECT_GT(four.summary.request_throughput, 1.3 * one.summary.request_throughput);
  EXPECT_LT(four.summary.ttft.mean_s, 0.5 * one.summary.ttft.mean_s);
}

void expect_error(const std::string& machine, const std::string& needle) {
  SCOPED_TRACE(machine);
  const nlohmann::json service =
      nlohmann::json::parse(R"({"client": {"machine": )" + machine + "}}");
  testing::expect_one_line_error([&] { ServiceSpec::from_json(service, "s.json: service", ""); },
                                 needle);
}

TEST(ClientMachine, BadInputFailsOnOneLineNamingTheKey) {
  expect_error("1", "service.client.machine: must be an object");
  expect_error(R"({"threads": 0})", "service.client.machine: threads must be between 1");
  expect_error(R"({"threads": 5000})", "threads");
  expect_error(R"({"threads": "two"})", "threads");
  expect_error(R"({"thread": 2})", "thread");
  expect_error(R"({"cv": -1})", "cv");
  expect_error(R"({"per_prompt_token_s": -1e-9})", "per_prompt_token_s");
  expect_error(R"({"chunk_s": -0.001})", "chunk_s");
  expect_error(R"({"send_s": "fast"})", "send_s");
  try {
    ServiceSpec::from_json(nlohmann::json::parse(R"({"stages": [{"name": "client"}]})"),
                           "s.json: service", "");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("service.stages[0]: name \"client\""), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace servesim
