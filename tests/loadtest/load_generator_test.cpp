#include "serve/loadtest/load_generator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "fake_server_runner.h"
#include "models/config_error.h"
#include "sim/workload/workload.h"

namespace servesim {
namespace {

using testing::FakeOpenAiServer;
using testing::FakeServerOptions;

SimulationConfig config_for(const std::string& workload) {
  SimulationConfig c;
  c.model.name = "tiny";
  c.model.vocab_size = 1000;
  c.workload = WorkloadSpec::from_json(nlohmann::json::parse(workload), "", "workload");
  c.sample_interval_s = 0.05;
  return c;
}

LoadtestOptions options_for(const std::string& url) {
  LoadtestOptions o;
  o.url = EndpointUrl::parse(url);
  o.timeout_s = 10;
  o.max_duration_s = 30;  // a broken test ends; no test comes near it
  o.scrape_interval_s = 0.05;
  return o;
}

class Recorder final : public LoadtestObserver {
 public:
  std::function<bool()> stop_when;  // empty: never ask to stop
  std::vector<CallResult> calls;
  std::vector<RequestRecord> records;
  std::vector<TimeSample> samples;
  size_t scrapes = 0;
  size_t statuses = 0;

  bool should_stop() override { return stop_when && stop_when(); }
  void on_request_done(const RequestRecord& r) override { records.push_back(r); }
  void on_sample(const TimeSample& s) override { samples.push_back(s); }
  void on_call(const CallResult& c) override { calls.push_back(c); }
  void on_server_metrics(double, const std::vector<PromSample>&) override { ++scrapes; }
  void on_status(const LiveStatus&) override { ++statuses; }

  const CallResult& call(uint64_t id) const {
    for (const CallResult& c : calls) {
      if (c.spec.id == id) return c;
    }
    throw std::out_of_range("no call " + std::to_string(id));
  }
};

uint64_t errors(const LoadtestResult& r, ErrorCause cause) {
  return r.errors[static_cast<size_t>(cause)];
}

constexpr const char* kOpenLoop =
    R"({"arrival": {"type": "constant", "rate_qps": 200}, "prompt_tokens": 16,
        "output_tokens": 4, "num_requests": 20, "seed": 3})";

TEST(LoadGenerator, OpenLoopStreamsEveryRequestAndTimesEachToken) {
  FakeOpenAiServer server;
  Recorder rec;
  LoadGenerator generator(options_for(server.url()), config_for(kOpenLoop));
  const LoadtestResult r = generator.run(rec);

  EXPECT_EQ(r.model, "fake-model");  // from GET /v1/models
  EXPECT_EQ(r.server.models["data"][0]["id"], "fake-model");
  EXPECT_EQ(r.server.version["version"], "fake-1");
  EXPECT_EQ(r.stop_reason, "workload finished");
  EXPECT_FALSE(r.partial);
  EXPECT_EQ(r.sent, 20u);
  EXPECT_EQ(server.completions(), 20u);
  EXPECT_EQ(r.summary.completed, 20u);
  EXPECT_EQ(r.summary.output_tokens, 80u);
  EXPECT_EQ(r.summary.itl.count, 60u);  // 3 gaps per 4-token answer
  EXPECT_EQ(r.output_mismatch, 0u);
  EXPECT_EQ(r.http_status.at(200), 20u);
  ASSERT_EQ(rec.records.size(), 20u);
  for (const RequestRecord& rr : rec.records) {
    EXPECT_EQ(rr.status, RequestOutcome::kOk);
    EXPECT_NEAR(rr.arrival_s, static_cast<double>(rr.id) / 200, 1e-9);  // due times
    EXPECT_LE(rr.arrival_s, rr.first_scheduled_s);
    EXPECT_LT(rr.first_scheduled_s, rr.first_token_s);
    EXPECT_LE(rr.first_token_s, rr.finish_s);
    EXPECT_EQ(rr.output_tokens, 4);
    EXPECT_EQ(rr.prompt_tokens, 16);
  }
  const nlohmann::json body = server.last_body();
  EXPECT_EQ(body["model"], "fake-model");
  EXPECT_EQ(body["prompt"].size(), 16u);
  EXPECT_TRUE(body["prompt"][0].is_number_integer());
  EXPECT_EQ(body["max_tokens"], 4);
  EXPECT_EQ(body["ignore_eos"], true);
  EXPECT_EQ(r.server.timeseries_source, "server /metrics");
  EXPECT_GT(r.client.lag_samples, 0u);
}

