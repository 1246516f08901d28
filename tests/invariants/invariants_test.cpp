// The simulator's invariants over random deployments (random_scenario.h): after each run every
// request ended in exactly one status, its tokens are those it asked for, the KV blocks are all
// back and the block pool's invariants hold (Simulation::run checks them), no request exceeds
// max_model_len, time never goes backwards in records and samples, the summary counts match the
// records, every completed request's segments sum to its E2E, every request belongs to one of
// the drawn tenants and their summaries add up to the run's, and the same seed gives the same
// fingerprint — again, and at 1 and 2 sweep threads.
//
// SERVESIM_INVARIANT_RUNS=N runs N scenarios (default 200, CI); SERVESIM_INVARIANT_SEED=S runs
// only scenario S, the one a failure names.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/catalog.h"
#include "models/config_error.h"
#include "plan/sweep.h"
#include "sim/run/scenario.h"
#include "sim/run/simulation.h"
#include "sim/service/client_spec.h"
#include "tests/invariants/random_scenario.h"

namespace servesim {
namespace {

using testing::DrawnScenario;

// Records what the run reports and checks, as it goes, that time only moves forward.
class CheckingObserver final : public Observer {
 public:
  // ordered_finishes: requests are reported in the order of their last token. Not with a
  // client machine: a client reports a request when its finish job is done, and the machine's
  // threads work through their queues at their own pace.
  explicit CheckingObserver(bool ordered_finishes) : ordered_finishes_(ordered_finishes) {}
  void on_progress(double sim_time_s, uint64_t, uint64_t) override {
    if (sim_time_s < last_progress_s_)
      fail("progress time went back to " + std::to_string(sim_time_s));
    last_progress_s_ = sim_time_s;
  }
  void on_request_done(const RequestRecord& r) override {
    if (r.status == RequestOutcome::kOk) {
      // Requests leave at the end of the step with their last token: in time order.
      if (ordered_finishes_ && r.finish_s < last_finish_s_)
        fail("request " + std::to_string(r.id) + " finished earlier than the one before");
      last_finish_s_ = r.finish_s;
    }
    records.push_back(r);
    if (records.size() == kMaxRecords)
      fail("runaway: more than " + std::to_string(kMaxRecords) + " requests");
  }
  // A runaway run (requests without end at one instant) stops instead of exhausting memory.
  bool should_stop() override { return records.size() >= kMaxRecords; }
  void on_sample(const TimeSample& s) override {
    double& last = last_sample_s_[s.replica];
    if (s.time_s < last)
      fail("sample of replica " + std::to_string(s.replica) + " went back in time");
    last = s.time_s;
    if (!(s.kv_usage >= 0 && s.kv_usage <= 1)) fail("kv_usage " + std::to_string(s.kv_usage));
    if (s.running < 0 || s.waiting < 0) fail("negative running/waiting count");
  }

  static constexpr size_t kMaxRecords = 200000;
  std::vector<RequestRecord> records;
  std::vector<std::string> problems;

