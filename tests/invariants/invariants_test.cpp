// The simulator's invariants over random deployments (random_scenario.h): after each run every
// request ended in exactly one status, its tokens are those it asked for, the KV blocks are all
// back and the block pool's invariants hold (Simulation::run checks them), no request exceeds
// max_model_len, time never goes backwards in records and samples, the summary counts match the
// records, every completed request's segments sum to its E2E, every request belongs to one of
// the drawn tenants and their summaries add up to the run's; for agent workloads every session
// ended once with a record that holds together (times, critical path, spans, counters), the
// sessions' calls are the run's requests and the deployments' figures add up to the run's; and
// the same seed gives the same fingerprint — again, and at 1 and 2 sweep threads.
//
// SERVESIM_INVARIANT_RUNS=N runs N scenarios (default 200, CI), from scenario
// SERVESIM_INVARIANT_FIRST (default 0, so a long run can go on where an earlier one stopped);
// SERVESIM_INVARIANT_SEED=S runs only scenario S, the one a failure names, and prints its
// scenario first (flushed, so a seed that never ends can still be read).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/catalog.h"
#include "models/config_error.h"
#include "plan/sweep.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"
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
  // spans: ask every session for its calls' spans (SessionRecord::spans).
  CheckingObserver(bool ordered_finishes, bool spans)
      : ordered_finishes_(ordered_finishes), spans_(spans) {}
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
  void on_session_done(const SessionRecord& r) override { sessions.push_back(r); }
  bool wants_session_spans() override { return spans_; }
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
  std::vector<SessionRecord> sessions;
  std::vector<std::string> problems;

 private:
  void fail(const std::string& what) {
    if (problems.size() < 5) problems.push_back(what);
  }
  double last_progress_s_ = 0;
  bool ordered_finishes_;
  bool spans_;
  double last_finish_s_ = 0;
  std::map<int, double> last_sample_s_;
};

struct Outcome {
  SimulationResult result;
  std::vector<RequestRecord> records;
  int max_model_len = 0;
};

