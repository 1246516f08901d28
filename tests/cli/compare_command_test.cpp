// `servesim compare` as a user runs it: on folders `simulate --out` wrote and on a measured-
// looking folder without ITL; --json, --plot (a PNG, the same bytes every time), --max-error's
// exit status 3 naming the metric, and folders that are not result folders (exit 2, one line).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

namespace servesim::testing {
namespace {

namespace fs = std::filesystem;

class CompareCommandTest : public ::testing::Test {
 protected:
  // Two simulated runs of 40 requests (seeds 1 and 2), made once for the suite.
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("servesim_compare_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    for (const char* seed : {"1", "2"}) {
      const CliResult r = run_servesim(
          "simulate " SERVESIM_SOURCE_DIR
          "/configs/scenarios/quickstart.json --set workload.num_requests=40 --seed " +
          std::string(seed) + " --out " + (root_ / ("seed" + std::string(seed))).string());
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static std::string dir(const std::string& name) { return (root_ / name).string(); }
  static std::string pair() { return dir("seed1") + " " + dir("seed2"); }

  // A measured-looking folder: no simulated_s, no ITL, one request that failed.
  static std::string measured_folder() {
    const fs::path d = root_ / "measured";
    fs::create_directories(d);
    std::ofstream(d / "summary.json")
        << R"({"scenario": "quickstart", "backend": "http", "summary": {"requests": 2,
               "completed": 1, "error_rate": 0.5, "request_throughput_per_s": 0.5,
               "ttft": {"p50_ms": 50, "mean_ms": 50}, "itl": null}})";
    std::ofstream(d / "requests.csv") << "id,status,ttft_s,tpot_s,e2e_s\n"
                                         "0,ok,0.05,0.012,1.6\n1,rejected,,,\n";
    return d.string();
  }

  static fs::path root_;
};

fs::path CompareCommandTest::root_;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(CompareCommandTest, TableOfEveryMetricWithDifferencesAgainstTheFirst) {
  const CliResult r = run_servesim("compare " + pair());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"runs (differences are against the first):", "simulated", "throughput",
                        "output throughput", "TTFT p99", "TPOT mean", "ITL p95", "E2E p50",
                        "error rate", "goodput", "scenario=quickstart"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  }
  const size_t row = r.out.find("\n  requests ");
  ASSERT_NE(row, std::string::npos) << r.out;
  const std::string requests = r.out.substr(row + 1, r.out.find('\n', row + 1) - row - 1);
  EXPECT_TRUE(requests.ends_with(" 40   +0.0%")) << requests;
  EXPECT_EQ(run_servesim("compare " + pair()).out, r.out);
}

TEST_F(CompareCommandTest, JsonForMachines) {
  const CliResult r = run_servesim("compare " + pair() + " --json --metrics ttft_p50,e2e_p99");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["reference"], dir("seed1"));
  ASSERT_EQ(j["metrics"].size(), 2u);
  EXPECT_EQ(j["metrics"][0]["key"], "ttft_p50");
  EXPECT_EQ(j["metrics"][0]["difference_pct"][0], 0.0);
  EXPECT_TRUE(j["metrics"][1]["values"][1].is_number());
  EXPECT_FALSE(j.contains("max_error"));
}

TEST_F(CompareCommandTest, MaxErrorExitsThreeAndNamesTheMetric) {
  // Other seeds, other arrivals: the latencies differ by more than nothing.
  const CliResult strict = run_servesim("compare " + pair() + " --max-error 0");
  EXPECT_EQ(strict.exit_code, 3);
  EXPECT_NE(strict.err.find("compare: ttft_mean: " + dir("seed2") + " has "), std::string::npos)
      << strict.err;
  EXPECT_NE(strict.err.find("beyond --max-error 0%"), std::string::npos) << strict.err;

  const CliResult loose = run_servesim("compare " + pair() + " --max-error 1000");
  EXPECT_EQ(loose.exit_code, 0) << loose.err;
  EXPECT_NE(loose.out.find("max error: every compared metric within 1000% of " + dir("seed1")),
            std::string::npos)
      << loose.out;

  const CliResult same = run_servesim("compare " + dir("seed1") + " " + dir("seed1") +
                                      " --max-error 0 --metrics ttft_p50,tpot_p99");
  EXPECT_EQ(same.exit_code, 0) << same.err;

  const CliResult json = run_servesim("compare " + pair() + " --json --max-error 0");
  EXPECT_EQ(json.exit_code, 3);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["max_error"]["limit_pct"], 0.0);
  EXPECT_GT(j["max_error"]["breaches"].size(), 0u);
}

