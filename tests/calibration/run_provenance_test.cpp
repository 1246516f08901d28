// RunProvenance: which published rows were measured at the load they name, read from the
// provenance CSV beside them; every malformed line, a run it does not list and a run it records
// at another load are one-line errors naming the file, the line or the run. The shipped file for
// the shared Qwen3-32B set lists every row, and exactly its three fp8 runs without a load.
#include "calibration/measured/run_provenance.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "calibration/measured/published_serving_rows.h"
#include "models/config_error.h"
#include "tests/calibration/calibration_test_util.h"

namespace servesim {
namespace {

const std::string kHeader = "tp,precision,isl,osl,concurrency,recorded_concurrency,upstream_id\n";

std::string file_of(const std::string& name, const std::string& text) {
  const std::string path = testing::fresh_dir("provenance_" + name) + "/" + name + ".csv";
  std::ofstream(path) << text;
  return path;
}

MeasuredRun published_run(int tp, std::optional<DType> weights, int isl, int osl, int clients) {
  MeasuredRun run;
  run.source = "rows.csv:7";
  run.format = "published";
  run.tensor_parallel_size = tp;
  run.weight_dtype = weights;
  run.prompt_tokens_per_request = isl;
  run.output_tokens_per_request = osl;
  run.load.max_concurrency = clients;
  return run;
}

std::string read_error(const std::string& path) {
  try {
    RunProvenance::read_file(path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for " << path;
  return "";
}

TEST(RunProvenance, SaysWhichRunsWereMeasuredAtTheLoadTheyName) {
  const RunProvenance p =
      RunProvenance::read_file(file_of("two", kHeader + "2,,1024,128,8,8,a_c8\n"
                                                        "2,fp8,4000,1000,48,,b_c\n"));
  EXPECT_TRUE(p.measured_at_named_load(published_run(2, std::nullopt, 1024, 128, 8)));
  EXPECT_FALSE(p.measured_at_named_load(published_run(2, DType::kFp8, 4000, 1000, 48)));
  EXPECT_EQ(p.upstream_id(published_run(2, DType::kFp8, 4000, 1000, 48)), "b_c");
  // The weights are part of the run: the same lengths and clients in bf16 are another run.
  try {
    p.measured_at_named_load(published_run(2, std::nullopt, 4000, 1000, 48));
    ADD_FAILURE() << "a run the file does not list";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "rows.csv:7 (TP 2, 4000/1000, 48 clients) has no line in " +
                                         p.path() + ": add one, or leave --provenance out");
  }
}

TEST(RunProvenance, ARunRecordedAtAnotherLoadIsRefused) {
  const RunProvenance p =
      RunProvenance::read_file(file_of("other", kHeader + "2,,1024,128,8,16,a\n"));
  try {
    p.measured_at_named_load(published_run(2, std::nullopt, 1024, 128, 8));
    ADD_FAILURE() << "8 clients where the source records 16";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "rows.csv:7 (TP 2, 1024/128, 8 clients): " + p.path() +
                                         " records 16 clients for that run");
  }
}

TEST(RunProvenance, AMalformedFileIsOneLineNamingTheLineAndColumn) {
  const std::string header = file_of("header", "tp,isl\n2,1024\n");
  EXPECT_EQ(read_error(header),
            header + ":1: expected the header " + kHeader.substr(0, kHeader.size() - 1));
  const std::string fields = file_of("fields", kHeader + "2,,1024,128,8,8\n");
  EXPECT_EQ(read_error(fields), fields + ":2: expected 7 fields (" +
                                    kHeader.substr(0, kHeader.size() - 1) + "), got 6");
  const std::string tp = file_of("tp", kHeader + "two,,1024,128,8,8,a\n");
  EXPECT_EQ(read_error(tp), tp + ":2: tp: expected a positive whole number, got 'two'");
  const std::string recorded = file_of("recorded", kHeader + "2,,1024,128,8,0,a\n");
  EXPECT_EQ(read_error(recorded),
            recorded + ":2: recorded_concurrency: expected a positive whole number, got '0'");
  const std::string precision = file_of("precision", kHeader + "2,fp7,1024,128,8,8,a\n");
  EXPECT_NE(read_error(precision).find(precision + ":2: precision: expected the weights'"),
            std::string::npos);
  const std::string twice = file_of("twice", kHeader + "2,,1024,128,8,8,a\n2,,1024,128,8,8,b\n");
  EXPECT_EQ(read_error(twice),
            twice + ":3: a second line for the run at TP 2, 1024/128, 8 clients");
  const std::string empty = file_of("empty", kHeader);
  EXPECT_EQ(read_error(empty), empty + ": no runs after the header");
  EXPECT_EQ(read_error("/nonexistent/provenance.csv"),
            "/nonexistent/provenance.csv: cannot open the provenance file");
}

TEST(RunProvenance, TheShippedFileListsEverySharedQwenRunAndThreeWithoutALoad) {
  const std::string rows = std::string(SERVESIM_SOURCE_DIR) +
                           "/../shared/reference/measured/published-vllm-h100-qwen3-32b.csv";
  if (!std::filesystem::exists(rows)) GTEST_SKIP() << "no shared reference data at " << rows;
  const RunProvenance p =
      RunProvenance::read_file(std::string(SERVESIM_SOURCE_DIR) +
                               "/configs/validation/published-vllm-h100-qwen3-32b-provenance.csv");
  int without = 0, runs = 0;
  for (const MeasuredRun& run : read_published_serving_rows(rows)) {
    ++runs;
    if (!p.measured_at_named_load(run)) {
      ++without;
      EXPECT_EQ(run.weight_dtype, DType::kFp8) << run.source;
      EXPECT_NE(p.upstream_id(run).find("_4000x1000_c_tp"), std::string::npos) << run.source;
    }
  }
  EXPECT_EQ(runs, 93);
  EXPECT_EQ(without, 3);
}

}  // namespace
}  // namespace servesim