// The load tester pulls the simulator's RequestSource: every open-loop kind and a trace replay
// send the requests `simulate` would see, at their due times and with their lengths.
TEST(LoadGenerator, PoissonGammaAndTraceWorkloadsSendTheSimulatorsRequests) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("servesim_lg_trace_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "trace.csv") << "arrived_at,num_prefill_tokens,num_decode_tokens\n"
                                      "0.0,10,3\n0.02,20,2\n0.021,5,4\n0.1,8,1\n";
  const std::string workloads[] = {
      R"({"arrival": {"type": "poisson", "rate_qps": 100}, "prompt_tokens": 12,
          "output_tokens": {"type": "uniform", "min": 1, "max": 6}, "num_requests": 15, "seed": 4})",
      R"({"arrival": {"type": "gamma", "rate_qps": 100, "cv": 3}, "prompt_tokens": 12,
          "output_tokens": 2, "num_requests": 15, "seed": 4})",
      R"({"trace": {"path": "trace.csv", "format": "splitwise"}})",
  };
  for (const std::string& w : workloads) {
    SimulationConfig c = config_for(kOpenLoop);
    c.workload = WorkloadSpec::from_json(nlohmann::json::parse(w), dir.string(), "workload");
    std::unique_ptr<RequestSource> source = make_request_source(c.workload);
    std::map<uint64_t, RequestSpec> expected;
    while (source->next_arrival_s()) {
      const RequestSpec r = source->pop();
      expected[r.id] = r;
    }
    FakeOpenAiServer server;
    Recorder rec;
    LoadGenerator generator(options_for(server.url()), c);
    const LoadtestResult result = generator.run(rec);
    EXPECT_EQ(result.summary.completed, expected.size()) << w;
    ASSERT_EQ(rec.records.size(), expected.size()) << w;
    std::set<double> gaps;
    double last_s = 0;
    for (const RequestRecord& r : rec.records) {
      const RequestSpec& e = expected.at(r.id);
      EXPECT_DOUBLE_EQ(r.arrival_s, e.arrival_s) << w << " request " << r.id;
      EXPECT_EQ(r.prompt_tokens, e.prompt_tokens) << w;
      EXPECT_EQ(r.output_tokens, e.output_tokens) << w;
      gaps.insert(std::round((e.arrival_s - last_s) * 1e6));
      last_s = e.arrival_s;
    }
    EXPECT_GT(gaps.size(), 2u) << w << ": arrivals are not those of a constant rate";
  }
  std::filesystem::remove_all(dir);
}

TEST(LoadGenerator, SteppedClosedLoopReportsEveryStep) {
  FakeOpenAiServer server;
  Recorder rec;
  LoadtestOptions o = options_for(server.url());
  o.status_interval_s = 0.1;
  LoadGenerator generator(o, config_for(R"({"arrival": {"type": "stepped", "steps": [1, 3],
      "step_duration_s": 0.4}, "prompt_tokens": 8, "output_tokens": 3})"));
  const LoadtestResult r = generator.run(rec);
  ASSERT_EQ(r.by_step.size(), 2u);
  EXPECT_GT(r.by_step[0].completed, 0u);
  std::set<uint32_t> clients[2];
  for (const CallResult& c : rec.calls) clients[c.spec.step_index].insert(c.spec.client);
  EXPECT_EQ(clients[0], std::set<uint32_t>({0}));
  EXPECT_EQ(clients[1], std::set<uint32_t>({0, 1, 2}));
  EXPECT_EQ(r.max_connections, 3u);  // the largest step
  EXPECT_EQ(r.summary.completed, r.by_step[0].completed + r.by_step[1].completed);
  EXPECT_GT(rec.statuses, 0u);
  EXPECT_GT(rec.scrapes, 0u);
  EXPECT_GT(rec.samples.size(), 0u);
  for (const RequestRecord& rr : rec.records) EXPECT_LT(rr.arrival_s, 0.8 + 1e-9);
}