 private:
  void fail(const std::string& what) {
    if (problems.size() < 5) problems.push_back(what);
  }
  double last_progress_s_ = 0;
  bool ordered_finishes_;
  double last_finish_s_ = 0;
  std::map<int, double> last_sample_s_;
};

struct Outcome {
  SimulationResult result;
  std::vector<RequestRecord> records;
  int max_model_len = 0;
};

std::vector<std::string> check_record(const RequestRecord& r, int max_model_len) {
  std::vector<std::string> out;
  const std::string id = "request " + std::to_string(r.id) + ": ";
  if (r.status == RequestOutcome::kOk) {
    if (!(r.arrival_s <= r.first_scheduled_s && r.first_scheduled_s <= r.first_token_s &&
          r.first_token_s <= r.finish_s)) {
      out.push_back(id + "times out of order");
    }
    if (r.output_tokens < 1) out.push_back(id + "ok with no output token");
    if (r.prompt_tokens + r.output_tokens > max_model_len) {
      out.push_back(id + std::to_string(r.prompt_tokens + r.output_tokens) +
                    " tokens exceed max_model_len " + std::to_string(max_model_len));
    }
    if (r.cached_prompt_tokens > r.prompt_tokens) out.push_back(id + "more cached than prompt");
    const RequestSegments& g = r.segments;
    const double sum = g.retry_s + g.pool_s + g.network_s + g.gateway_s + g.frontend_s +
                       g.pre_model_s + g.engine_queue_s + g.prefill_s + g.decode_queue_s +
                       g.kv_transfer_s + g.decode_s + g.stream_s;
    if (std::fabs(sum - r.e2e_s()) > 1e-6 * std::max(1.0, r.e2e_s())) {
      out.push_back(id + "segments sum to " + std::to_string(sum) + " s, E2E is " +
                    std::to_string(r.e2e_s()) + " s");
    }
  } else if (r.status == RequestOutcome::kRejected && r.output_tokens != 0) {
    out.push_back(id + "rejected but reports output tokens");
  }
  if (r.attempts < 1 || r.attempts > RetrySpec::kMaxAttempts) {
    out.push_back(id + std::to_string(r.attempts) + " attempts");
  }
  if ((r.limit != RateLimitKind::kNone) != (r.cause == FailureCause::kRateLimited)) {
    out.push_back(id + "refused by limit " + std::string(to_string(r.limit)) + " with cause " +
                  std::string(to_string(r.cause)));
  }
  return out;
}

// Every request belongs to one tenant, and the tenants' summaries add up to the run's.
std::vector<std::string> check_tenants(const SimulationResult& result,
                                       const std::vector<RequestRecord>& records) {
  std::vector<std::string> problems;
  const size_t n = result.tenants.size();
  uint64_t requests = 0, completed = 0;
  for (const TenantSummary& t : result.tenants) {
    requests += t.summary.requests;
    completed += t.summary.completed;
  }
  for (const RequestRecord& r : records) {
    if (r.tenant >= std::max<size_t>(n, 1))
      problems.push_back("request " + std::to_string(r.id) + " of tenant " +
                         std::to_string(r.tenant) + " of " + std::to_string(n));
  }
  if (n > 0 && (requests != result.summary.requests || completed != result.summary.completed)) {
    problems.push_back("tenants sum to " + std::to_string(requests) + " requests, " +
                       std::to_string(completed) + " completed; the run has " +
                       std::to_string(result.summary.requests) + ", " +
                       std::to_string(result.summary.completed));
  }
  return problems;
}

// The summary counts what the records say.
std::vector<std::string> check_summary(const MetricsSummary& m,
                                       const std::vector<RequestRecord>& records) {
  uint64_t ok = 0, rejected = 0, timed_out = 0, in = 0, out = 0;
  for (const RequestRecord& r : records) {
    ok += r.status == RequestOutcome::kOk;
    rejected += r.status == RequestOutcome::kRejected;
    timed_out += r.status == RequestOutcome::kTimedOut;
    if (r.status == RequestOutcome::kOk) in += r.prompt_tokens, out += r.output_tokens;
  }
  std::vector<std::string> problems;
  auto expect = [&](const char* what, uint64_t summary, uint64_t counted) {
    if (summary != counted) {
      problems.push_back(std::string("summary ") + what + " " + std::to_string(summary) +
                         " != " + std::to_string(counted) + " in the records");
    }
  };
  expect("requests", m.requests, records.size());
  expect("completed", m.completed, ok);
  expect("rejected", m.rejected, rejected);
  expect("timed_out", m.timed_out, timed_out);
  expect("input_tokens", m.input_tokens, in);
  expect("output_tokens", m.output_tokens, out);
  return problems;
}

// Each request once, and — where the stream does not depend on the system — with exactly the
// tokens its source asked for.
std::vector<std::string> check_requests(const DrawnScenario& d, const SimulationConfig& c,
                                        const std::vector<RequestRecord>& records) {
  std::vector<std::string> problems;
  std::map<uint64_t, const RequestRecord*> by_id;
  for (const RequestRecord& r : records) {
    if (!by_id.emplace(r.id, &r).second)
      problems.push_back("request " + std::to_string(r.id) + " left twice");
  }
  if (!by_id.empty() && by_id.rbegin()->first + 1 != by_id.size()) {
    problems.push_back("request ids are not 0.." + std::to_string(by_id.size() - 1));
  }
  if (d.num_requests > 0 && records.size() != d.num_requests && !c.workload.trace) {
    problems.push_back(std::to_string(records.size()) + " requests left, " +
                       std::to_string(d.num_requests) + " were issued");
  }
  if (!d.requests_known) return problems;
  const auto source = make_request_source(c.workload);
  size_t seen = 0;
  while (source->next_arrival_s()) {
    const RequestSpec spec = source->pop();
    ++seen;
    const auto it = by_id.find(spec.id);
    if (it == by_id.end()) {
      problems.push_back("request " + std::to_string(spec.id) + " never left");
      continue;
    }
    const RequestRecord& r = *it->second;
    if (r.prompt_tokens != spec.prompt_tokens ||
        (r.status == RequestOutcome::kOk && r.output_tokens != spec.output_tokens)) {
      problems.push_back("request " + std::to_string(spec.id) + ": " +
                         std::to_string(r.prompt_tokens) + "+" + std::to_string(r.output_tokens) +
                         " tokens, asked for " + std::to_string(spec.prompt_tokens) + "+" +
                         std::to_string(spec.output_tokens));
    }
    source->on_request_done(spec, spec.arrival_s);
  }
  if (seen != records.size())
    problems.push_back("the source issued " + std::to_string(seen) + " requests");
  return problems;
}

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

// Same seed twice, then through a two-point sweep at 1 and at 2 threads: one fingerprint.
std::vector<std::string> check_determinism(const DrawnScenario& d, const SimulationConfig& c,
                                           const std::string& fingerprint, const Catalog& catalog) {
  std::vector<std::string> problems;
  Simulation again(c);
  NullObserver quiet;
  if (again.run(quiet).fingerprint != fingerprint)
    problems.push_back("same seed, another fingerprint");
  std::vector<std::string> by_threads;
  for (int threads : {1, 2}) {
    SweepOptions o;
    o.threads = threads;
    const std::string seed = d.scenario["seed"].dump();
    o.axes = {{"seed", {seed, std::to_string(d.scenario["seed"].get<int64_t>() + 1)}}};
    const std::optional<SweepReport> r = run_sweep(d.scenario, "", "random", o, catalog, {});
    std::string prints;
    for (const SweepPoint& p : r->points)
      prints += p.result.fingerprint + (p.error.empty() ? " " : p.error);
    by_threads.push_back(prints);
  }
  if (by_threads[0] != by_threads[1])
    problems.push_back("sweep fingerprints differ at 1 and 2 threads");
  if (c.sample_interval_s == 0 && by_threads[0].rfind(fingerprint, 0) != 0) {
    problems.push_back("the sweep's first point is not the run's fingerprint");
  }
  return problems;
}

// One scenario: its problems, empty when every invariant holds; nullopt when the drawn
// deployment cannot run (does not fit, TP does not divide the heads): a valid refusal.
std::optional<std::vector<std::string>> check_scenario(uint64_t seed, const Catalog& catalog) {
  const DrawnScenario d = testing::random_scenario(seed);
  std::optional<Simulation> sim;
  try {
    sim.emplace(parse_scenario(d.scenario, "", "random", catalog).config);
  } catch (const ConfigError&) {
    return std::nullopt;
  }
  CheckingObserver observer(!d.client_machine);
  const SimulationResult result = sim->run(observer);
  std::vector<std::string> problems = observer.problems;
  const int max_model_len = sim->scheduler_config().max_model_len;
  for (const RequestRecord& r : observer.records) {
    for (std::string& p : check_record(r, max_model_len)) problems.push_back(std::move(p));
  }
  for (std::string& p : check_summary(result.summary, observer.records))
    problems.push_back(std::move(p));
  for (std::string& p : check_requests(d, sim->config(), observer.records))
    problems.push_back(std::move(p));
  for (std::string& p : check_tenants(result, observer.records)) problems.push_back(std::move(p));
  for (size_t i = 0; i < result.replicas.size(); ++i) {
    if (result.replicas[i].kv_blocks_used_at_end != 0) {
      problems.push_back("replica " + std::to_string(i) + " ended with " +
                         std::to_string(result.replicas[i].kv_blocks_used_at_end) +
                         " KV blocks in use");
    }
  }
  if (seed % 8 == 0) {
    for (std::string& p : check_determinism(d, sim->config(), result.fingerprint, catalog)) {
      problems.push_back(std::move(p));
    }
  }
  return problems;
}

TEST(Invariants, HoldOverRandomDeployments) {
  const Catalog catalog;
  const uint64_t only = env_or("SERVESIM_INVARIANT_SEED", UINT64_MAX);
  const uint64_t runs = only != UINT64_MAX ? 1 : env_or("SERVESIM_INVARIANT_RUNS", 200);
  const auto start = std::chrono::steady_clock::now();
  uint64_t ran = 0, refused = 0;
  for (uint64_t i = 0; i < runs; ++i) {
    const uint64_t seed = only != UINT64_MAX ? only : i;
    std::optional<std::vector<std::string>> problems;
    try {
      problems = check_scenario(seed, catalog);
    } catch (const std::exception& e) {  // a broken block pool (logic_error), or worse
      problems = std::vector<std::string>{std::string("threw: ") + e.what()};
    }
    if (!problems) {
      ++refused;
      continue;
    }
    ++ran;
    if (!problems->empty()) {
      std::string all;
      for (const std::string& p : *problems) all += "\n  " + p;
      FAIL() << "scenario " << seed
             << " broke an invariant (replay: SERVESIM_INVARIANT_SEED=" << seed << ")" << all
             << "\n"
             << testing::random_scenario(seed).scenario.dump(2);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "invariants: %llu deployments simulated and checked, %llu refused as not fitting, %.1f s\n",
      static_cast<unsigned long long>(ran), static_cast<unsigned long long>(refused), seconds);
  // The generator must mostly draw deployments that run, or the test checks little.
  EXPECT_GE(ran * 2, runs) << "too many drawn deployments were refused";
}

// The generator itself: a seed is a scenario, on every run.
TEST(Invariants, SameSeedSameScenario) {
  EXPECT_EQ(testing::random_scenario(42).scenario, testing::random_scenario(42).scenario);
  EXPECT_NE(testing::random_scenario(42).scenario, testing::random_scenario(43).scenario);
}

}  // namespace
}  // namespace servesim
