#include "sim/metrics/setup_difference.h"

#include <gtest/gtest.h>

namespace servesim {
namespace {

nlohmann::json base_setup() {
  return nlohmann::json::parse(R"({
    "scenario": "quickstart", "seed": 1, "started_at": "2026-12-01T10:00:00Z",
    "engine": {"max_num_seqs": 256, "max_num_batched_tokens": 2048},
    "workload": {"arrival": {"type": "poisson", "rate_qps": 2}, "output_tokens": [1, 2]},
    "client": {"host": "a", "timeout_s": 30}})");
}

TEST(SetupDifferenceTest, NamesEveryChangedLeafByItsDottedKey) {
  nlohmann::json other = base_setup();
  other["engine"]["max_num_seqs"] = 64;
  other["workload"]["arrival"]["rate_qps"] = 4;
  other["workload"]["output_tokens"] = nlohmann::json::array({1, 3});
  const SetupDiff diff = diff_setups(base_setup(), other);
  ASSERT_TRUE(diff.compared);
  ASSERT_EQ(diff.differences.size(), 3u);
  EXPECT_EQ(diff.differences[0].key, "engine.max_num_seqs");
  EXPECT_EQ(diff.differences[0].reference, 256);
  EXPECT_EQ(diff.differences[0].value, 64);
  EXPECT_EQ(diff.differences[1].key, "workload.arrival.rate_qps");
  EXPECT_EQ(diff.differences[2].key, "workload.output_tokens");  // an array is one value
  EXPECT_EQ(diff.only_in_one, 0u);
  EXPECT_EQ(describe_setup_diff(diff, 8),
            "engine.max_num_seqs 256 → 64; workload.arrival.rate_qps 2 → 4; "
            "workload.output_tokens [1,2] → [1,3]");
}

TEST(SetupDifferenceTest, WhenAndWhereARunHappenedIsNotADifference) {
  nlohmann::json other = base_setup();
  other["started_at"] = "2026-12-02T11:00:00Z";
  other["client"]["host"] = "b";
  const SetupDiff diff = diff_setups(base_setup(), other);
  EXPECT_TRUE(diff.differences.empty());
  EXPECT_EQ(describe_setup_diff(diff, 8), "same setup");
}

TEST(SetupDifferenceTest, KeysInOneRecordOnlyAreCountedNotListed) {
  nlohmann::json other = base_setup();
  other["engine"].erase("max_num_batched_tokens");
  other["gpu"] = {{"name", "H100"}};
  other["seed"] = 2;
  const SetupDiff diff = diff_setups(base_setup(), other);
  ASSERT_EQ(diff.differences.size(), 1u);
  EXPECT_EQ(diff.only_in_one, 2u);
  EXPECT_EQ(describe_setup_diff(diff, 8), "seed 1 → 2 (2 keys only in one run)");
}

TEST(SetupDifferenceTest, ListsAtMostTheGivenNumberAndSaysHowManyMore) {
  nlohmann::json other = base_setup();
  other["seed"] = 2;
  other["scenario"] = "other";
  other["engine"]["max_num_seqs"] = 1;
  const SetupDiff diff = diff_setups(base_setup(), other);
  EXPECT_EQ(describe_setup_diff(diff, 1), "engine.max_num_seqs 256 → 1 … and 2 more");
  const nlohmann::json j = setup_diff_json(diff);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["reference"], 256);
  EXPECT_EQ(j[2]["key"], "seed");
}

TEST(SetupDifferenceTest, NothingToCompareWithoutTwoRecords) {
  EXPECT_FALSE(diff_setups(nlohmann::json(), base_setup()).compared);
  EXPECT_FALSE(diff_setups(base_setup(), nlohmann::json::array()).compared);
}

}  // namespace
}  // namespace servesim