TEST(LoadGenerator, CountsHttpErrorsResetsAndMalformedStreamsByCause) {
  FakeServerOptions fo;
  fo.status = {{1, 429}, {5, 500}};
  fo.reset_mid_stream = {2};
  fo.malformed = {3};
  FakeOpenAiServer server(fo);
  Recorder rec;
  LoadtestOptions o = options_for(server.url());
  o.model = "named";
  LoadGenerator generator(o, config_for(R"({"arrival": {"type": "closed", "clients": 1},
      "prompt_tokens": 4, "output_tokens": 3, "num_requests": 7})"));
  const LoadtestResult r = generator.run(rec);
  EXPECT_EQ(r.model, "named");
  EXPECT_EQ(r.sent, 7u);
  EXPECT_EQ(errors(r, ErrorCause::kNone), 3u);
  EXPECT_EQ(errors(r, ErrorCause::kHttpStatus), 2u);
  EXPECT_EQ(errors(r, ErrorCause::kReset), 1u);
  EXPECT_EQ(errors(r, ErrorCause::kMalformed), 1u);
  EXPECT_EQ(r.http_status.at(429), 1u);
  EXPECT_EQ(r.http_status.at(500), 1u);
  EXPECT_EQ(r.summary.completed, 3u);
  EXPECT_EQ(r.summary.rejected, 4u);
  EXPECT_NEAR(r.summary.error_rate, 4.0 / 7, 1e-12);
  EXPECT_NE(rec.call(1).detail.find("HTTP 429"), std::string::npos);
  EXPECT_EQ(server.last_body()["model"], "named");
}

TEST(LoadGenerator, TimeoutCountsFromTheDueTime) {
  FakeServerOptions fo;
  fo.hang = {0};
  FakeOpenAiServer server(fo);
  Recorder rec;
  LoadtestOptions o = options_for(server.url());
  o.timeout_s = 0.3;
  LoadGenerator generator(o, config_for(R"({"arrival": {"type": "constant", "rate_qps": 10},
      "prompt_tokens": 4, "output_tokens": 2, "num_requests": 2})"));
  const LoadtestResult r = generator.run(rec);
  EXPECT_EQ(errors(r, ErrorCause::kTimeout), 1u);
  EXPECT_EQ(errors(r, ErrorCause::kNone), 1u);
  EXPECT_EQ(r.summary.timed_out, 1u);
  EXPECT_EQ(rec.call(0).cause, ErrorCause::kTimeout);
}

// No coordinated omission: one connection (--max-connections 1) to a server that takes at
// least 0.1 s a request (two 50 ms token delays), while requests are due every 50 ms. Request
// i cannot go out before request i-1 ends, so it leaves at >= 0.1 i s and ends at >=
// 0.1 (i + 1) s, though it was due at 0.05 i s: counted from its due time its E2E is >= 0.1 +
// 0.05 i s and grows with the queue. Counted from when it went out, every E2E would be about
// 0.1 s — the stall hidden, as a closed-loop tester hides it.
TEST(LoadGenerator, OpenLoopLatencyCountsFromTheDueTimeThroughAStalledConnection) {
  FakeServerOptions fo;
  fo.token_delay_s = 0.05;
  FakeOpenAiServer server(fo);
  Recorder rec;
  LoadtestOptions o = options_for(server.url());
  o.max_connections = 1;
  constexpr int kRequests = 8;
  constexpr double kGapS = 0.05;     // seconds between due times (20 requests/s)
  constexpr double kServiceS = 0.1;  // seconds, the least the server takes for 2 tokens
  LoadGenerator generator(o, config_for(R"({"arrival": {"type": "constant", "rate_qps": 20},
      "prompt_tokens": 4, "output_tokens": 2, "num_requests": 8})"));
  const LoadtestResult r = generator.run(rec);
  ASSERT_EQ(r.summary.completed, static_cast<uint64_t>(kRequests));
  ASSERT_EQ(rec.records.size(), static_cast<size_t>(kRequests));
  std::vector<RequestRecord> by_id(kRequests);
  for (const RequestRecord& rr : rec.records) by_id.at(rr.id) = rr;
  for (int i = 0; i < kRequests; ++i) {
    const RequestRecord& rr = by_id[i];
    EXPECT_NEAR(rr.arrival_s, i * kGapS, 1e-9) << i;  // the due time, not the send time
    EXPECT_GE(rr.e2e_s(), kServiceS + i * kGapS - 1e-3) << i;
    EXPECT_GE(rr.ttft_s(), kServiceS / 2 + i * kGapS - 1e-3) << i;
    if (i > 0) {
      // It went out only once the one connection was free again; that wait is queueing_s.
      EXPECT_GE(rr.first_scheduled_s, by_id[i - 1].finish_s) << i;
      EXPECT_GE(rr.queueing_s(), i * (kServiceS - kGapS) - 1e-3) << i;
    }
  }
  // The summary sees the queue: the last request's E2E is at least 0.1 + 7 x 0.05 = 0.45 s,
  // against about 0.1 s of service.
  EXPECT_GE(r.summary.e2e.max_s, kServiceS + (kRequests - 1) * kGapS - 1e-3);
  EXPECT_GE(r.summary.queueing.max_s, (kRequests - 1) * (kServiceS - kGapS) - 1e-3);
  // The median of the 8 is at least the 4th (the sketch's percentiles are within 0.5%).
  EXPECT_GE(r.summary.e2e.p50_s, (kServiceS + 3 * kGapS) * 0.995 - 1e-3);
}

