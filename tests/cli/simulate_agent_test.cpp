// `servesim simulate` on agent workloads: the sessions block of the table, summary.json's
// "sessions" object with the request metrics' latency fields, sessions.csv in --out folders
// (and none for other workloads), and a bad workflow's one-line error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace servesim::testing {
namespace {

namespace fs = std::filesystem;

const std::string kParallel = SERVESIM_SOURCE_DIR "/configs/scenarios/agent-multi-parallel.json";

TEST(SimulateAgent, TableHasTheSessionsBlock) {
  const CliResult r = run_servesim("simulate " + kParallel + " --set workload.agent.sessions=10");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part : {"sessions 10   completed 10   failed 0", "session (ms)", "first token",
                           "per session: 7.0 LLM calls, 5.0 tool calls", "critical path (mean"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
}

TEST(SimulateAgent, OutDirGetsSessionsCsvAndSummary) {
  const fs::path dir = fs::temp_directory_path() / "servesim_simulate_agent_out";
  fs::remove_all(dir);
  const CliResult r = run_servesim("simulate " + kParallel +
                                   " --set workload.agent.sessions=12 --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream csv(dir / "sessions.csv");
  std::string line;
  ASSERT_TRUE(std::getline(csv, line));
  EXPECT_EQ(line.rfind("id,workflow,user,status,cause,start_s,finish_s,e2e_s,", 0), 0u) << line;
  int rows = 0;
  while (std::getline(csv, line)) {
    EXPECT_NE(line.find(",research,0,ok,none,"), std::string::npos) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 12);
  std::ifstream summary_file(dir / "summary.json");
  const nlohmann::json summary = nlohmann::json::parse(summary_file);
  const nlohmann::json& s = summary["sessions"];
  EXPECT_EQ(s["completed"], 12);
  for (const char* key : {"count", "mean_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms"}) {
    EXPECT_TRUE(s["e2e"].contains(key)) << key;
  }
  EXPECT_EQ(summary["summary"]["completed"], 12 * 7);  // seven LLM calls a session
  const CliResult plain =
      run_servesim("simulate " SERVESIM_SOURCE_DIR
                   "/configs/scenarios/quickstart.json --set workload.num_requests=20 --out " +
                   dir.string() + "-plain");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_FALSE(fs::exists(dir.string() + "-plain/sessions.csv"));
}

TEST(SimulateAgent, BadWorkflowIsAOneLineError) {
  const CliResult r = run_servesim(
      "simulate " + kParallel +
      " --set 'workload.agent.workflows=[{\"name\": \"w\", \"steps\": [{\"type\": \"loop\", "
      "\"steps\": [{\"type\": \"tool\", \"latency_s\": 1, \"result_tokens\": 5}]}]}]'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("workload.agent.workflows[0].steps[0]: max_iterations is required"),
            std::string::npos)
      << r.err;
}

// record_trace with --out writes sessions.jsonl; replaying it as the workload gives the same
// sessions block.
TEST(SimulateAgent, RecordedTraceReplaysToTheSameSessions) {
  const fs::path dir = fs::temp_directory_path() / "servesim_simulate_agent_trace";
  fs::remove_all(dir);
  const CliResult recorded = run_servesim("simulate " + kParallel +
                                          " --set workload.agent.sessions=3 --set "
                                          "workload.agent.record_trace=true --out " +
                                          dir.string());
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  std::ifstream trace(dir / "sessions.jsonl");
  int lines = 0;
  for (std::string line; std::getline(trace, line);) ++lines;
  EXPECT_EQ(lines, 3);
  const CliResult replayed =
      run_servesim("simulate " + kParallel + " --set 'workload.agent={\"trace\": \"" +
                   (dir / "sessions.jsonl").string() + "\", \"sessions\": 3}'");
  ASSERT_EQ(replayed.exit_code, 0) << replayed.err;
  auto sessions_block = [](const std::string& out) {
    const size_t from = out.find("  sessions 3");
    return out.substr(from, out.find("critical path", from) - from);
  };
  EXPECT_EQ(sessions_block(replayed.out), sessions_block(recorded.out));
}

// sweep parses its scenario before running any point: a bad workflow stops it there, with the
// one-line error simulate gives.
TEST(SimulateAgent, SweepRefusesABadWorkflowAtParse) {
  const CliResult r = run_servesim(
      "sweep " + kParallel + " --vary workload.agent.sessions=2,3" +
      " --set 'workload.agent.workflows=[{\"name\": \"w\", \"steps\": [{\"type\": \"loop\", "
      "\"steps\": [{\"type\": \"tool\", \"latency_s\": 1, \"result_tokens\": 5}]}]}]'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("workload.agent.workflows[0].steps[0]: max_iterations is required"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("points"), std::string::npos) << r.out;
}

// plan searches a request rate; an agent workload's load is sessions, so it refuses rather
// than plan for requests that are not the workload's.
TEST(SimulateAgent, PlanRefusesAgentWorkloads) {
  const CliResult r = run_servesim("plan " + kParallel + " --target-qps 1 --slo ttft:p99=0.5");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("workload.agent: plan sizes for requests per second"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace servesim::testing
