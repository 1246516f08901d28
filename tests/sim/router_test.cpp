#include "sim/serving/router.h"

#include <gtest/gtest.h>

#include <vector>

#include "models/config_error.h"

namespace servesim {
namespace {

TEST(Router, RoundRobinCycles) {
  Router router(RouterPolicy::kRoundRobin, 1);
  std::vector<ReplicaLoad> loads(3);
  RequestSpec r;
  std::vector<size_t> picks;
  for (int i = 0; i < 6; ++i) picks.push_back(router.route(r, loads));
  EXPECT_EQ(picks, (std::vector<size_t>{0, 1, 2, 0, 1, 2}));
}

TEST(Router, LeastOutstandingAndLeastKv) {
  std::vector<ReplicaLoad> loads = {{5, 0.9}, {2, 0.5}, {2, 0.1}, {7, 0.0}};
  RequestSpec r;
  EXPECT_EQ(Router(RouterPolicy::kLeastOutstanding, 1).route(r, loads), 1u);
  EXPECT_EQ(Router(RouterPolicy::kLeastKv, 1).route(r, loads), 3u);
}

TEST(Router, PowerOfTwoPicksTheLessLoadedOfTwoDistinct) {
  Router router(RouterPolicy::kPowerOfTwo, 7);
  std::vector<ReplicaLoad> loads = {{0, 0}, {100, 0}};
  RequestSpec r;
  // With two replicas both are sampled every time, so the idle one always wins.
  for (int i = 0; i < 50; ++i) EXPECT_EQ(router.route(r, loads), 0u);
}

TEST(Router, RandomIsDeterministicForASeedAndCoversReplicas) {
  std::vector<ReplicaLoad> loads(4);
  RequestSpec r;
  Router a(RouterPolicy::kRandom, 42);
  Router b(RouterPolicy::kRandom, 42);
  std::vector<int> hits(4, 0);
  for (int i = 0; i < 400; ++i) {
    const size_t x = a.route(r, loads);
    EXPECT_EQ(x, b.route(r, loads));
    ++hits[x];
  }
  for (int h : hits) EXPECT_GT(h, 60);
}

TEST(Router, PrefixAffinityKeepsGroupsAndSessionsTogether) {
  Router router(RouterPolicy::kPrefixAffinity, 1);
  std::vector<ReplicaLoad> loads(8);
  RequestSpec a;
  a.prefix_group = 3;
  a.shared_prefix_tokens = 1000;
  const size_t first = router.route(a, loads);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(router.route(a, loads), first);
  RequestSpec turn;
  turn.session = 99;
  turn.session_turns = 4;
  const size_t session_replica = router.route(turn, loads);
  turn.turn = 3;
  EXPECT_EQ(router.route(turn, loads), session_replica);
  // An agent session's calls: each has its own token stream and the workflow's group, and
  // they go where the session's context is.
  RequestSpec call = a;
  call.agent_session = 7;
  const size_t agent_replica = router.route(call, loads);
  for (uint64_t stream = 100; stream < 110; ++stream) {
    call.session = stream;
    EXPECT_EQ(router.route(call, loads), agent_replica);
  }
  std::vector<bool> sessions_used(8, false);
  for (uint64_t s = 1; s <= 64; ++s) {
    call.agent_session = s;
    sessions_used[router.route(call, loads)] = true;
  }
  EXPECT_GE(std::count(sessions_used.begin(), sessions_used.end(), true), 6);
  // Groups spread over replicas.
  std::vector<bool> used(8, false);
  for (uint64_t g = 0; g < 64; ++g) {
    a.prefix_group = g;
    used[router.route(a, loads)] = true;
  }
  EXPECT_GE(std::count(used.begin(), used.end(), true), 6);
}

TEST(Router, OnlyLoadAwarePoliciesReadLoad) {
  EXPECT_FALSE(Router(RouterPolicy::kRoundRobin, 1).reads_load());
  EXPECT_FALSE(Router(RouterPolicy::kRandom, 1).reads_load());
  EXPECT_TRUE(Router(RouterPolicy::kLeastOutstanding, 1).reads_load());
  EXPECT_TRUE(Router(RouterPolicy::kLeastKv, 1).reads_load());
  EXPECT_TRUE(Router(RouterPolicy::kPowerOfTwo, 1).reads_load());
  EXPECT_TRUE(Router(RouterPolicy::kPrefixAffinity, 1).reads_load());
}

TEST(Router, UnknownPolicyNamesTheChoices) {
  try {
    parse_router_policy("fastest", "cluster.router");
    FAIL();
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cluster.router"), std::string::npos);
    EXPECT_NE(what.find("power_of_two"), std::string::npos);
  }
  EXPECT_EQ(parse_router_policy("least-outstanding", "x"), RouterPolicy::kLeastOutstanding);
}

}  // namespace
}  // namespace servesim
