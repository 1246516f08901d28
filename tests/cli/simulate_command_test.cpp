// `servesim simulate` as a user runs it: every bundled scenario, pinned by its golden
// fingerprint (tests/cli/data/golden_fingerprints.json; regenerate it deliberately when a
// behaviour change is intended), outputs, and bad scenario files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_runner.h"

namespace servesim::testing {
namespace {

namespace fs = std::filesystem;

nlohmann::json golden() {
  std::ifstream in(SERVESIM_SOURCE_DIR "/tests/cli/data/golden_fingerprints.json");
  return nlohmann::json::parse(in);
}

TEST(SimulateCommand, EveryBundledScenarioRunsAndMatchesItsGoldenFingerprint) {
  const nlohmann::json expected = golden();
  int scenarios = 0;
  for (const auto& entry : fs::directory_iterator(SERVESIM_SOURCE_DIR "/configs/scenarios")) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().stem().string();
    SCOPED_TRACE(name);
    ++scenarios;
    const CliResult r = run_servesim("simulate " + entry.path().string() + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_GT(j["summary"]["completed"].get<int>(), 0);
    ASSERT_TRUE(expected.contains(name)) << "add " << name << " to golden_fingerprints.json";
    EXPECT_EQ(j["fingerprint"], expected[name]);
  }
  EXPECT_GE(scenarios, 7);
}

TEST(SimulateCommand, TablePrintsTheMetricsUsersCompare) {
  const CliResult r =
      run_servesim("simulate " SERVESIM_SOURCE_DIR "/configs/scenarios/quickstart.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s :
       {"TTFT", "TPOT", "ITL", "E2E", "p99", "throughput:", "goodput:", "fingerprint"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  }
}

TEST(SimulateCommand, OutDirGetsCsvsAndSummary) {
  const fs::path dir = fs::temp_directory_path() / "servesim_simulate_out";
  fs::remove_all(dir);
  const CliResult r =
      run_servesim("simulate " SERVESIM_SOURCE_DIR
                   "/configs/scenarios/quickstart.json --set workload.num_requests=50 "
                   "--out " +
                   dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream requests(dir / "requests.csv");
  std::string line;
  int lines = 0;
  while (std::getline(requests, line)) ++lines;
  EXPECT_EQ(lines, 51);  // header + one row per request
  EXPECT_TRUE(fs::exists(dir / "timeseries.csv"));
  std::ifstream summary(dir / "summary.json");
  EXPECT_EQ(nlohmann::json::parse(summary)["summary"]["completed"], 50);
}

TEST(SimulateCommand, SeedChangesTheRunAndSameSeedRepeatsIt) {
  const std::string base =
      "simulate " SERVESIM_SOURCE_DIR "/configs/scenarios/quickstart.json --json";
  const CliResult a = run_servesim(base + " --seed 5");
  const CliResult b = run_servesim(base + " --seed 5");
  const CliResult c = run_servesim(base + " --seed 6");
  ASSERT_EQ(a.exit_code, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(nlohmann::json::parse(a.out)["fingerprint"],
            nlohmann::json::parse(c.out)["fingerprint"]);
}

struct BadScenario {
  std::string args;
  const char* expected;
};

TEST(SimulateCommand, BadScenariosGiveOneLineErrors) {
  const std::string data = SERVESIM_SOURCE_DIR "/tests/cli/data/";
  const std::string quick = SERVESIM_SOURCE_DIR "/configs/scenarios/quickstart.json";
  const BadScenario cases[] = {
      {"simulate " + data + "typo_scenario.json", "did you mean 'max_num_seqs'"},
      {"simulate " + data + "broken_scenario.json", "broken_scenario.json:4:"},
      {"simulate /nonexistent/scenario.json", "cannot open"},
      {"simulate " + quick + " --set engine.max_num_seqs=0", "max_num_seqs"},
      {"simulate " + quick + " --set model=Llama-9B", "unknown model"},
      {"simulate " + quick + " --set model=Llama-2-70B", "does not fit"},
      {"simulate " + quick + " --set workload.arrival.type=\\\"sometimes\\\"", "sometimes"},
      {"simulate " + quick + " --set engine", "expected path.to.key=value"},
      {"simulate " + quick + " --set cost_model.compute_efficiency=1.5", "compute_efficiency"},
  };
  for (const BadScenario& c : cases) {
    SCOPED_TRACE(c.args);
    const CliResult r = run_servesim(c.args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  }
}

// A run with more deployments: a line per deployment in the table, summary.json's
// "deployments" (each its calls' metrics) and the replicas that name theirs, and the sessions'
// fallback_calls column.
TEST(SimulateCommand, EachDeploymentHasItsLineSummaryAndReplicas) {
  const std::string scenario = SERVESIM_SOURCE_DIR
      "/configs/scenarios/agent-planner-reviewer.json "
      "--set workload.agent.sessions=20";
  const CliResult text = run_servesim("simulate " + scenario);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  deployment Llama-3.1-70B: Llama-3.1-70B on 4 x H100-SXM"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("  deployment reviewer: Llama-3.1-8B on 1 x H100-SXM"),
            std::string::npos);
  EXPECT_NE(text.out.find("    calls 20 (20 completed); TTFT p50"), std::string::npos);
  EXPECT_NE(text.out.find("frontend reviewer"), std::string::npos);
  EXPECT_NE(text.out.find("  cost: $"), std::string::npos);
  EXPECT_NE(text.out.find(" per completed session (the run's GPU time over them)"),
            std::string::npos);

  const fs::path dir = fs::temp_directory_path() / "servesim_simulate_deployments";
  fs::remove_all(dir);
  const CliResult r = run_servesim("simulate " + scenario + " --json --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["deployments"].size(), 2u);
  EXPECT_EQ(j["deployments"][0]["name"], "Llama-3.1-70B");
  EXPECT_EQ(j["deployments"][0]["gpus"], 4);
  EXPECT_EQ(j["deployments"][1]["name"], "reviewer");
  EXPECT_EQ(j["deployments"][1]["model"], "Llama-3.1-8B");
  EXPECT_EQ(j["deployments"][1]["summary"]["completed"], 20);
  EXPECT_GT(j["deployments"][0]["summary"]["completed"].get<int>(), 40);
  EXPECT_GT(j["deployments"][1]["busy"].get<double>(), 0);
  EXPECT_GT(j["sessions"]["per_session"]["cost_usd"].get<double>(), 0);
  ASSERT_EQ(j["replicas"].size(), 2u);
  EXPECT_FALSE(j["replicas"][0].contains("deployment"));
  EXPECT_EQ(j["replicas"][1]["deployment"], "reviewer");
  std::ifstream sessions(dir / "sessions.csv");
  std::string header;
  std::getline(sessions, header);
  EXPECT_EQ(header.substr(header.size() - 28), "skipped_steps,fallback_calls");
  fs::remove_all(dir);
}

// The reviewer disaggregated with --set: its line says so and names its prefill instances; its
// JSON entry carries them; its replicas are the prefill and decode instances.
TEST(SimulateCommand, ADisaggregatedMoreDeploymentShowsBothRoles) {
  // deployments is a list: --set replaces it whole.
  const std::string set =
      " --set 'deployments=[{\"name\": \"reviewer\", \"model\": \"Llama-3.1-8B\", "
      "\"gpu\": \"H100-SXM\", \"disaggregation\": {\"prefill\": {\"instances\": 2}, "
      "\"decode\": {\"instances\": 1}}}]'";
  const std::string base = SERVESIM_SOURCE_DIR
      "/configs/scenarios/agent-planner-reviewer.json --set workload.agent.sessions=20";
  const CliResult text = run_servesim("simulate " + base + set);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  deployment reviewer: Llama-3.1-8B on 3 x H100-SXM"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("    disaggregated: 2 prefill instances on H100-SXM (TP 1, PP 1, DP 1; "
                          "KV cache "),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("and 1 decode instances as above"), std::string::npos);
  EXPECT_NE(text.out.find("    calls 20 (20 completed); TTFT p50"), std::string::npos);

  const CliResult r = run_servesim("simulate " + base + set + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["deployments"].size(), 2u);
  EXPECT_EQ(j["deployments"][1]["gpus"], 3);
  EXPECT_EQ(j["deployments"][1]["decode_instances"], 1);
  EXPECT_EQ(j["deployments"][1]["prefill"]["instances"], 2);
  EXPECT_GT(j["deployments"][1]["prefill"]["kv_cache_tokens"].get<int64_t>(), 0);
  ASSERT_EQ(j["replicas"].size(), 4u);
  for (size_t r = 1; r < 4; ++r) EXPECT_EQ(j["replicas"][r]["deployment"], "reviewer");
}

}  // namespace
}  // namespace servesim::testing