TEST(LoadGenerator, RefusedConnectionsAreCountedNotFatal) {
  Recorder rec;
  LoadtestOptions o = options_for("http://127.0.0.1:" + std::to_string(testing::unused_port()));
  o.model = "m";  // nothing answers GET /v1/models
  LoadGenerator generator(o, config_for(kOpenLoop));
  const LoadtestResult r = generator.run(rec);
  EXPECT_EQ(r.sent, 20u);
  EXPECT_EQ(errors(r, ErrorCause::kRefused), 20u);
  EXPECT_EQ(r.http_status.at(0), 20u);
  EXPECT_EQ(r.summary.completed, 0u);
  EXPECT_EQ(r.server.timeseries_source, "client");
  EXPECT_TRUE(r.server.models.is_null());
}

// A closed loop against a server that is down probes it with a growing backoff (10 ms, 20,
// 40, ... up to 1 s) instead of re-sending as fast as the kernel refuses: thousands of attempts
// in half a second without it, 6 with it.
TEST(LoadGenerator, AClosedLoopBacksOffFromRefusedConnections) {
  Recorder rec;
  LoadtestOptions o = options_for("http://127.0.0.1:" + std::to_string(testing::unused_port()));
  o.model = "m";
  o.max_duration_s = 0.5;
  LoadGenerator generator(o, config_for(R"({"arrival": {"type": "closed", "clients": 1},
      "prompt_tokens": 4, "output_tokens": 2, "num_requests": 100000})"));
  const LoadtestResult r = generator.run(rec);
  EXPECT_EQ(r.stop_reason, "max_duration_s");
  EXPECT_EQ(errors(r, ErrorCause::kRefused), r.sent);
  EXPECT_GE(r.sent, 3u);
  EXPECT_LE(r.sent, 8u);
  for (size_t i = 1; i + 1 < rec.calls.size(); ++i) {  // each wait at least the one before
    const double before = rec.calls[i].spec.arrival_s - rec.calls[i - 1].spec.arrival_s;
    const double after = rec.calls[i + 1].spec.arrival_s - rec.calls[i].spec.arrival_s;
    EXPECT_GT(after, before) << i;
  }
}

TEST(LoadGenerator, WithoutModelAndWithoutServerItSaysWhat) {
  Recorder rec;
  LoadGenerator generator(options_for("http://127.0.0.1:" + std::to_string(testing::unused_port())),
                          config_for(kOpenLoop));
  try {
    generator.run(rec);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--model"), std::string::npos) << e.what();
  }
}

TEST(LoadGenerator, StopRequestEndsThePartialRunAndKeepsWhatWasMeasured) {
  FakeServerOptions fo;
  for (uint64_t n = 1; n < 1000; ++n) fo.hang.insert(n);
  FakeOpenAiServer server(fo);
  Recorder rec;
  rec.stop_when = [&] { return server.completions() >= 3; };  // 1 and 2 hang in flight
  LoadGenerator generator(options_for(server.url()), config_for(R"({"arrival": {"type":
      "constant", "rate_qps": 50}, "prompt_tokens": 4, "output_tokens": 2, "num_requests": 1000})"));
  const LoadtestResult r = generator.run(rec);
  EXPECT_TRUE(r.partial);
  EXPECT_EQ(r.stop_reason, "interrupted");
  EXPECT_EQ(r.summary.completed, 1u);
  EXPECT_LT(r.sent, 1000u);
  EXPECT_GE(errors(r, ErrorCause::kCancelled), 2u);  // the hung ones, cut short
  EXPECT_EQ(r.summary.requests, r.sent - errors(r, ErrorCause::kCancelled));
}

