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

}  // namespace
}  // namespace servesim::testing
