#include "sim/workload/workload.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "models/config_error.h"
#include "sim/workload/length_distribution.h"
#include "sim/workload/request_prompt.h"

namespace servesim {
namespace {

using nlohmann::json;

WorkloadSpec parse(const json& j) {
  return WorkloadSpec::from_json(j, "", "w");
}

std::string error_of(const json& j) {
  try {
    parse(j);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

json open_loop() {
  return {{"arrival", {{"type", "poisson"}, {"rate_qps", 2}}},
          {"prompt_tokens", 512},
          {"output_tokens", 128},
          {"num_requests", 1000},
          {"seed", 1}};
}

TEST(WorkloadTest, OpenLoopIssuesExactlyNumRequestsInArrivalOrder) {
  const WorkloadSpec spec = parse(open_loop());
  EXPECT_EQ(spec.kind, WorkloadKind::kOpenLoop);
  auto src = make_request_source(spec);
  EXPECT_EQ(src->expected_total(), 1000u);
  double last = 0.0;
  uint64_t n = 0;
  while (auto t = src->next_arrival_s()) {
    const RequestSpec r = src->pop();
    EXPECT_EQ(r.id, n++);
    EXPECT_EQ(r.arrival_s, *t);
    EXPECT_GE(r.arrival_s, last);
    last = r.arrival_s;
    EXPECT_EQ(r.prompt_tokens, 512);
    EXPECT_EQ(r.output_tokens, 128);
    EXPECT_EQ(r.session_turns, 1);
  }
  EXPECT_EQ(n, 1000u);
  EXPECT_NEAR(last / 1000, 0.5, 0.05);  // 2 QPS
  EXPECT_TRUE(src->finished());
}

TEST(WorkloadTest, SameSeedSameStreamAndLengthsIndependentOfArrivals) {
  json a = open_loop();
  a["prompt_tokens"] = {{"type", "lognormal"}, {"mean", 500}, {"std", 300}};
  json b = a;
  b["arrival"] = {{"type", "gamma"}, {"rate_qps", 50}, {"cv", 3}};
  auto sa = make_request_source(parse(a));
  auto sa2 = make_request_source(parse(a));
  auto sb = make_request_source(parse(b));
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(sa->next_arrival_s() && sa2->next_arrival_s() && sb->next_arrival_s());
    const RequestSpec x = sa->pop();
    const RequestSpec y = sa2->pop();
    const RequestSpec z = sb->pop();
    EXPECT_EQ(x.arrival_s, y.arrival_s);
    EXPECT_EQ(x.prompt_tokens, y.prompt_tokens);
    EXPECT_NE(x.arrival_s, z.arrival_s);
    EXPECT_EQ(x.prompt_tokens, z.prompt_tokens);  // own stream per purpose
  }
}

TEST(WorkloadTest, DurationStopsArrivals) {
  json j = open_loop();
  j.erase("num_requests");
  j["duration_s"] = 100;
  auto src = make_request_source(parse(j));
  int n = 0;
  while (auto t = src->next_arrival_s()) {
    EXPECT_LT(*t, 100.0);
    src->pop();
    ++n;
  }
  EXPECT_NEAR(n, 200, 45);
}

TEST(WorkloadTest, SharedPrefixGroupsAreUsedEvenly) {
  json j = open_loop();
  j["shared_prefix"] = {{"groups", 4}, {"tokens", 1024}};
  auto src = make_request_source(parse(j));
  std::map<uint64_t, int> per_group;
  while (src->next_arrival_s()) {
    const RequestSpec r = src->pop();
    EXPECT_EQ(r.shared_prefix_tokens, 1024);
    EXPECT_EQ(r.prompt_tokens, 1024 + 512);
    ++per_group[r.prefix_group];
  }
  ASSERT_EQ(per_group.size(), 4u);
  for (const auto& [group, count] : per_group) {
    EXPECT_LT(group, 4u);
    EXPECT_NEAR(count, 250, 60);
  }
}

TEST(WorkloadTest, MultiTurnContextGrowsTurnByTurn) {
  json j = open_loop();
  j["arrival"]["rate_qps"] = 0.05;  // sessions rarely overlap, so most reach their last turn
  j["num_requests"] = 12;
  j["shared_prefix"] = {{"groups", 2}, {"tokens", 100}};
  j["multi_turn"] = {{"turns", 3}, {"user_tokens", 50}, {"think_time_s", 2.0}};
  auto src = make_request_source(parse(j));
  std::map<uint64_t, RequestSpec> last_turn;
  uint64_t issued = 0;
  double now = 0.0;
  // Answer each request 1 s after it arrives, in arrival order.
  while (auto t = src->next_arrival_s()) {
    now = std::max(now, *t);
    RequestSpec r = src->pop();
    ++issued;
    EXPECT_EQ(r.session_turns, 3);
    if (r.turn > 0) {
      const RequestSpec& prev = last_turn.at(r.session);
      EXPECT_EQ(r.turn, prev.turn + 1);
      EXPECT_EQ(r.history_tokens, prev.prompt_tokens + prev.output_tokens);
      EXPECT_EQ(r.prompt_tokens, r.history_tokens + 50);
      EXPECT_EQ(r.prefix_group, prev.prefix_group);
      EXPECT_DOUBLE_EQ(r.arrival_s, prev.arrival_s + 1.0 + 2.0);
    } else {
      EXPECT_EQ(r.prompt_tokens, 100 + 512);
      EXPECT_EQ(r.history_tokens, 0);
    }
    last_turn[r.session] = r;
    src->on_request_done(r, r.arrival_s + 1.0);
  }
  EXPECT_EQ(issued, 12u);  // the cap counts every turn
  int third_turns = 0;
  for (const auto& [session, r] : last_turn) third_turns += r.turn == 2;
  EXPECT_GT(third_turns, 0);
}

// A fuzz finding (CI, fuzz_workload): turns of 1e8-token prompts and answers overflowed the
// history's int by the third turn. The history stops at 1e9 tokens, where every model refuses
// the prompt, and the sums stay exact below it.
TEST(WorkloadTest, MultiTurnHistoryStopsGrowingFarBeyondAnyContext) {
  json j = open_loop();
  j["prompt_tokens"] = kMaxLengthTokens;
  j["output_tokens"] = kMaxLengthTokens;
  j["num_requests"] = 12;
  j["arrival"]["rate_qps"] = 0.001;  // one session at a time
  j["multi_turn"] = {{"turns", 12}, {"user_tokens", kMaxLengthTokens}, {"think_time_s", 0}};
  auto src = make_request_source(parse(j));
  std::vector<RequestSpec> turns;
  while (auto t = src->next_arrival_s()) {
    turns.push_back(src->pop());
    src->on_request_done(turns.back(), *t);
  }
  ASSERT_EQ(turns.size(), 12u);
  EXPECT_EQ(turns[1].history_tokens, 2 * kMaxLengthTokens);
  EXPECT_EQ(turns[1].prompt_tokens, 3 * kMaxLengthTokens);
  EXPECT_EQ(turns[11].history_tokens, 1'000'000'000);
  EXPECT_EQ(turns[11].prompt_tokens, 1'000'000'000 + kMaxLengthTokens);
}

// Serves requests with a fixed service time, in arrival order, and checks the invariants
// of closed-loop concurrency.
struct ClosedLoopRun {
  std::vector<RequestSpec> issued;
  int max_in_flight = 0;
};

ClosedLoopRun serve(RequestSource& src, double service_s, const WorkloadSpec* stepped) {
  ClosedLoopRun run;
  std::multimap<double, RequestSpec> in_flight;  // finish time -> request
  for (;;) {
    const std::optional<double> next = src.next_arrival_s();
    if (!next && in_flight.empty()) break;
    if (next && (in_flight.empty() || *next <= in_flight.begin()->first)) {
      RequestSpec r = src.pop();
      if (stepped) {
        EXPECT_LT(static_cast<int>(r.client), stepped->steps[static_cast<size_t>(r.step_index)]);
        // Only clients of this step may be in flight, besides stragglers of the last step.
      }
      run.issued.push_back(r);
      in_flight.emplace(r.arrival_s + service_s, r);
      run.max_in_flight = std::max(run.max_in_flight, static_cast<int>(in_flight.size()));
    } else {
      const auto it = in_flight.begin();
      src.on_request_done(it->second, it->first);
      in_flight.erase(it);
    }
  }
  return run;
}

TEST(WorkloadTest, ClosedLoopKeepsAtMostNRequestsInFlight) {
  json j = {{"arrival", {{"type", "closed"}, {"clients", 8}, {"think_time_s", 0.5}}},
            {"prompt_tokens", 100},
            {"output_tokens", 10},
            {"duration_s", 60}};
  const WorkloadSpec spec = parse(j);
  auto src = make_request_source(spec);
  const ClosedLoopRun run = serve(*src, 1.0, nullptr);
  EXPECT_EQ(run.max_in_flight, 8);
  // Each client cycles every 1.5 s for 60 s: 40 requests each.
  EXPECT_EQ(run.issued.size(), 8u * 40u);
  std::set<uint32_t> clients;
  for (const RequestSpec& r : run.issued) clients.insert(r.client);
  EXPECT_EQ(clients.size(), 8u);
}

TEST(WorkloadTest, SteppedConcurrencyFollowsTheSchedule) {
  json j = {{"arrival", {{"type", "stepped"}, {"steps", {1, 2, 4, 2}}, {"step_duration_s", 10}}},
            {"prompt_tokens", 100},
            {"output_tokens", 10}};
  const WorkloadSpec spec = parse(j);
  EXPECT_EQ(spec.duration_s, 40.0);
  EXPECT_EQ(spec.step_at(9.99), 0);
  EXPECT_EQ(spec.step_at(35.0), 3);
  EXPECT_EQ(spec.step_at(1000.0), 3);
  auto src = make_request_source(spec);
  const ClosedLoopRun run = serve(*src, 0.5, &spec);
  std::map<int, int> per_step;
  for (const RequestSpec& r : run.issued) {
    EXPECT_EQ(r.step_index, spec.step_at(r.arrival_s));
    ++per_step[r.step_index];
  }
  // No think time, 0.5 s service: 20 requests per client per step.
  EXPECT_EQ(per_step[0], 20);
  EXPECT_EQ(per_step[1], 40);
  EXPECT_EQ(per_step[2], 80);
  EXPECT_EQ(per_step[3], 40);
  EXPECT_EQ(run.max_in_flight, 4);
}

TEST(WorkloadTest, TraceWorkloadReplaysTheFile) {
  const std::string dir = std::string(SERVESIM_SOURCE_DIR) + "/configs/workloads/traces";
  const WorkloadSpec spec = WorkloadSpec::from_json(
      {{"trace", {{"path", "splitwise_code.csv"}, {"time_scale", 2.0}}}, {"num_requests", 5}}, dir,
      "w");
  EXPECT_EQ(spec.kind, WorkloadKind::kTrace);
  auto src = make_request_source(spec);
  std::vector<RequestSpec> rs;
  while (src->next_arrival_s()) rs.push_back(src->pop());
  ASSERT_EQ(rs.size(), 5u);
  EXPECT_DOUBLE_EQ(rs[1].arrival_s, 0.104);  // 0.052 s, replayed at half speed
  EXPECT_EQ(rs[0].prompt_tokens, 4808);
  EXPECT_EQ(rs[0].output_tokens, 10);
  EXPECT_EQ(rs[4].id, 4u);
}

TEST(WorkloadTest, LoadReportsLineAndColumnAndResolvesPaths) {
  const std::string dir = ::testing::TempDir();
  const std::string bad = dir + "/bad_workload.json";
  std::ofstream(bad) << "{\n  \"arrival\": {\"type\": \"poisson\",\n    \"rate_qps\": 2,,\n}\n";
  try {
    WorkloadSpec::load(bad);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(bad + ":3:19: invalid JSON", 0), 0u) << e.what();
  }
  std::ofstream(dir + "/lens.csv") << "len\n10\n20\n";
  const std::string good = dir + "/good_workload.json";
  std::ofstream(good) << R"({"arrival": {"type": "constant", "rate_qps": 1},
    "prompt_tokens": {"type": "empirical", "csv": "lens.csv", "column": "len"},
    "output_tokens": 5, "num_requests": 3})";
  const WorkloadSpec spec = WorkloadSpec::load(good);
  EXPECT_DOUBLE_EQ(spec.prompt_tokens.mean(), 15.0);
}

TEST(WorkloadTest, DistinctPromptsRepeatWholePromptsOfOneLengthEach) {
  json j = open_loop();
  j["prompt_tokens"] = {{"type", "uniform"}, {"min", 100}, {"max", 4000}};
  j["distinct_prompts"] = 5;
  auto src = make_request_source(parse(j));
  std::map<uint64_t, std::set<int>> lengths;
  std::map<uint64_t, int> sends;
  while (src->next_arrival_s()) {
    const RequestSpec r = src->pop();
    EXPECT_EQ(r.shared_prefix_tokens, r.prompt_tokens);  // the whole prompt repeats
    lengths[r.prefix_group].insert(r.prompt_tokens);
    ++sends[r.prefix_group];
  }
  ASSERT_EQ(sends.size(), 5u);
  std::set<int> all;
  for (const auto& [prompt, count] : sends) {
    EXPECT_LT(prompt, 5u);
    EXPECT_NEAR(count, 200, 50);
    ASSERT_EQ(lengths[prompt].size(), 1u) << "prompt " << prompt << " changed length";
    all.insert(*lengths[prompt].begin());
  }
  EXPECT_GT(all.size(), 1u);  // each prompt drew its own length
}

// What the replica's scheduler (and `servesim loadtest`, as text) sends: a repeat of one of
// the prompts is that prompt token for token; two different prompts share nothing.
TEST(WorkloadTest, ARepeatedDatasetPromptIsTheSameTokens) {
  json j = open_loop();
  j["distinct_prompts"] = 2;
  auto src = make_request_source(parse(j));
  std::map<uint64_t, std::vector<int32_t>> first;
  int repeats = 0;
  std::vector<int32_t> tokens;
  while (src->next_arrival_s()) {
    const RequestSpec r = src->pop();
    request_prompt_into(r, 32000, tokens);
    ASSERT_EQ(tokens.size(), 512u);
    auto [it, fresh] = first.emplace(r.prefix_group, tokens);
    if (!fresh) {
      EXPECT_EQ(tokens, it->second) << "request " << r.id;
      ++repeats;
    }
  }
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(repeats, 998);
  EXPECT_NE(first[0], first[1]);
}

TEST(WorkloadTest, DistinctPromptsAreWholeNumbersAndStandAlone) {
  json j = open_loop();
  j["distinct_prompts"] = 0;
  EXPECT_EQ(error_of(j),
            "w: distinct_prompts must be a whole number of prompts in [1, 1000000] (leave it "
            "out for a new prompt every request), got 0");
  j["distinct_prompts"] = 2.5;
  EXPECT_NE(error_of(j).find("w: distinct_prompts"), std::string::npos) << error_of(j);
  j["distinct_prompts"] = 100;
  j["shared_prefix"] = {{"groups", 4}, {"tokens", 10}};
  EXPECT_EQ(error_of(j),
            "w: distinct_prompts is not allowed with \"shared_prefix\" (each of the N prompts "
            "is sent whole, the same every time)");
  j.erase("shared_prefix");
  j["multi_turn"] = {{"turns", 2}, {"user_tokens", 5}};
  EXPECT_EQ(error_of(j),
            "w: distinct_prompts is not allowed with \"multi_turn\" (each of the N prompts is "
            "sent whole, the same every time)");
  EXPECT_EQ(error_of({{"trace", {{"path", "x.csv"}}}, {"distinct_prompts", 100}}),
            "w: distinct_prompts is not allowed with \"trace\" (the trace supplies arrivals "
            "and lengths)");
}

TEST(WorkloadTest, StrictParsingNamesKeysAndFixes) {
  json j = open_loop();
  j["arival"] = j["arrival"];
  EXPECT_EQ(error_of(j), "w: unknown key 'arival' (did you mean 'arrival'?)");
  j = open_loop();
  j.erase("prompt_tokens");
  EXPECT_EQ(error_of(j), "w: prompt_tokens is required (a length distribution)");
  j = open_loop();
  j.erase("num_requests");
  EXPECT_EQ(error_of(j), "w: num_requests: give num_requests or duration_s so the workload ends");
  j = open_loop();
  j["arrival"]["type"] = "closd";
  EXPECT_EQ(error_of(j),
            "w: arrival.type: unknown arrival process 'closd' (did you mean "
            "'closed'?)");
  j = open_loop();
  j["arrival"] = {{"type", "closed"}, {"clients", 0}};
  EXPECT_EQ(error_of(j), "w: arrival: clients must be in [1, 1000000], got 0");
  j = open_loop();
  j["arrival"] = {{"type", "stepped"}, {"steps", {1, 2}}, {"step_duration_s", 10}};
  j["duration_s"] = 5;
  EXPECT_EQ(error_of(j),
            "w: duration_s is not allowed with a stepped arrival (it lasts steps "
            "x step_duration_s)");
  j = open_loop();
  j["shared_prefix"] = {{"groups", 4}, {"token", 10}};
  EXPECT_EQ(error_of(j), "w: shared_prefix: tokens is required");
  j = open_loop();
  j["multi_turn"] = {{"turns", 2}, {"user_tokens", 5}, {"think_time", 1}};
  EXPECT_EQ(error_of(j), "w: multi_turn: unknown key 'think_time' (did you mean 'think_time_s'?)");
  j = open_loop();
  j["trace"] = {{"path", "x.csv"}};
  EXPECT_EQ(error_of(j),
            "w: arrival is not allowed with \"trace\" (the trace supplies arrivals "
            "and lengths)");
  EXPECT_EQ(error_of({{"trace", {{"path", "x.csv"}, {"format", "azur"}}}}),
            "w: trace.format: unknown format 'azur' (did you mean 'azure'?)");
  EXPECT_EQ(error_of({{"trace", {{"path", "x.csv"}, {"time_scale", 0}}}}),
            "w: trace: time_scale must be > 0 (0.5 replays twice as fast), got 0");
}

TEST(WorkloadTest, EveryExampleInTheDocsParses) {
  std::ifstream in(std::string(SERVESIM_SOURCE_DIR) + "/docs/workloads.md");
  ASSERT_TRUE(in);
  const std::string dir = std::string(SERVESIM_SOURCE_DIR) + "/configs/workloads/traces";
  std::string line;
  std::string block;
  bool in_block = false;
  int examples = 0;
  while (std::getline(in, line)) {
    if (line == "```json") {
      in_block = true;
      block.clear();
    } else if (in_block && line == "```") {
      in_block = false;
      ++examples;
      EXPECT_NO_THROW(WorkloadSpec::from_json(json::parse(block), dir, "docs")) << block;
    } else if (in_block) {
      block += line + "\n";
    }
  }
  EXPECT_GE(examples, 12);
}

}  // namespace
}  // namespace servesim

namespace servesim {
namespace {

TEST(WorkloadRampUp, ClosedLoopClientsStartSpreadOverTheRamp) {
  const WorkloadSpec spec = WorkloadSpec::from_json(
      nlohmann::json::parse(R"({"arrival": {"type": "closed", "clients": 4, "ramp_up_s": 2},
        "prompt_tokens": 10, "output_tokens": 5, "num_requests": 4})"),
      "", "ramp");
  auto source = make_request_source(spec);
  std::vector<double> starts;
  while (source->next_arrival_s()) starts.push_back(source->pop().arrival_s);
  EXPECT_EQ(starts, (std::vector<double>{0.0, 0.5, 1.0, 1.5}));
  EXPECT_THROW(
      WorkloadSpec::from_json(nlohmann::json::parse(R"({"arrival": {"type": "closed", "clients": 4,
                     "ramp_up_s": -1}, "prompt_tokens": 10, "output_tokens": 5,
                     "num_requests": 4})"),
                              "", "ramp"),
      ConfigError);
}

}  // namespace
}  // namespace servesim
