// Cluster on its own: one deployment's replicas numbered on from the run's count, the events
// it schedules carrying those numbers, and a disaggregated deployment's requests leaving once,
// composed from both sides, with every KV block back.
#include "sim/serving/cluster.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "flat_cost_model.h"

namespace servesim {
namespace {

// The run around the cluster: its own loop, every event of the cluster's kinds sent back to
// it, what users would see recorded.
class FakeRun final : public ClusterListener, public EventHandler {
 public:
  void on_token(const RequestSpec& request, std::optional<double>) override {
    ++tokens[request.id];
  }
  void on_request_left(const RequestSpec& request, const RequestRecord& record) override {
    left.emplace(request.id, record);
  }
  void on_progress() override { ++progress; }
  void on_step_end(double) override { ++steps; }
  bool arrivals_done() override { return true; }

  void handle(const Event& event) override {
    ASSERT_TRUE(Cluster::owns(event.kind)) << to_string(event.kind);
    targets.push_back({event.kind, event.target});
    cluster->handle(event);
  }

  EventLoop loop;
  Cluster* cluster = nullptr;
  std::map<uint64_t, int> tokens;
  std::map<uint64_t, RequestRecord> left;
  int progress = 0;
  int steps = 0;
  std::vector<std::pair<EventKind, uint32_t>> targets;
};

SchedulerConfig engine() {
  SchedulerConfig c;
  c.max_model_len = 2048;
  c.num_gpu_blocks = 512;
  c.enable_prefix_caching = false;
  return c;
}

RequestSpec request(uint64_t id, int prompt, int output) {
  RequestSpec r;
  r.id = id;
  r.session = id;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  r.deployment = 2;
  return r;
}

ClusterRole role(int servers, int dp, const SchedulerConfig& sc, const CostModel& cost) {
  ClusterRole r;
  r.servers = servers;
  r.parallel.dp = dp;
  r.scheduler = &sc;
  r.cost_model = &cost;
  r.kv_bytes_per_token = 1e5;
  return r;
}

TEST(Cluster, NumbersItsReplicasOnFromTheRunsAndItsEventsCarryThoseNumbers) {
  const SchedulerConfig sc = engine();
  const FlatCostModel cost;
  ClusterSpec spec;
  spec.index = 2;
  spec.roles.push_back(role(/*servers=*/1, /*dp=*/3, sc, cost));
  FakeRun run;
  Cluster cluster(spec, /*first_replica=*/5, /*first_group=*/1, run.loop, run);
  run.cluster = &cluster;
  EXPECT_EQ(cluster.num_replicas(), 3u);
  EXPECT_EQ(cluster.num_groups(), 0u);  // no expert parallelism: no lock-step group
  for (uint64_t id = 0; id < 6; ++id) cluster.deliver(request(id, 100, 4), 0.0);
  Observer quiet;
  run.loop.run(run, quiet);

  ASSERT_EQ(run.left.size(), 6u);
  for (const auto& [id, record] : run.left) {
    EXPECT_EQ(record.status, RequestOutcome::kOk);
    EXPECT_GE(record.replica, 5);  // round robin over replicas 5, 6 and 7
    EXPECT_LE(record.replica, 7);
    EXPECT_EQ(run.tokens[id], 4);
  }
  for (const auto& [kind, target] : run.targets) {
    EXPECT_EQ(kind, EventKind::kStepEnd);
    EXPECT_GE(target, 5u);
    EXPECT_LE(target, 7u);
  }
  const std::vector<ReplicaSummary> summaries = cluster.summaries();
  ASSERT_EQ(summaries.size(), 3u);
  for (const ReplicaSummary& s : summaries) {
    EXPECT_EQ(s.deployment, 2u);
    EXPECT_EQ(s.role, ReplicaRole::kAggregated);
  }
  EXPECT_FALSE(cluster.has_unfinished());
}

TEST(Cluster, ExpertParallelRanksStepTogetherAsOneGroupNumberedOnFromTheRuns) {
  const SchedulerConfig sc = engine();
  const FlatCostModel cost;
  ClusterSpec spec;
  spec.index = 1;
  spec.roles.push_back(role(/*servers=*/2, /*dp=*/2, sc, cost));
  spec.roles.back().parallel.enable_expert_parallel = true;
  ASSERT_TRUE(spec.serving().parallel.lockstep());
  FakeRun run;
  Cluster cluster(spec, /*first_replica=*/1, /*first_group=*/4, run.loop, run);
  run.cluster = &cluster;
  EXPECT_EQ(cluster.num_groups(), 2u);
  cluster.deliver(request(0, 100, 3), 0.0);
  Observer quiet;
  run.loop.run(run, quiet);
  ASSERT_EQ(run.left.size(), 1u);
  bool dispatched = false;
  for (const auto& [kind, target] : run.targets) {
    if (kind != EventKind::kDispatch) continue;
    dispatched = true;
    EXPECT_TRUE(target == 4u || target == 5u) << target;
  }
  EXPECT_TRUE(dispatched);
}

TEST(Cluster, ADisaggregatedRequestLeavesOnceWithBothSidesInItsRecordAndFreesItsBlocks) {
  const SchedulerConfig sc = engine();
  const FlatCostModel cost;
  ClusterSpec spec;
  spec.index = 3;
  spec.roles.push_back(role(/*servers=*/1, /*dp=*/1, sc, cost));
  spec.roles.push_back(role(/*servers=*/2, /*dp=*/1, sc, cost));
  spec.num_layers = 32;
  FakeRun run;
  Cluster cluster(spec, /*first_replica=*/0, /*first_group=*/0, run.loop, run);
  run.cluster = &cluster;
  for (uint64_t id = 0; id < 4; ++id) cluster.deliver(request(id, 512, 8), 0.0);
  Observer quiet;
  run.loop.run(run, quiet);

  ASSERT_EQ(run.left.size(), 4u);
  EXPECT_EQ(run.progress, 4);  // each prefill finished once
  for (const auto& [id, record] : run.left) {
    EXPECT_EQ(record.status, RequestOutcome::kOk);
    EXPECT_GE(record.replica, 1);  // a decode instance answers
    EXPECT_GT(record.segments.kv_transfer_s, 0);
    EXPECT_EQ(run.tokens[id], 8);  // the prefill instance's token is not the user's
  }
  int handoffs = 0;
  for (const auto& [kind, target] : run.targets) {
    if (kind != EventKind::kKvHandoff) continue;
    ++handoffs;
    EXPECT_EQ(target, 3u);  // the deployment's index
  }
  EXPECT_EQ(handoffs, 4);
  const std::vector<ReplicaSummary> summaries = cluster.summaries();
  ASSERT_EQ(summaries.size(), 3u);
  EXPECT_EQ(summaries[0].role, ReplicaRole::kPrefill);
  EXPECT_EQ(summaries[1].role, ReplicaRole::kDecode);
  EXPECT_FALSE(cluster.has_unfinished());
}

TEST(Cluster, AnAbortedRequestNeverLeavesAndItsBlocksComeBack) {
  const SchedulerConfig sc = engine();
  const FlatCostModel cost;
  ClusterSpec spec;
  spec.roles.push_back(role(/*servers=*/1, /*dp=*/1, sc, cost));
  FakeRun run;
  Cluster cluster(spec, 0, 0, run.loop, run);
  run.cluster = &cluster;
  cluster.deliver(request(0, 100, 50), 0.0);
  cluster.deliver(request(1, 100, 50), 0.0);
  cluster.abort(0);
  Observer quiet;
  run.loop.run(run, quiet);
  EXPECT_EQ(run.left.count(0), 0u);
  EXPECT_EQ(run.left.count(1), 1u);
  EXPECT_FALSE(cluster.has_unfinished());
  const std::vector<ReplicaSummary> summaries = cluster.summaries();  // checks the block pool
  ASSERT_EQ(summaries.size(), 1u);
}

}  // namespace
}  // namespace servesim
