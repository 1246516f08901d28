// `servesim simulate` on a stepped workload: the per-step table, short-step notes and the
// knee in the table; "steps", "knee" and "setup" in summary.json; bad --max-error-rate.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "cli_runner.h"

namespace servesim::testing {
namespace {

const std::string kTiny = SERVESIM_SOURCE_DIR "/configs/scenarios/loadtest-tiny.json";
const std::string kKneeAt10ms = " --set slo.ttft_s=0.010 --set workload.arrival.step_duration_s=12";

TEST(SimulateStepped, TablePrintsEveryStepAndTheKnee) {
  // Step 1's TTFT p99 is about 7 ms, steps 2 and 3's 12-14 ms; 12 s steps give step 3 enough
  // samples for its p99.
  const CliResult r = run_servesim("simulate " + kTiny + kKneeAt10ms);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s :
       {"loadtest-tiny: Llama-100M-bench (fp32) on 1 x L4 (TP 1, PP 1, DP 1), vLLM V1 engine",
        "per step: 3 steps of 12 s, the first 1 s of each left out (warm-up)", "TTFT p50",
        "E2E p50", "errors", "note: step 1 (1 clients) has 120 latency samples",
        "knee: step 2 (2 clients): TTFT p99 12.4 ms > SLO 10.0 ms"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("note: step 3"), std::string::npos) << r.out;
}

TEST(SimulateStepped, SummaryJsonHasStepsKneeAndSetup) {
  const CliResult r = run_servesim("simulate " + kTiny + kKneeAt10ms + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["steps"].size(), 3u);
  EXPECT_EQ(j["steps"][0]["unstable_percentiles"], nlohmann::json({"p99"}));
  EXPECT_EQ(j["steps"][2]["unstable_percentiles"], nlohmann::json::array());
  EXPECT_EQ(j["knee"]["step"], 2);
  EXPECT_EQ(j["knee"]["clients"], 2);
  EXPECT_EQ(j["knee"]["reason"], "TTFT p99 12.4 ms > SLO 10.0 ms");
  EXPECT_EQ(j["setup"]["slo"]["ttft_s"], 0.010);  // the scenario after --set
  EXPECT_EQ(j["setup"]["engine"]["max_num_seqs"], 8);
  EXPECT_EQ(j["setup"]["max_error_rate"], 0.01);
}

TEST(SimulateStepped, NoKneeWhenEveryStepHolds) {
  const CliResult r = run_servesim("simulate " + kTiny + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["knee"].is_null());
}

TEST(SimulateStepped, EachStepLeavesItsWarmupOut) {
  auto excluded = [](const std::string& warmup_s) {
    const CliResult r =
        run_servesim("simulate " + kTiny + " --set metrics.step_warmup_s=" + warmup_s + " --json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    std::vector<uint64_t> counts;
    for (const nlohmann::json& s : j["steps"])
      counts.push_back(s["excluded_warmup"].get<uint64_t>());
    return counts;
  };
  EXPECT_EQ(excluded("0"), (std::vector<uint64_t>{0, 0, 0}));
  // Step k's requests that arrive in its first 2 s: about 2 s x its throughput.
  for (uint64_t n : excluded("2")) EXPECT_GT(n, 20u);
}

TEST(SimulateStepped, OtherWorkloadsHaveNoStepsOrKneeButASetup) {
  const CliResult r = run_servesim("simulate " SERVESIM_SOURCE_DIR
                                   "/configs/scenarios/quickstart.json --set "
                                   "workload.num_requests=20 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j.contains("steps"));
  EXPECT_FALSE(j.contains("knee"));
  EXPECT_EQ(j["setup"]["workload"]["num_requests"], 20);
}

TEST(SimulateStepped, BadMaxErrorRateIsOneLine) {
  const CliResult r = run_servesim("simulate " + kTiny + " --max-error-rate 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--max-error-rate must be in [0, 1]"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

}  // namespace
}  // namespace servesim::testing
