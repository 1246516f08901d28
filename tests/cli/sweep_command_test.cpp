// `servesim sweep` as a user runs it: the table, CSV and JSON outputs, --out files, output
// independent of --threads, and one-line errors for bad --vary specs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_runner.h"

namespace servesim::testing {
namespace {

const std::string kSweep = "sweep " SERVESIM_SOURCE_DIR
                           "/configs/scenarios/quickstart.json --set workload.num_requests=60 "
                           "--vary engine.max_num_seqs=8,32 --vary workload.arrival.rate_qps=2:4:2";

TEST(SweepCommand, TableHasOneRowPerPoint) {
  const CliResult r = run_servesim(kSweep);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("4 points"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ttft_p99_ms"), std::string::npos);
  EXPECT_NE(r.out.find("engine.max_num_seqs"), std::string::npos);
}

TEST(SweepCommand, CsvAndJsonDoNotDependOnThreads) {
  const CliResult one = run_servesim(kSweep + " --csv --threads 1");
  const CliResult two = run_servesim(kSweep + " --csv --threads 2");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out, two.out);
  EXPECT_EQ(one.out.rfind("engine.max_num_seqs,workload.arrival.rate_qps,gpus,", 0), 0u);
  const CliResult json = run_servesim(kSweep + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["points"].size(), 4u);
}

TEST(SweepCommand, OutWritesCsvAndJson) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "servesim_sweep_out";
  std::filesystem::remove_all(dir);
  const CliResult r = run_servesim(kSweep + " --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "sweep.csv"));
  std::ifstream in(dir / "sweep.json");
  EXPECT_EQ(nlohmann::json::parse(in)["points"].size(), 4u);
}

// Ctrl-C two seconds into a sweep far longer than that (stderr joins stdout): exit 130, and --out
// holds the points that finished (maybe none on a loaded machine), marked as how many of how many
// ran.
TEST(SweepCommand, CtrlCWritesTheFinishedPointsMarkedIncomplete) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "servesim_sweep_sigint";
  std::filesystem::remove_all(dir);
  const CliResult r = run_servesim(
      "sweep " SERVESIM_SOURCE_DIR
      "/configs/scenarios/quickstart.json --set workload.num_requests=20000 --threads 1 "
      "--vary workload.arrival.rate_qps=1:60:1 --out " +
      dir.string() + " 2>&1 & pid=$!; sleep 2; kill -INT $pid; wait $pid");
  EXPECT_EQ(r.exit_code, 130) << r.err;
  std::ifstream in(dir / "sweep.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["interrupted"]["points_total"], 60);
  const size_t ran = j["interrupted"]["points_run"].get<size_t>();
  EXPECT_LT(ran, 60u);
  EXPECT_EQ(j["points"].size(), ran);
  std::ifstream csv(dir / "sweep.csv");
  const std::string text((std::istreambuf_iterator<char>(csv)), std::istreambuf_iterator<char>());
  EXPECT_EQ(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')), ran + 1);
  EXPECT_NE(r.out.find(" of 60 points ran (interrupted)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("interrupted: the results are those of the "), std::string::npos) << r.out;
  std::filesystem::remove_all(dir);
}

TEST(SweepCommand, BadVaryIsOneLineErrorWithStatus2) {
  const CliResult r = run_servesim("sweep " SERVESIM_SOURCE_DIR
                                   "/configs/scenarios/quickstart.json --vary engine.max_num_seqs");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: --vary", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

}  // namespace
}  // namespace servesim::testing
