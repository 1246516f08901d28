// Tool-result and LLM-response caches: hit rates converge to their configured probabilities
// and to the closed form of the TTL cache under Poisson lookups, a hit skips the tool or the
// deployment, failed runs are not stored, lookups sit on the critical path, runs repeat from
// the seed, and every new key is parsed strictly.
#include <gtest/gtest.h>

#include <cmath>

#include "models/config_error.h"
#include "sim/agent/session_report.h"
#include "tests/sim/agent/agent_harness.h"

namespace servesim {
namespace {

using agent_test::llm;
using agent_test::one_workflow;
using agent_test::poisson;
using agent_test::run_agent;
using agent_test::tool;
using agent_test::workload_of;
using nlohmann::json;

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

json cached_tool(double latency_s, const json& cache) {
  json t = tool(latency_s);
  t["cache"] = cache;
  return t;
}

json cached_llm(const json& cache) {
  json l = llm(100, 20);
  l["cache"] = cache;
  return l;
}

// Hits over lookups of a TTL cache that stores on a miss, under Poisson lookups at rate_qps:
// a key of popularity p sees a miss, then hits for ttl_s (rate_qps p ttl_s of them on
// average), then a miss again — a renewal cycle, so its hit ratio is x / (1 + x), x = rate p ttl.
double ttl_hit_rate(const ToolCacheSpec& spec, double rate_qps) {
  double hits = 0;
  for (int k = 0; k < spec.keys; ++k) {
    const double p = spec.key_probability(k);
    const double x = rate_qps * p * spec.ttl_s;
    hits += p * x / (1 + x);
  }
  return hits;
}

TEST(AgentCache, LlmHitRatesConvergeToTheirProbabilities) {
  const json cache = {
      {"exact_hit_probability", 0.2}, {"semantic_hit_probability", 0.3}, {"lookup_s", 0.01}};
  const int n = 4000;
  const auto run = run_agent(workload_of(one_workflow(cached_llm(cache), n), poisson(5)));
  const SessionSummary& s = run.summary;
  ASSERT_EQ(s.completed, static_cast<uint64_t>(n));
  EXPECT_DOUBLE_EQ(s.llm_cache_lookups, 1.0);
  // Four standard deviations of a binomial share over n draws.
  EXPECT_NEAR(s.llm_exact_hit_rate, 0.2, 4 * std::sqrt(0.2 * 0.8 / n));
  EXPECT_NEAR(s.llm_semantic_hit_rate, 0.3, 4 * std::sqrt(0.3 * 0.7 / n));
  // Only the misses reach the deployment; a hit takes its lookup alone.
  int hits = 0;
  for (const SessionRecord& r : run.sessions) {
    const bool hit = r.llm_exact_hits + r.llm_semantic_hits == 1;
    hits += hit ? 1 : 0;
    EXPECT_EQ(r.llm_calls, hit ? 0 : 1);
    EXPECT_EQ(r.input_tokens, hit ? 0 : 100);
    EXPECT_NEAR(r.e2e_s(), hit ? 0.01 : 1.01, 1e-9);
    EXPECT_NEAR(r.path.cache_s, 0.01, 1e-12);
    EXPECT_NEAR(r.path.total_s(), r.e2e_s(), 1e-9);
    EXPECT_NEAR(r.ttft_s(), hit ? 0.01 : 0.31, 1e-9);  // a hit's whole answer comes at once
  }
  EXPECT_EQ(run.calls.size(), static_cast<size_t>(n - hits));
}

// A hit's answer enters the context as a call's would: the next call re-sends it.
TEST(AgentCache, LlmHitAnswerEntersTheContext) {
  const json cache = {{"exact_hit_probability", 1.0}};
  const auto run =
      run_agent(workload_of(one_workflow({cached_llm(cache), llm(50, 10)}, 1), poisson(1)));
  ASSERT_EQ(run.calls.size(), 1u);
  EXPECT_EQ(run.calls[0].history_tokens, 120);  // the hit's 100 new + 20 output tokens
  EXPECT_EQ(run.calls[0].prompt_tokens, 170);
  EXPECT_EQ(run.sessions[0].llm_exact_hits, 1);
  EXPECT_EQ(run.sessions[0].output_tokens, 10);
}

TEST(AgentCache, ToolHitRateMatchesTheTtlClosedForm) {
  for (const json& keys :
       {json{{"popularity", "zipf"}, {"zipf_exponent", 1.0}}, json{{"popularity", "uniform"}}}) {
    json cache = {{"ttl_s", 2.0}, {"keys", 200}};
    cache.update(keys);
    const double rate_qps = 20;
    const int n = 20000;
    const auto run =
        run_agent(workload_of(one_workflow(cached_tool(0, cache), n), poisson(rate_qps)));
    const ToolCacheSpec spec = ToolCacheSpec::from_json(cache, "cache", "");
    const double expected = ttl_hit_rate(spec, rate_qps);
    EXPECT_NEAR(run.summary.tool_cache_hit_rate, expected, 0.015) << keys.dump();
    EXPECT_GT(expected, 0.1);  // far from 0: the test can tell
  }
}

TEST(AgentCache, ZipfKeysFollowTheirPopularity) {
  const ToolCacheSpec spec = ToolCacheSpec::from_json(
      json{{"ttl_s", 1}, {"keys", 10}, {"popularity", "zipf"}, {"zipf_exponent", 1.2}}, "c", "");
  Rng rng(7);
  std::vector<int> counts(10, 0);
  const int n = 100000;
  for (int i = 0; i < n; ++i) ++counts[static_cast<size_t>(spec.draw_key(rng))];
  double sum = 0;
  for (int k = 0; k < 10; ++k) {
    const double p = spec.key_probability(k);
    EXPECT_NEAR(counts[static_cast<size_t>(k)] / double(n), p, 4 * std::sqrt(p * (1 - p) / n));
    sum += p;
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
  EXPECT_NEAR(spec.key_probability(1) / spec.key_probability(0), std::pow(2.0, -1.2), 1e-12);
}

// One key, sessions one second apart, a 1 ms lookup, a 0.5 s tool and a 2.4 s TTL: the run
// that misses at t stores at t + 0.501, valid until t + 2.901, so the next two sessions hit
// and the third misses.
TEST(AgentCache, ToolHitSkipsTheToolUntilTheEntryExpires) {
  const json cache = {{"ttl_s", 2.4}, {"keys", 1}, {"lookup_s", 0.001}};
  const json arrival = {{"type", "constant"}, {"rate_qps", 1}};
  const auto run = run_agent(workload_of(one_workflow(cached_tool(0.5, cache), 9), arrival));
  ASSERT_EQ(run.sessions.size(), 9u);
  for (size_t i = 0; i < 9; ++i) {
    const SessionRecord& r = run.sessions[i];
    const bool hit = i % 3 != 0;
    EXPECT_EQ(r.tool_cache_hits, hit ? 1 : 0) << i;
    EXPECT_EQ(r.tool_attempts, hit ? 0 : 1) << i;
    EXPECT_EQ(r.tool_calls, 1);
    EXPECT_NEAR(r.e2e_s(), hit ? 0.001 : 0.501, 1e-9) << i;
    EXPECT_NEAR(r.path.total_s(), r.e2e_s(), 1e-9);
    EXPECT_NEAR(r.path.cache_s, 0.001, 1e-12);
  }
  EXPECT_NEAR(run.summary.tool_cache_hit_rate, 6.0 / 9.0, 1e-12);
  EXPECT_NEAR(run.summary.cache_lookup_s, 0.001, 1e-12);
}

TEST(AgentCache, FailedRunsAreNotStored) {
  json t = cached_tool(0.5, json{{"ttl_s", 100}, {"keys", 1}});
  t["failure_probability"] = 1.0;
  const json arrival = {{"type", "constant"}, {"rate_qps", 1}};
  const auto run = run_agent(workload_of(one_workflow(t, 5), arrival));
  EXPECT_EQ(run.summary.tool_cache_hit_rate, 0.0);
  for (const SessionRecord& r : run.sessions) EXPECT_EQ(r.tool_failures, 1);
}

TEST(AgentCache, SameSeedSameSessions) {
  const json steps = {
      cached_tool(0.3, json{{"ttl_s", 5},
                            {"keys", 20},
                            {"popularity", "zipf"},
                            {"lookup_s", {{"type", "uniform"}, {"min", 0.001}, {"max", 0.004}}}}),
      cached_llm(json{{"semantic_hit_probability", 0.4}, {"lookup_s", 0.02}}), llm(30, 30)};
  auto twice = [&](uint64_t seed) {
    return run_agent(workload_of(one_workflow(steps, 300), poisson(3), seed)).sessions;
  };
  const auto a = twice(4);
  const auto b = twice(4);
  const auto c = twice(5);
  ASSERT_EQ(a.size(), b.size());
  bool differs = false;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].finish_s, b[i].finish_s);
    EXPECT_EQ(a[i].tool_cache_hits, b[i].tool_cache_hits);
    EXPECT_EQ(a[i].llm_semantic_hits, b[i].llm_semantic_hits);
    EXPECT_EQ(a[i].cache_lookup_s, b[i].cache_lookup_s);
    differs = differs || a[i].finish_s != c[i].finish_s;
  }
  EXPECT_TRUE(differs);
}