// Equal within a millionth (of 1 s at least): sums of the same times in another order.
bool near(double a, double b) {
  return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b));
}

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
    if (!near(sum, r.e2e_s())) {
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

// An ended session's own record holds together: times in order, its critical path sums to its
// E2E, its counters within one another, and its spans (when recorded) inside the session with
// the critical ones back to back from its start to its end.
std::vector<std::string> check_session(const SessionRecord& r) {
  std::vector<std::string> out;
  const std::string id = "session " + std::to_string(r.id) + ": ";
  if (!(r.start_s >= 0 && r.finish_s >= r.start_s)) out.push_back(id + "ends before it starts");
  if (!r.ok && r.cause == FailureCause::kNone) out.push_back(id + "failed without a cause");
  if (r.fallback_calls > r.llm_calls || r.skipped_steps > r.llm_calls)
    out.push_back(id + "more fallbacks or skipped steps than calls");
  if (r.cached_tokens > r.input_tokens) out.push_back(id + "more cached than input tokens");
  if (r.tool_failures > r.tool_calls || r.tool_cache_hits > r.tool_cache_lookups ||
      r.llm_exact_hits + r.llm_semantic_hits > r.llm_cache_lookups) {
    out.push_back(id + "more failures or hits than tool runs or lookups");
  }
  if (!r.spans.empty() && std::count_if(r.spans.begin(), r.spans.end(), [](const SessionSpan& s) {
                            return s.kind == SpanKind::kLlm;
                          }) != r.llm_calls) {
    out.push_back(id + "LLM spans are not its calls");
  }
  if (!r.ok) return out;
  if (!std::isnan(r.first_token_s) &&
      !(r.first_token_s >= r.start_s && r.first_token_s <= r.finish_s))
    out.push_back(id + "first token outside the session");
  if (!near(r.path.total_s(), r.e2e_s())) {
    out.push_back(id + "critical path " + std::to_string(r.path.total_s()) + " s, E2E " +
                  std::to_string(r.e2e_s()) + " s");
  }
  if (r.path.llm_calls > r.llm_calls) out.push_back(id + "more LLM calls on its path than made");
  std::vector<const SessionSpan*> critical;
  for (const SessionSpan& s : r.spans) {
    if (!(s.start_s >= r.start_s - 1e-9 && s.end_s <= r.finish_s + 1e-9 && s.end_s >= s.start_s))
      out.push_back(id + "span " + s.step + " outside the session");
    if (s.critical) critical.push_back(&s);
  }
  if (r.spans.empty()) return out;
  std::sort(critical.begin(), critical.end(),
            [](const SessionSpan* a, const SessionSpan* b) { return a->start_s < b->start_s; });
  double sum_s = 0;
  for (size_t i = 0; i < critical.size(); ++i) {
    sum_s += critical[i]->duration_s();
    if (i > 0 && !near(critical[i]->start_s, critical[i - 1]->end_s))
      out.push_back(id + "critical spans not back to back at " + critical[i]->step);
  }
  if (!near(sum_s, r.e2e_s()))
    out.push_back(id + "critical spans sum to " + std::to_string(sum_s) + " s");
  return out;
}

// Every session ended once, the sessions' calls are the run's requests, and the session
// summary counts what the records say.
std::vector<std::string> check_sessions(const DrawnScenario& d, const SimulationResult& result,
                                        const std::vector<SessionRecord>& sessions,
                                        const std::vector<RequestRecord>& records) {
  std::vector<std::string> problems;
  if (!d.agent) {
    if (!sessions.empty() || result.sessions) problems.push_back("sessions without an agent");
    return problems;
  }
  std::map<uint64_t, const SessionRecord*> by_id;
  uint64_t ok = 0, calls = 0;
  for (const SessionRecord& r : sessions) {
    if (!by_id.emplace(r.id, &r).second)
      problems.push_back("session " + std::to_string(r.id) + " ended twice");
    ok += r.ok;
    calls += static_cast<uint64_t>(r.llm_calls);
    for (std::string& p : check_session(r)) problems.push_back(std::move(p));
  }
  if (!by_id.empty() && by_id.rbegin()->first + 1 != by_id.size())
    problems.push_back("session ids are not 0.." + std::to_string(by_id.size() - 1));
  if (d.stepped_sessions ? sessions.size() > d.sessions : sessions.size() != d.sessions) {
    problems.push_back(std::to_string(sessions.size()) + " sessions ended, " +
                       std::to_string(d.sessions) + " were to start");
  }
  if (calls != records.size()) {
    problems.push_back("the sessions made " + std::to_string(calls) + " LLM calls, the run has " +
                       std::to_string(records.size()) + " requests");
  }
  if (!result.sessions) {
    problems.push_back("no session summary");
  } else if (result.sessions->sessions != sessions.size() || result.sessions->completed != ok ||
             result.sessions->failed != sessions.size() - ok) {
    problems.push_back("session summary " + std::to_string(result.sessions->sessions) + " (" +
                       std::to_string(result.sessions->completed) + " ok) != " +
                       std::to_string(sessions.size()) + " (" + std::to_string(ok) + " ok)");
  }
  return problems;
}

// With more deployments, theirs add up to the run's and every replica belongs to one.
std::vector<std::string> check_deployments(const SimulationResult& result) {
  std::vector<std::string> problems;
  const size_t n = std::max<size_t>(result.deployments.size(), 1);
  for (const ReplicaSummary& r : result.replicas) {
    if (r.deployment >= n)
      problems.push_back("replica of deployment " + std::to_string(r.deployment));
  }
  if (result.deployments.empty()) return problems;
  uint64_t requests = 0, completed = 0, output = 0;
  for (const DeploymentResult& d : result.deployments) {
    requests += d.summary.requests;
    completed += d.summary.completed;
    output += d.summary.output_tokens;
  }
  if (requests != result.summary.requests || completed != result.summary.completed ||
      output != result.summary.output_tokens) {
    problems.push_back("deployments sum to " + std::to_string(requests) + " requests, " +
                       std::to_string(completed) + " completed, " + std::to_string(output) +
                       " output tokens; the run has " + std::to_string(result.summary.requests) +
                       ", " + std::to_string(result.summary.completed) + ", " +
                       std::to_string(result.summary.output_tokens));
  }
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

// What the agent workloads among the runs covered, so the test can say it covered something.
struct AgentTally {
  uint64_t runs = 0;
  uint64_t two_deployments = 0;
  uint64_t two_with_disaggregation = 0;  // the own deployment disaggregated
  uint64_t sessions = 0;
  uint64_t failed = 0;
  uint64_t answered_by_fallback = 0;  // fallback calls of sessions that completed
  uint64_t skipped_steps = 0;

  void add(const DrawnScenario& d, const std::vector<SessionRecord>& records) {
    if (!d.agent) return;
    ++runs;
    two_deployments += d.scenario.contains("deployments");
    two_with_disaggregation +=
        d.scenario.contains("deployments") && d.scenario.contains("disaggregation");
    for (const SessionRecord& r : records) {
      ++sessions;
      failed += !r.ok;
      if (r.ok) answered_by_fallback += static_cast<uint64_t>(r.fallback_calls);
      skipped_steps += static_cast<uint64_t>(r.skipped_steps);
    }
  }
};

// What the deployments among the runs covered: asynchronous scheduling, and what the
// disaggregated ones had.
struct DeploymentTally {
  uint64_t async_scheduling = 0;  // runs whose own engine schedules asynchronously
  uint64_t disaggregated = 0;     // disaggregated runs
  uint64_t host_tier = 0;         // a role (or both) with a KV offload tier
  uint64_t wide_ep = 0;           // a role whose instances are lock-stepped expert-parallel servers

  void add(const Simulation& sim) {
    async_scheduling += sim.memory_plan().engine.async_scheduling;
    const DisaggregationSpec& d = sim.config().disaggregation;
    if (!d.enabled) return;
    ++disaggregated;
    host_tier += sim.prefill_memory_plan().num_host_kv_blocks > 0 ||
                 sim.memory_plan().num_host_kv_blocks > 0;
    wide_ep += d.prefill.parallel.lockstep() || d.decode.parallel.lockstep();
  }
};

// One scenario: its problems, empty when every invariant holds; nullopt when the drawn
// deployment cannot run (does not fit, TP does not divide the heads): a valid refusal.
std::optional<std::vector<std::string>> check_scenario(uint64_t seed, const Catalog& catalog,
                                                       AgentTally& tally,
                                                       DeploymentTally& deployments) {
  const DrawnScenario d = testing::random_scenario(seed);
  std::optional<Simulation> sim;
  try {
    sim.emplace(parse_scenario(d.scenario, "", "random", catalog).config);
  } catch (const ConfigError&) {
    return std::nullopt;
  }
  CheckingObserver observer(!d.client_machine, seed % 2 == 0);
  const SimulationResult result = sim->run(observer);
  tally.add(d, observer.sessions);
  deployments.add(*sim);
  std::vector<std::string> problems = observer.problems;
  // A record does not say which deployment served it: each is held to the largest limit.
  int max_model_len = sim->scheduler_config().max_model_len;
  for (const DeploymentSpec& k : sim->config().deployments)
    max_model_len = std::max(max_model_len, k.engine.max_model_len);
  for (const RequestRecord& r : observer.records) {
    for (std::string& p : check_record(r, max_model_len)) problems.push_back(std::move(p));
  }
  for (std::string& p : check_summary(result.summary, observer.records))
    problems.push_back(std::move(p));
  for (std::string& p : check_requests(d, sim->config(), observer.records))
    problems.push_back(std::move(p));
  for (std::string& p : check_tenants(result, observer.records)) problems.push_back(std::move(p));
  for (std::string& p : check_sessions(d, result, observer.sessions, observer.records))
    problems.push_back(std::move(p));
  for (std::string& p : check_deployments(result)) problems.push_back(std::move(p));
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
  const uint64_t first = only != UINT64_MAX ? only : env_or("SERVESIM_INVARIANT_FIRST", 0);
  const auto start = std::chrono::steady_clock::now();
  uint64_t ran = 0, refused = 0;
  AgentTally agents;
  DeploymentTally deployments;
  for (uint64_t i = 0; i < runs; ++i) {
    const uint64_t seed = first + i;
    // Replaying one seed shows its scenario first, so one that never ends can be read too.
    if (only != UINT64_MAX) {
      std::printf("%s\n", testing::random_scenario(seed).scenario.dump(2).c_str());
      std::fflush(stdout);
    }
    std::optional<std::vector<std::string>> problems;
    try {
      problems = check_scenario(seed, catalog, agents, deployments);
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
  std::printf(
      "  of which %llu agent workloads (%llu on two deployments, %llu of them disaggregated): "
      "%llu sessions, %llu failed, "
      "%llu fallback calls in completed ones, %llu optional steps skipped\n",
      static_cast<unsigned long long>(agents.runs),
      static_cast<unsigned long long>(agents.two_deployments),
      static_cast<unsigned long long>(agents.two_with_disaggregation),
      static_cast<unsigned long long>(agents.sessions),
      static_cast<unsigned long long>(agents.failed),
      static_cast<unsigned long long>(agents.answered_by_fallback),
      static_cast<unsigned long long>(agents.skipped_steps));
  std::printf(
      "  %llu disaggregated (%llu with a host KV tier, %llu with wide EP in a role), %llu "
      "scheduling asynchronously\n",
      static_cast<unsigned long long>(deployments.disaggregated),
      static_cast<unsigned long long>(deployments.host_tier),
      static_cast<unsigned long long>(deployments.wide_ep),
      static_cast<unsigned long long>(deployments.async_scheduling));
  // The generator must mostly draw deployments that run, or the test checks little; and over
  // the CI's 200 draws, agent sessions on two deployments that fail, that complete through a
  // fallback and that skip optional steps, disaggregated deployments with a host KV tier
  // and with wide expert parallelism in a role, and asynchronous scheduling.
  EXPECT_GE(ran * 2, runs) << "too many drawn deployments were refused";
  if (runs >= 200) {
    EXPECT_GE(agents.runs * 20, ran) << "too few agent workloads ran";
    EXPECT_GT(agents.two_deployments, 0u);
    EXPECT_GT(agents.failed, 0u);
    EXPECT_GT(agents.answered_by_fallback, 0u);
    EXPECT_GT(agents.skipped_steps, 0u);
    EXPECT_GT(deployments.host_tier, 0u);
    EXPECT_GT(deployments.wide_ep, 0u);
    EXPECT_GT(deployments.async_scheduling, 0u);
  }
}

// The generator itself: a seed is a scenario, on every run.
TEST(Invariants, SameSeedSameScenario) {
  EXPECT_EQ(testing::random_scenario(42).scenario, testing::random_scenario(42).scenario);
  EXPECT_NE(testing::random_scenario(42).scenario, testing::random_scenario(43).scenario);
}

}  // namespace
}  // namespace servesim
