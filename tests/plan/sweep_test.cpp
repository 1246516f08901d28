// Sweeps: --vary parsing (lists and START:STOP:STEP ranges), the grid's order, results that
// do not depend on the thread count, and how bad axes and unfit points are reported.
#include "plan/sweep.h"

#include <gtest/gtest.h>

#include <atomic>

#include "models/config_error.h"
#include "models/json_file.h"
#include "plan/parallel_for.h"
#include "thread_ranks.h"

namespace servesim {
namespace {

const std::string kQuickstart = SERVESIM_SOURCE_DIR "/configs/scenarios/quickstart.json";

TEST(SweepAxis, ParsesAListInTheOrderGiven) {
  const SweepAxis a = parse_sweep_axis("gpu=H100,A100-80GB,L40S");
  EXPECT_EQ(a.key, "gpu");
  EXPECT_EQ(a.values, (std::vector<std::string>{"H100", "A100-80GB", "L40S"}));
}

TEST(SweepAxis, RangesIncludeTheStopAndDoNotDrift) {
  EXPECT_EQ(parse_sweep_axis("engine.max_num_seqs=16:64:16").values,
            (std::vector<std::string>{"16", "32", "48", "64"}));
  EXPECT_EQ(parse_sweep_axis("workload.arrival.rate_qps=0.1:0.5:0.1").values,
            (std::vector<std::string>{"0.1", "0.2", "0.3", "0.4", "0.5"}));
  EXPECT_EQ(parse_sweep_axis("x=1:10:4").values, (std::vector<std::string>{"1", "5", "9"}));
}

// A value may be a whole JSON block, so one axis switches a feature on and off (the
// aggregated/disaggregated family switch); commas inside it do not split the list.
TEST(SweepAxis, JsonValuesKeepTheirCommasAndColons) {
  const SweepAxis a = parse_sweep_axis(
      R"(disaggregation=null,{"prefill":{"instances":2},"decode":{"instances":1}})");
  EXPECT_EQ(a.key, "disaggregation");
  EXPECT_EQ(a.values, (std::vector<std::string>{
                          "null", R"({"prefill":{"instances":2},"decode":{"instances":1}})"}));
  EXPECT_EQ(parse_sweep_axis(R"(k=[1,2],"a,b\",c",3)").values,
            (std::vector<std::string>{"[1,2]", R"("a,b\",c")", "3"}));
  EXPECT_EQ(parse_sweep_axis(R"(k={"a":1})").values, (std::vector<std::string>{R"({"a":1})"}));
}

TEST(SweepAxis, BadSpecsAreOneLineErrorsNamingVary) {
  for (const char* bad : {"engine.max_num_seqs", "=1,2", "k=", "k=1:2", "k=1:a:1", "k=5:1:1",
                          "k=1:5:0", "k=1,,2", "k={\"a\":1", "k=[1,2", "k=\"open"}) {
    try {
      parse_sweep_axis(bad);
      ADD_FAILURE() << bad;
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--vary"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(SweepPoints, CartesianProductWithTheFirstAxisSlowest) {
  const auto points = sweep_points({parse_sweep_axis("a=1,2"), parse_sweep_axis("b=x,y,z")});
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[0], (std::vector<std::string>{"a=1", "b=x"}));
  EXPECT_EQ(points[1], (std::vector<std::string>{"a=1", "b=y"}));
  EXPECT_EQ(points[3], (std::vector<std::string>{"a=2", "b=x"}));
  EXPECT_EQ(points[5], (std::vector<std::string>{"a=2", "b=z"}));
}

TEST(SweepPoints, RepeatedKeyAndHugeGridsAreRejected) {
  EXPECT_THROW(sweep_points({parse_sweep_axis("a=1"), parse_sweep_axis("a=2")}), ConfigError);
  EXPECT_THROW(sweep_points({parse_sweep_axis("a=1:1000:1"), parse_sweep_axis("b=1:1000:1")}),
               ConfigError);
}

TEST(ParallelFor, EveryIndexRunsOnceAndTheLowestFailureIsRethrown) {
  std::vector<std::atomic<int>> hits(100);
  parallel_for(hits.size(), 4, [&](size_t i) { ++hits[i]; });
  for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
  try {
    parallel_for(50, 3, [](size_t i) {
      if (i == 7 || i == 30) throw ConfigError("item " + std::to_string(i));
    });
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "item 7");
  }
}

SweepOptions small_sweep(int threads) {
  SweepOptions o;
  o.axes = {parse_sweep_axis("engine.max_num_seqs=8,64"),
            parse_sweep_axis("workload.arrival.rate_qps=2:6:4")};
  o.overrides = {"workload.num_requests=120"};
  o.threads = threads;
  return o;
}

TEST(Sweep, OutputIsIdenticalWithOneOrSeveralThreads) {
  const Catalog catalog;
  const SweepReport one = run_sweep(kQuickstart, small_sweep(1), catalog);
  const SweepReport three = run_sweep(kQuickstart, small_sweep(3), catalog);
  ASSERT_EQ(one.points.size(), 4u);
  EXPECT_EQ(one.to_json().dump(), three.to_json().dump());
  EXPECT_EQ(one.to_csv(), three.to_csv());
  EXPECT_EQ(one.to_table(), three.to_table());
  for (const SweepPoint& p : one.points) {
    EXPECT_TRUE(p.error.empty()) << p.error;
    EXPECT_EQ(p.result.summary.completed, 120u);
  }
  // Higher offered load, higher throughput.
  EXPECT_GT(one.points[1].result.summary.request_throughput,
            one.points[0].result.summary.request_throughput);
}

// Ranks as threads stand in for `mpirun -np N servesim sweep`, an unfit point included (its
// reason travels between ranks like a result).
TEST(Sweep, OutputIsIdenticalWhateverTheRankCount) {
  SweepOptions o = small_sweep(1);
  o.axes.push_back(parse_sweep_axis("gpu=A100-80GB,T4"));
  o.overrides.push_back("model=Llama-2-13B");
  const SweepReport alone = run_sweep(kQuickstart, o, Catalog());
  ASSERT_EQ(alone.points.size(), 8u);
  for (int ranks : {2, 3}) {
    const std::vector<SweepReport> reports = testing::run_ranks<SweepReport>(
        ranks, [&](WorkShare& share) { return run_sweep(kQuickstart, o, Catalog(), share); });
    for (const SweepReport& r : reports) {
      EXPECT_EQ(r.to_json().dump(), alone.to_json().dump()) << ranks << " ranks";
      EXPECT_EQ(r.to_csv(), alone.to_csv());
      EXPECT_EQ(r.to_table(), alone.to_table());
    }
  }
  // A misspelt key fails on every rank alike.
  o.axes = {parse_sweep_axis("engine.max_num_seq=8,16")};
  const std::vector<std::string> errors =
      testing::run_ranks<std::string>(2, [&](WorkShare& share) -> std::string {
        try {
          run_sweep(kQuickstart, o, Catalog(), share);
        } catch (const ConfigError& e) {
          return e.what();
        }
        return "";
      });
  EXPECT_NE(errors[0].find("max_num_seq"), std::string::npos) << errors[0];
  EXPECT_EQ(errors[0], errors[1]);
}

TEST(Sweep, APointThatDoesNotFitCarriesItsReasonAndTheOthersStillRun) {
  SweepOptions o;
  o.axes = {parse_sweep_axis("gpu=A100-80GB,T4")};
  o.overrides = {"workload.num_requests=50", "model=Llama-2-13B"};
  const SweepReport r = run_sweep(kQuickstart, o, Catalog());
  ASSERT_EQ(r.points.size(), 2u);
  EXPECT_TRUE(r.points[0].error.empty());
  EXPECT_FALSE(r.points[1].error.empty());
  const std::string csv = r.to_csv();
  EXPECT_NE(csv.find("T4"), std::string::npos);
  EXPECT_EQ(csv.substr(0, csv.find(',')), "gpu");
}

// A disaggregated point's GPUs are its roles' instances (the column said 1 before: the
// top-level parallel block's).
TEST(Sweep, ADisaggregatedPointCountsTheGpusOfBothRoles) {
  SweepOptions o;
  o.axes = {parse_sweep_axis("disaggregation.prefill.instances=1,3")};
  o.overrides = {"workload.num_requests=30", "disaggregation.decode.tensor_parallel_size=2"};
  const SweepReport r =
      run_sweep(SERVESIM_SOURCE_DIR "/configs/scenarios/disagg-long-prompts.json", o, Catalog());
  ASSERT_EQ(r.points.size(), 2u);
  ASSERT_TRUE(r.points[0].error.empty()) << r.points[0].error;
  EXPECT_EQ(r.points[0].num_gpus, 3);  // 1 x TP 1 + 1 x TP 2
  EXPECT_EQ(r.points[1].num_gpus, 5);  // 3 x TP 1 + 1 x TP 2
}

// A point with more deployments counts their GPUs too (the column gave the scenario's own).
TEST(Sweep, APointCountsTheGpusOfEveryDeployment) {
  SweepOptions o;
  o.axes = {parse_sweep_axis(
      R"(deployments=[{"name":"reviewer","model":"Llama-3.1-8B","gpu":"H100-SXM"}],)"
      R"([{"name":"reviewer","model":"Llama-3.1-8B","gpu":"H100-SXM",)"
      R"("parallel":{"data_parallel_size":2}}])")};
  o.overrides = {"workload.agent.sessions=10"};
  const SweepReport r =
      run_sweep(SERVESIM_SOURCE_DIR "/configs/scenarios/agent-planner-reviewer.json", o, Catalog());
  ASSERT_EQ(r.points.size(), 2u);
  ASSERT_TRUE(r.points[0].error.empty()) << r.points[0].error;
  EXPECT_EQ(r.points[0].num_gpus, 5);  // TP 4 + 1
  EXPECT_EQ(r.points[1].num_gpus, 6);  // TP 4 + 2 replicas
}

TEST(Sweep, AMisspeltKeyAbortsWithTheKeyNamed) {
  SweepOptions o;
  o.axes = {parse_sweep_axis("engine.max_num_seq=8,16")};
  try {
    run_sweep(kQuickstart, o, Catalog());
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("max_num_seq"), std::string::npos) << e.what();
  }
}

TEST(SweepInMemory, MatchesTheFileFormAndReportsEveryPoint) {
  const Catalog catalog;
  const SweepReport from_file = run_sweep(kQuickstart, small_sweep(2), catalog);
  std::atomic<size_t> calls{0};
  std::atomic<size_t> last_total{0};
  SweepControl control;
  control.on_point = [&](size_t done, size_t total) {
    EXPECT_GE(done, 1u);
    EXPECT_LE(done, total);
    ++calls;
    last_total = total;
  };
  control.should_stop = [] { return false; };
  const std::string dir = SERVESIM_SOURCE_DIR "/configs/scenarios";
  const std::optional<SweepReport> in_memory =
      run_sweep(load_json_file(kQuickstart), dir, kQuickstart, small_sweep(2), catalog, control);
  ASSERT_TRUE(in_memory.has_value());
  EXPECT_EQ(in_memory->to_csv(), from_file.to_csv());
  EXPECT_EQ(calls.load(), 4u);
  EXPECT_EQ(last_total.load(), 4u);
}

TEST(SweepInMemory, AStopRequestEndsTheSweepWithoutAReport) {
  SweepOptions o = small_sweep(1);
  o.overrides = {"workload.num_requests=1000000"};
  std::atomic<int> polls{0};
  SweepControl control;
  // Stops during the first point: that run is cut short and no later point starts.
  control.should_stop = [&] { return ++polls > 3; };
  std::atomic<size_t> points_done{0};
  control.on_point = [&](size_t, size_t) { ++points_done; };
  const std::optional<SweepReport> r =
      run_sweep(load_json_file(kQuickstart), SERVESIM_SOURCE_DIR "/configs/scenarios", kQuickstart,
                o, Catalog(), control);
  EXPECT_FALSE(r.has_value());
  EXPECT_LE(points_done.load(), 1u);
}

// The CLI's Ctrl-C: the points that finished before the stop, in grid order, marked as such.
TEST(SweepInMemory, AStopKeepingTheFinishedPointsReturnsThemMarkedIncomplete) {
  const Catalog catalog;
  const SweepReport full = run_sweep(kQuickstart, small_sweep(1), catalog);
  std::atomic<size_t> done{0};
  SweepControl control;
  control.on_point = [&](size_t, size_t) { ++done; };
  control.should_stop = [&] { return done >= 2; };  // one thread: points 0 and 1 finish
  SoloWorkShare alone;
  const SweepReport r = run_sweep(kQuickstart, small_sweep(1), catalog, alone, control);
  EXPECT_FALSE(r.complete());
  ASSERT_EQ(r.points.size(), 2u);
  EXPECT_EQ(r.grid_points, 4u);
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j["interrupted"], nlohmann::json({{"points_run", 2}, {"points_total", 4}}));
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(j["points"][i], full.to_json()["points"][i]);
  }
  EXPECT_TRUE(full.complete());
  EXPECT_FALSE(full.to_json().contains("interrupted"));
}

TEST(SweepInMemory, APointStoppedWhileRunningIsLeftOut) {
  SweepOptions o = small_sweep(1);
  o.overrides = {"workload.num_requests=1000000"};
  std::atomic<int> polls{0};
  SweepControl control;
  control.should_stop = [&] { return ++polls > 3; };  // during the first point
  control.keep_finished = true;
  const std::optional<SweepReport> r =
      run_sweep(load_json_file(kQuickstart), SERVESIM_SOURCE_DIR "/configs/scenarios", kQuickstart,
                o, Catalog(), control);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->points.empty());
  EXPECT_EQ(r->grid_points, 4u);
  EXPECT_NE(r->to_table().find("engine.max_num_seqs"), std::string::npos);
  EXPECT_EQ(r->to_csv().find('\n') + 1, r->to_csv().size());  // the header alone
}

TEST(SweepInMemory, RelativePathsResolveAgainstTheBaseDirAndErrorsNameTheOrigin) {
  nlohmann::json scenario = load_json_file(kQuickstart);
  scenario["model"] = "../models/Llama-2-7B.json";
  SweepOptions o = small_sweep(1);
  const std::optional<SweepReport> r = run_sweep(scenario, SERVESIM_SOURCE_DIR "/configs/scenarios",
                                                 "edited.json", o, Catalog(), SweepControl{});
  ASSERT_TRUE(r.has_value());
  for (const SweepPoint& p : r->points) EXPECT_TRUE(p.error.empty()) << p.error;

  scenario["engine"]["max_num_seq"] = 8;
  try {
    run_sweep(scenario, SERVESIM_SOURCE_DIR "/configs/scenarios", "edited.json", o, Catalog(),
              SweepControl{});
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("edited.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace servesim