TEST(AgentCache, ReportShowsHitRatesAndLookups) {
  const json cache = {{"exact_hit_probability", 0.5}, {"lookup_s", 0.01}};
  const auto run = run_agent(workload_of(one_workflow(cached_llm(cache), 200), poisson(5)));
  const json j = session_summary_json(run.summary);
  EXPECT_NEAR(j["caches"]["llm_exact_hit_rate"].get<double>(), run.summary.llm_exact_hit_rate,
              1e-12);
  EXPECT_TRUE(j["caches"]["tool_hit_rate"].is_null());
  EXPECT_NEAR(j["caches"]["lookup_ms"].get<double>(), 10.0, 1e-9);
  EXPECT_NEAR(j["critical_path"]["cache_ms"].get<double>(), 10.0, 1e-9);
  char buffer[4096] = {};
  std::FILE* out = fmemopen(buffer, sizeof buffer - 1, "w");
  print_session_summary(out, run.summary);
  std::fclose(out);
  EXPECT_HAS(std::string(buffer), "caches per session: 0.0 tool lookups");
  EXPECT_HAS(std::string(buffer), "1.0 LLM lookups");
}

std::string cache_error(const json& step) {
  try {
    AgentSpec::from_json(one_workflow(step), "workload.agent", "", {{{"m", 0}}, {}});
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what;
  }
  return "no error";
}

