// `servesim sweep` as a user runs it: the table, CSV and JSON outputs, --out files, output
// independent of --threads, and one-line errors for bad --vary specs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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

TEST(SweepCommand, BadVaryIsOneLineErrorWithStatus2) {
  const CliResult r = run_servesim("sweep " SERVESIM_SOURCE_DIR
                                   "/configs/scenarios/quickstart.json --vary engine.max_num_seqs");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: --vary", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

}  // namespace
}  // namespace servesim::testing