TEST(LoadGenerator, MaxDurationAndMaxRequestsBoundTheRun) {
  FakeServerOptions fo;
  fo.hang = {0};
  FakeOpenAiServer server(fo);
  Recorder rec;
  LoadtestOptions o = options_for(server.url());
  o.max_duration_s = 0.3;
  LoadGenerator generator(o, config_for(kOpenLoop));
  const LoadtestResult r = generator.run(rec);
  EXPECT_TRUE(r.partial);
  EXPECT_EQ(r.stop_reason, "max_duration_s");
  EXPECT_EQ(errors(r, ErrorCause::kCancelled), 1u);

  FakeOpenAiServer server2;
  Recorder rec2;
  LoadtestOptions o2 = options_for(server2.url());
  o2.max_requests = 5;
  LoadGenerator capped(o2, config_for(kOpenLoop));
  const LoadtestResult r2 = capped.run(rec2);
  EXPECT_EQ(r2.sent, 5u);
  EXPECT_EQ(r2.stop_reason, "max_requests");
  EXPECT_FALSE(r2.partial);
}

TEST(LoadGenerator, ConnectionsAreReusedAndStaleOnesRetried) {
  FakeOpenAiServer server;
  Recorder rec;
  LoadtestOptions o = options_for(server.url());
  o.scrape_interval_s = 0;  // no /metrics connections to count
  const char* workload = R"({"arrival": {"type": "closed", "clients": 1}, "prompt_tokens": 4,
      "output_tokens": 2, "num_requests": 6})";
  LoadGenerator generator(o, config_for(workload));
  EXPECT_EQ(generator.run(rec).summary.completed, 6u);
  EXPECT_EQ(server.connections(), 2u + 1u);  // two probes, one kept-alive connection

  FakeServerOptions fo;
  fo.drop_idle = true;  // keep-alive answers, then the server closes the idle connection
  FakeOpenAiServer dropping(fo);
  Recorder rec2;
  LoadGenerator retrying(options_for(dropping.url()), config_for(workload));
  const LoadtestResult r = retrying.run(rec2);
  EXPECT_EQ(r.summary.completed, 6u);
  EXPECT_EQ(errors(r, ErrorCause::kReset), 0u);
}

TEST(LoadGenerator, ChatEndpointCountsContentChunks) {
  FakeOpenAiServer server;
  Recorder rec;
  LoadtestOptions o = options_for(server.url());
  o.api = ApiKind::kChat;
  LoadGenerator generator(o, config_for(R"({"arrival": {"type": "closed", "clients": 2},
      "prompt_tokens": 5, "output_tokens": 3, "num_requests": 4})"));
  const LoadtestResult r = generator.run(rec);
  EXPECT_EQ(r.summary.completed, 4u);
  EXPECT_EQ(r.summary.output_tokens, 12u);
  EXPECT_TRUE(server.last_body().contains("messages"));
}

TEST(LoadGenerator, RejectsBadOptions) {
  LoadtestOptions o = options_for("http://127.0.0.1:1");
  o.timeout_s = 0;
  EXPECT_THROW(LoadGenerator(o, config_for(kOpenLoop)), ConfigError);
  SimulationConfig no_vocab = config_for(kOpenLoop);
  no_vocab.model.vocab_size = 0;
  EXPECT_THROW(LoadGenerator(options_for("http://127.0.0.1:1"), no_vocab), ConfigError);
}

}  // namespace
}  // namespace servesim

namespace servesim {
namespace {

// How many requests a second the client drives and its CPU per request, against the fake
// server answering at once (4 tokens, no delay) in this process. A measurement, not a check:
// run with --gtest_also_run_disabled_tests --gtest_filter='*Throughput*'.
TEST(LoadGenerator, DISABLED_Throughput) {
  FakeServerOptions fo;
  fo.token_delay_s = 0;
  FakeOpenAiServer server(fo);
  Recorder rec;
  LoadtestOptions o = options_for(server.url());
  o.scrape_interval_s = 0;
  LoadGenerator generator(o, config_for(R"({"arrival": {"type": "closed", "clients": 32},
      "prompt_tokens": 128, "output_tokens": 4, "duration_s": 5})"));
  const LoadtestResult r = generator.run(rec);
  std::printf(
      "%llu requests in %.2f s: %.0f requests/s, %.0f output chunks/s; client thread "
      "CPU %.2f s = %.1f us per request (%.0f%% of one core); lag p99 %.2f ms\n",
      static_cast<unsigned long long>(r.summary.completed), r.wall_s,
      static_cast<double>(r.summary.completed) / r.wall_s,
      static_cast<double>(r.summary.output_tokens) / r.wall_s, r.client.cpu_s,
      r.client.cpu_s / static_cast<double>(r.summary.completed) * 1e6, r.client.cpu_fraction * 100,
      r.client.lag_p99_s * 1e3);
  EXPECT_EQ(r.summary.rejected, 0u);
}

}  // namespace
}  // namespace servesim