TEST(AgentCacheErrors, ToolCacheKeys) {
  auto bad = [](const json& cache) { return cache_error(cached_tool(1, cache)); };
  const std::string at = "workload.agent.workflows[0].steps[0]: cache: ";
  EXPECT_HAS(bad(json{{"keys", 5}}), at + "ttl_s is required");
  EXPECT_HAS(bad(json{{"ttl_s", 0}, {"keys", 5}}), at + "ttl_s must be > 0");
  EXPECT_HAS(bad(json{{"ttl_s", -1}, {"keys", 5}}), "ttl_s must be > 0");
  EXPECT_HAS(bad(json{{"ttl_s", 1}}), at + "keys");
  EXPECT_HAS(bad(json{{"ttl_s", 1}, {"keys", 0}}), "keys");
  EXPECT_HAS(bad(json{{"ttl_s", 1}, {"keys", 2'000'000}}), "keys must be at most 1000000");
  EXPECT_HAS(bad(json{{"ttl_s", 1}, {"keys", 5}, {"popularity", "pareto"}}),
             "popularity must be \"uniform\" or \"zipf\"");
  EXPECT_HAS(bad(json{{"ttl_s", 1}, {"keys", 5}, {"zipf_exponent", 1}}),
             "zipf_exponent needs \"popularity\": \"zipf\"");
  EXPECT_HAS(bad(json{{"ttl_s", 1}, {"keys", 5}, {"popularity", "zipf"}, {"zipf_exponent", -1}}),
             "zipf_exponent must be in [0, 10]");
  EXPECT_HAS(bad(json{{"ttl_s", 1}, {"keys", 5}, {"lookup_s", -1}}), "lookup_s");
  EXPECT_HAS(bad(json{{"ttl_s", 1}, {"keys", 5}, {"ttl", 1}}), "unknown key 'ttl'");
  EXPECT_HAS(bad(json{{"ttl_s", "1"}, {"keys", 5}}), "ttl_s must be a number");
  EXPECT_EQ(bad(json{{"ttl_s", 1}, {"keys", 5}, {"popularity", "zipf"}}), "no error");
}

TEST(AgentCacheErrors, LlmCacheKeys) {
  auto bad = [](const json& cache) { return cache_error(cached_llm(cache)); };
  const std::string at = "workload.agent.workflows[0].steps[0]: cache: ";
  EXPECT_HAS(bad(json::object()), at + "exact_hit_probability or semantic_hit_probability is");
  EXPECT_HAS(bad(json{{"exact_hit_probability", 1.5}}), "exact_hit_probability must be in [0, 1]");
  EXPECT_HAS(bad(json{{"semantic_hit_probability", -0.1}}), "must be in [0, 1]");
  EXPECT_HAS(bad(json{{"exact_hit_probability", 0.6}, {"semantic_hit_probability", 0.5}}),
             "sum to 1.1; they must sum to at most 1");
  EXPECT_HAS(bad(json{{"exact_hit_probability", 0.1}, {"lookup_s", "fast"}}), "lookup_s");
  EXPECT_HAS(bad(json{{"exact_hit_probability", 0.1}, {"hit_probability", 0.1}}),
             "unknown key 'hit_probability'");
  EXPECT_HAS(cache_error(cached_tool(1, json::array())), "cache");
  EXPECT_EQ(bad(json{{"exact_hit_probability", 0.1}, {"semantic_hit_probability", 0.9}}),
            "no error");
}

}  // namespace
}  // namespace servesim
