// read_published_serving_rows' refusal of mean latencies that std::from_chars reads but no run
// has — "inf", or so small that the millisecond-to-second conversion gives 0 — the inputs of
// fuzz_published_rows (tests/fuzz/corpus/fuzz_published_rows/regress-*), each a one-line error
// naming the file, line and column.
#include "calibration/measured/published_serving_rows.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "models/config_error.h"
#include "tests/calibration/calibration_test_util.h"

namespace servesim {
namespace {

const std::string kHeader = "model,gpu,isl,osl,concurrency,tp,ttft_ms,tpot_ms\n";

std::string rows_file(const std::string& name, const std::string& row) {
  const std::string path = testing::fresh_dir("published_" + name) + "/" + name + ".csv";
  std::ofstream(path) << kHeader << row << "\n";
  return path;
}

std::string error_of(const std::string& path) {
  try {
    read_published_serving_rows(path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for " << path;
  return "";
}

TEST(PublishedServingRows, AMeanLatencyMustBeFiniteAndPositiveInSeconds) {
  const std::string inf = rows_file("inf", "Qwen/Qwen3-32B,h100_sxm,1024,128,8,2,inf,18");
  EXPECT_EQ(error_of(inf), inf + ":2: ttft_ms: expected a positive number, got 'inf'");
  const std::string tiny = rows_file("tiny", "Qwen/Qwen3-32B,h100_sxm,1024,128,8,2,150,4e-323");
  EXPECT_EQ(error_of(tiny), tiny + ":2: tpot_ms: expected a positive number, got '4e-323'");
  const std::vector<MeasuredRun> runs = read_published_serving_rows(
      rows_file("fine", "Qwen/Qwen3-32B,h100_sxm,1024,128,8,2,1e-3,18"));
  EXPECT_DOUBLE_EQ(runs.at(0).summary.ttft.mean_s, 1e-6);
}

}  // namespace
}  // namespace servesim