TEST_F(CompareCommandTest, MeasuredRunWithoutSomeMetricsShowsDashes) {
  const std::string measured = measured_folder();
  const CliResult r = run_servesim("compare " + dir("seed1") + " " + measured);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("measured   2 requests in requests.csv, 1 ok; scenario=quickstart "
                       "backend=http"),
            std::string::npos)
      << r.out;
  const size_t itl = r.out.find("  ITL p50");
  ASSERT_NE(itl, std::string::npos) << r.out;
  const std::string itl_row = r.out.substr(itl, r.out.find('\n', itl) - itl);
  EXPECT_NE(itl_row.find("\u2013"), std::string::npos) << itl_row;
  EXPECT_EQ(itl_row.find("%"), std::string::npos) << itl_row;

  // Asked for by name, a missing metric fails the gate rather than passing it.
  const CliResult gate = run_servesim("compare " + dir("seed1") + " " + measured +
                                      " --max-error 50 --metrics itl_p50");
  EXPECT_EQ(gate.exit_code, 3);
  EXPECT_NE(gate.err.find("compare: itl_p50: missing in " + measured), std::string::npos)
      << gate.err;
}

TEST_F(CompareCommandTest, OneResultOfAnAppendedVllmBenchFileByItsNumber) {
  const std::string data = SERVESIM_SOURCE_DIR "/tests/calibration/data/measured/";
  const std::string file = dir("sweep.json");
  std::ofstream(file)
      << nlohmann::json::parse(std::ifstream(data + "vllm-bench-summary.json")).dump() << "\n"
      << nlohmann::json::parse(std::ifstream(data + "vllm-bench-detailed.json")).dump() << "\n";
  const CliResult r = run_servesim("compare " + file + "#1 " + file + "#2 " + dir("seed1"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(file + "#2"), std::string::npos) << r.out;
  const CliResult whole = run_servesim("compare " + file + " " + dir("seed1"));
  EXPECT_EQ(whole.exit_code, 2);
  EXPECT_NE(whole.err.find("holds 2 results appended with --append-result"), std::string::npos)
      << whole.err;
}

TEST_F(CompareCommandTest, PlotIsAPngAndTheSameBytesEveryTime) {
  const std::string a = dir("a.png");
  const std::string b = dir("b.png");
  const std::string folders = pair() + " " + measured_folder();
  ASSERT_EQ(run_servesim("compare " + folders + " --plot " + a).exit_code, 0);
  ASSERT_EQ(run_servesim("compare " + folders + " --plot " + b + " --json").exit_code, 0);
  const std::string png = read_bytes(a);
  ASSERT_GT(png.size(), 24u);
  EXPECT_EQ(png.substr(0, 8), "\x89PNG\r\n\x1a\n");
  // IHDR: width and height, big-endian, at bytes 16..23; two rows of panels.
  auto be32 = [&](size_t at) {
    return (static_cast<unsigned char>(png[at]) << 24) |
           (static_cast<unsigned char>(png[at + 1]) << 16) |
           (static_cast<unsigned char>(png[at + 2]) << 8) | static_cast<unsigned char>(png[at + 3]);
  };
  EXPECT_EQ(be32(16), 1200u);
  EXPECT_GT(be32(20), 840u);
  EXPECT_EQ(png, read_bytes(b));

  const CliResult unwritable = run_servesim("compare " + pair() + " --plot /nonexistent/x.png");
  EXPECT_EQ(unwritable.exit_code, 2);
  EXPECT_NE(unwritable.err.find("error: --plot: cannot write '/nonexistent/x.png'"),
            std::string::npos)
      << unwritable.err;
}

TEST_F(CompareCommandTest, BadInputIsOneLineAndExitTwo) {
  const std::string missing = dir("nope");
  const std::string broken = dir("broken");
  fs::create_directories(broken);
  fs::copy_file(root_ / "seed1" / "summary.json", fs::path(broken) / "summary.json",
                fs::copy_options::overwrite_existing);
  {
    const std::string csv = read_bytes(dir("seed1") + "/requests.csv");
    // Cut inside a row, as a run killed while writing leaves it.
    std::ofstream(fs::path(broken) / "requests.csv")
        << csv.substr(0, csv.find('\n', csv.size() / 2) + 10);
  }
  struct Case {
    std::string args;
    std::string expect;
  };
  const Case cases[] = {
      {dir("seed1"), "error: compare: give two or more result folders"},
      {dir("seed1") + " " + missing, "error: " + missing + ": no such folder"},
      {dir("seed1") + " " + SERVESIM_SOURCE_DIR "/configs",
       "error: " SERVESIM_SOURCE_DIR "/configs/summary.json: missing"},
      {dir("seed1") + " " + broken, "error: " + broken + "/requests.csv line "},
      {pair() + " --metrics ttft_p42", "error: --metrics: unknown metric 'ttft_p42'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const CliResult r = run_servesim("compare " + c.args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err.rfind(c.expect, 0), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_NE(run_servesim("compare " + pair() + " --max-error -1").exit_code, 0);
}

}  // namespace
}  // namespace servesim::testing
