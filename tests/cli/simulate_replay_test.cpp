// `servesim simulate SCENARIO --replay MEASURED` as a user runs it: a vllm bench serve result
// replayed on the quickstart deployment (its successful requests, at their recorded sends,
// the same fingerprint twice), open-loop gaps drawn from the seed for a file without send
// times, requests.csv with the recorded lengths, a trace and a loadtest folder too,
// `servesim compare` taking the result file against the replay's folder, and the one-line
// errors for a run without per-request data and for a path that is no run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

namespace servesim::testing {
namespace {

namespace fs = std::filesystem;

const std::string kQuickstart = SERVESIM_SOURCE_DIR "/configs/scenarios/quickstart.json";
const std::string kMeasured = SERVESIM_SOURCE_DIR "/tests/calibration/data/measured/";

nlohmann::json simulate_json(const std::string& measured) {
  const CliResult r =
      run_servesim("simulate " + kQuickstart + " --replay " + kMeasured + measured + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

TEST(SimulateReplay, VllmBenchResultRequestForRequest) {
  const nlohmann::json j = simulate_json("vllm-bench-detailed.json");
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["replay"]["format"], "vllm-bench");
  EXPECT_EQ(j["replay"]["requests"], 5);  // the failed one is left out
  EXPECT_EQ(j["replay"]["arrivals"], "recorded");
  EXPECT_EQ(j["replay"]["max_concurrency"], 2);
  EXPECT_EQ(j["summary"]["completed"], 5);
  EXPECT_EQ(j["summary"]["input_tokens"], 512 + 256 + 1024 + 128 + 640);
  EXPECT_EQ(j["summary"]["output_tokens"], 4 + 3 + 5 + 2 + 4);
  EXPECT_EQ(j["setup"]["workload"]["replay"]["source"], kMeasured + "vllm-bench-detailed.json");
  EXPECT_EQ(simulate_json("vllm-bench-detailed.json")["fingerprint"], j["fingerprint"]);
}

TEST(SimulateReplay, OpenLoopGapsFollowTheSeed) {
  // benchmark_serving.py's file has no send times: request_rate 8 with Poisson gaps.
  const nlohmann::json a = simulate_json("vllm-bench-legacy.json");
  EXPECT_EQ(a["replay"]["arrivals"], "by the recorded load");
  EXPECT_EQ(a["summary"]["completed"], 3);
  EXPECT_EQ(simulate_json("vllm-bench-legacy.json")["fingerprint"], a["fingerprint"]);
  const CliResult other = run_servesim("simulate " + kQuickstart + " --replay " + kMeasured +
                                       "vllm-bench-legacy.json --seed 2 --json");
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(nlohmann::json::parse(other.out)["fingerprint"], a["fingerprint"]);
}

TEST(SimulateReplay, TraceAndLoadtestFolder) {
  const nlohmann::json trace = simulate_json("trace.jsonl");
  EXPECT_EQ(trace["summary"]["completed"], 4);
  EXPECT_EQ(trace["summary"]["output_tokens"], 6 + 9 + 5 + 1);
  const nlohmann::json loadtest = simulate_json("loadtest");
  EXPECT_EQ(loadtest["replay"]["format"], "loadtest");
  EXPECT_EQ(loadtest["summary"]["completed"], 3);
}

TEST(SimulateReplay, OutFolderComparesWithTheResultFile) {
  const fs::path dir =
      fs::temp_directory_path() / ("servesim_replay_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string result = kMeasured + "vllm-bench-detailed.json";
  const CliResult sim =
      run_servesim("simulate " + kQuickstart + " --replay " + result + " --out " + dir.string());
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  std::ifstream csv(dir / "requests.csv");
  std::string line;
  std::getline(csv, line);
  std::vector<std::string> rows;
  while (std::getline(csv, line)) rows.push_back(line);
  EXPECT_EQ(rows.size(), 5u);
  const CliResult cmp = run_servesim("compare " + result + " " + dir.string() + " --json");
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  const nlohmann::json c = nlohmann::json::parse(cmp.out);
  EXPECT_NE(c.dump().find("vllm-bench-detailed.json"), std::string::npos);
  const CliResult table = run_servesim("compare " + result + " " + dir.string());
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find(" measured "), std::string::npos) << table.out;
  fs::remove_all(dir);
}

TEST(SimulateReplay, OneLineErrors) {
  for (const std::string& measured :
       {kMeasured + "vllm-bench-summary.json", kMeasured + "absent.json",
        std::string(SERVESIM_SOURCE_DIR) + "/README.md"}) {
    const CliResult r = run_servesim("simulate " + kQuickstart + " --replay " + measured);
    EXPECT_EQ(r.exit_code, 2) << measured;
    EXPECT_NE(r.err.find(measured), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  }
  const CliResult r = run_servesim("simulate " + kQuickstart + " --replay " + kMeasured +
                                   "vllm-bench-summary.json");
  EXPECT_NE(r.err.find("--save-detailed"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace servesim::testing
