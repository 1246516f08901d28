// `servesim engine run` as a user runs it: the bundled CPU scenario, shrunk to a few fast
// requests, writes the very files `servesim simulate --out` writes; bad input is one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_runner.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;
using testing::run_servesim;

const std::string kSmoke = SERVESIM_SOURCE_DIR "/configs/scenarios/engine-cpu-smoke.json";
// Four requests arriving within ~0.2 s with short answers: a few seconds on one core.
const std::string kShrink =
    " --set workload.num_requests=4 --set workload.arrival.rate_qps=20"
    " --set 'workload.output_tokens={\"type\": \"uniform\", \"min\": 2, \"max\": 6}'";

std::string first_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

int count_lines(const fs::path& path) {
  std::ifstream in(path);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

void expect_one_line_error(const CliResult& r, const std::string& needle) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

TEST(EngineRunCommand, OutDirHasTheSimulatorsFilesAndKeys) {
  const fs::path engine_dir = fs::temp_directory_path() / "servesim_engine_run_out";
  const fs::path sim_dir = fs::temp_directory_path() / "servesim_engine_run_sim_out";
  const fs::path trace = fs::temp_directory_path() / "servesim_engine_run_trace.jsonl";
  fs::remove_all(engine_dir);
  fs::remove_all(sim_dir);
  const CliResult r = run_servesim("engine run " + kSmoke + kShrink + " --threads 2 --out " +
                                   engine_dir.string() + " --trace " + trace.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"TTFT", "TPOT", "ITL", "E2E", "p99", "throughput:", "wall clock",
                        "KV cache", "engine steps"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  }
  const CliResult sim = run_servesim("simulate " + kSmoke + kShrink + " --out " + sim_dir.string());
  ASSERT_EQ(sim.exit_code, 0) << sim.err;

  EXPECT_EQ(first_line(engine_dir / "requests.csv"), first_line(sim_dir / "requests.csv"));
  EXPECT_EQ(first_line(engine_dir / "timeseries.csv"), first_line(sim_dir / "timeseries.csv"));
  EXPECT_EQ(count_lines(engine_dir / "requests.csv"), 1 + 4);
  EXPECT_GT(count_lines(trace), 0);

  std::ifstream engine_in(engine_dir / "summary.json");
  std::ifstream sim_in(sim_dir / "summary.json");
  const nlohmann::json engine = nlohmann::json::parse(engine_in);
  const nlohmann::json simulated = nlohmann::json::parse(sim_in);
  for (const auto& [key, value] : simulated["summary"].items()) {
    EXPECT_TRUE(engine["summary"].contains(key)) << key;
  }
  for (const auto& [key, value] : simulated["replicas"][0].items()) {
    EXPECT_TRUE(engine["replicas"][0].contains(key)) << key;
  }
  EXPECT_EQ(engine["summary"]["completed"], 4);
  EXPECT_EQ(engine["summary"]["input_tokens"], simulated["summary"]["input_tokens"]);
  EXPECT_EQ(engine["summary"]["output_tokens"], simulated["summary"]["output_tokens"]);
  EXPECT_GT(engine["kv_cache_blocks"].get<int>(), 1);
  // The setup records share their keys where both runs have them, so compare can name what
  // differs: the engine's flags are the simulator's (same scheduler config), its backend is not
  // a GPU.
  const nlohmann::json& es = engine["setup"];
  const nlohmann::json& ss = simulated["setup"];
  EXPECT_EQ(es["backend"]["name"], "cpu");
  EXPECT_EQ(es["backend"]["threads"], 2);
  for (const char* key : {"max_num_seqs", "max_num_batched_tokens", "max_model_len", "mirrors"}) {
    EXPECT_EQ(es["engine"][key], ss["engine"][key]) << key;
  }
  EXPECT_EQ(es["workload"], ss["workload"]);
  EXPECT_EQ(es["seed"], ss["seed"]);
  EXPECT_EQ(es["model"]["name"], ss["model"]["name"]);
  const CliResult c = run_servesim("compare " + sim_dir.string() + " " + engine_dir.string());
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("setup against the first run:"), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("engine.max_num_seqs"), std::string::npos) << c.out;
  fs::remove_all(engine_dir);
  fs::remove_all(sim_dir);
  fs::remove(trace);
}

TEST(EngineRunCommand, PromptsBeyondMaxModelLenAreRejectedAndCounted) {
  const CliResult r =
      run_servesim("engine run " + kSmoke + kShrink + " --set engine.max_model_len=30 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["summary"]["rejected"].get<int>(), 0);
  EXPECT_EQ(j["summary"]["requests"], 4);
}

TEST(EngineRunCommand, SteppedRunPrintsTheStepTableAndTheKnee) {
  // Two 1-second steps of closed-loop clients with 2-token answers: a second or two of engine.
  const std::string stepped =
      " --set 'workload.arrival={\"type\": \"stepped\", \"steps\": [1, 2], "
      "\"step_duration_s\": 1}' --set workload.output_tokens=2 --set workload.num_requests=0";
  const fs::path dir = fs::temp_directory_path() / "servesim_engine_run_stepped";
  fs::remove_all(dir);
  const CliResult table = run_servesim("engine run " + kSmoke + stepped + " --out " + dir.string());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  for (const char* s : {"per step: 2 steps of 1 s", "TTFT p50", "knee:"}) {
    EXPECT_NE(table.out.find(s), std::string::npos) << s << "\n" << table.out;
  }
  std::ifstream summary(dir / "summary.json");
  const nlohmann::json j = nlohmann::json::parse(summary);
  ASSERT_EQ(j["steps"].size(), 2u);
  EXPECT_TRUE(j["steps"][0].contains("unstable_percentiles"));
  EXPECT_TRUE(j.contains("knee"));  // null, or the step that broke: wall-clock timing decides
  fs::remove_all(dir);
  expect_one_line_error(run_servesim("engine run " + kSmoke + " --max-error-rate 2"),
                        "--max-error-rate must be in [0, 1]");
}

TEST(EngineRunCommand, BadInputIsAOneLineError) {
  expect_one_line_error(run_servesim("engine run " + kSmoke + " --backend cuda"), "--backend cuda");
  expect_one_line_error(
      run_servesim("engine run " SERVESIM_SOURCE_DIR "/configs/scenarios/production-13b-tp2.json"),
      "--force");
  expect_one_line_error(run_servesim("engine run " + kSmoke + " --num-blocks 8 --kv-cache-mib 8"),
                        "not both");
  expect_one_line_error(run_servesim("engine run " + kSmoke + " --set model=Mixtral-8x7B --force"),
                        "mixture-of-experts");
}

}  // namespace
}  // namespace servesim
