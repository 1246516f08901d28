// RunFolder: what ResultWriter writes reads back (values, latencies, clock), and every way a
// folder can be broken is one ConfigError naming the file, the line and the column or key.
#include "sim/metrics/run_folder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/config_error.h"
#include "sim/metrics/result_writer.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

const char* const kHeader =
    "id,replica,status,arrival_s,first_scheduled_s,first_token_s,finish_s,prompt_tokens,"
    "output_tokens,cached_prompt_tokens,preemptions,queueing_s,ttft_s,tpot_s,e2e_s,step_index\n";

// A fresh folder per test, removed afterwards.
class RunFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("servesim_run_folder_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& file, const std::string& text) const {
    std::ofstream(dir_ / file, std::ios::binary) << text;
  }
  void write_summary(const std::string& summary_object) const {
    write("summary.json", "{\"scenario\": \"t\", \"summary\": " + summary_object + "}");
  }
  // The error read_run_folder throws, or "" when it reads the folder.
  std::string error() const {
    try {
      read_run_folder(dir_.string());
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

RequestRecord ok_record(uint64_t id, double arrival_s, double ttft_s, double e2e_s, int out) {
  RequestRecord r;
  r.id = id;
  r.replica = 0;
  r.arrival_s = arrival_s;
  r.first_scheduled_s = arrival_s;
  r.first_token_s = arrival_s + ttft_s;
  r.finish_s = arrival_s + e2e_s;
  r.prompt_tokens = 10;
  r.output_tokens = out;
  return r;
}

TEST_F(RunFolderTest, ReadsBackWhatResultWriterWrites) {
  MetricsCollector collector;
  {
    ResultWriter writer(dir_.string());
    const RequestRecord records[] = {ok_record(0, 0.0, 0.30, 1.30, 11),
                                     ok_record(1, 0.5, 0.10, 0.60, 1),
                                     ok_record(2, 1.0, 0.20, 2.20, 21)};
    for (const RequestRecord& r : records) {
      writer.on_request_done(r);
      collector.add(r);
    }
    RequestRecord rejected;
    rejected.id = 3;
    rejected.arrival_s = 1.5;
    rejected.status = RequestOutcome::kRejected;
    writer.on_request_done(rejected);
    collector.add(rejected);
  }
  const MetricsSummary summary = collector.summary();
  nlohmann::json j = {{"scenario", "t"}, {"simulated_s", 3.0}, {"summary", summary_json(summary)}};
  j["replicas"] = nlohmann::json::array();
  write("summary.json", j.dump(2));

  const RunFolder run = read_run_folder(dir_.string() + "/");
  EXPECT_EQ(run.path, dir_.string());
  EXPECT_EQ(run.records, 4u);
  EXPECT_EQ(run.ok, 3u);
  EXPECT_EQ(run.clock(), "simulated");
  EXPECT_EQ(run.setup["scenario"], "t");
  EXPECT_FALSE(run.setup.contains("replicas"));
  ASSERT_EQ(run.ttft_s.size(), 3u);
  EXPECT_NEAR(run.ttft_s[0], 0.10, 1e-6);  // sorted
  EXPECT_NEAR(run.ttft_s[2], 0.30, 1e-6);
  EXPECT_EQ(run.tpot_s.size(), 2u);  // the one-token request has no TPOT
  EXPECT_NEAR(run.e2e_s[1], 1.30, 1e-6);
  EXPECT_DOUBLE_EQ(run.value("ttft.p50_ms"), summary.ttft.p50_s * 1e3);
  EXPECT_DOUBLE_EQ(run.value("error_rate"), 0.25);
  const MetricsSummary back = run.metrics_summary();
  EXPECT_EQ(back.completed, 3u);
  EXPECT_EQ(back.rejected, 1u);
  EXPECT_DOUBLE_EQ(back.e2e.p99_s, summary.e2e.p99_s);
  EXPECT_DOUBLE_EQ(back.request_throughput, summary.request_throughput);
}

TEST_F(RunFolderTest, AbsentAndNullValuesAreMissingAndUnknownOnesIgnored) {
  write_summary(R"({"completed": 1, "goodput_requests_per_s": null, "ttft": {"p50_ms": 5},
                    "itl": null, "http_errors": "none", "server": {"kind": "vllm"}})");
  write("requests.csv", "id,status,ttft_s,tpot_s,e2e_s,http_status\n0,ok,0.005,,0.01,200\n");
  const RunFolder run = read_run_folder(dir_.string());
  EXPECT_EQ(run.clock(), "measured");
  EXPECT_DOUBLE_EQ(run.value("ttft.p50_ms"), 5.0);
  EXPECT_TRUE(std::isnan(run.value("ttft.p99_ms")));
  EXPECT_TRUE(std::isnan(run.value("itl.p50_ms")));
  EXPECT_TRUE(std::isnan(run.value("goodput_requests_per_s")));
  EXPECT_TRUE(std::isnan(run.value("request_throughput_per_s")));
  EXPECT_TRUE(std::isnan(run.value("completed.deeper")));
  EXPECT_TRUE(std::isnan(run.metrics_summary().itl.p50_s));
  EXPECT_EQ(run.tpot_s.size(), 0u);
}

TEST_F(RunFolderTest, ZeroSuccessfulRequestsReadAsEmptyDistributions) {
  write_summary(R"({"requests": 2, "completed": 0, "error_rate": 1.0, "ttft": {"count": 0,
                    "p50_ms": null}})");
  write("requests.csv", std::string(kHeader) + "0,-1,rejected,0.1,,,,10,0,0,0,,,,,0\n" +
                            "1,-1,timed_out,0.2,,,,10,0,0,0,,,,,0\n");
  const RunFolder run = read_run_folder(dir_.string());
  EXPECT_EQ(run.records, 2u);
  EXPECT_EQ(run.ok, 0u);
  EXPECT_TRUE(run.ttft_s.empty());
  EXPECT_TRUE(std::isnan(run.value("ttft.p50_ms")));
}

TEST_F(RunFolderTest, HeaderOnlyAndWindowsLineEndsAreFine) {
  write_summary("{}");
  write("requests.csv", "id,status,ttft_s,tpot_s,e2e_s\r\n0,ok,0.1,0.01,0.5\r\n");
  EXPECT_EQ(read_run_folder(dir_.string()).ok, 1u);
  write("requests.csv", kHeader);
  EXPECT_EQ(read_run_folder(dir_.string()).records, 0u);
}

TEST_F(RunFolderTest, FolderThatIsNotThere) {
  const std::string missing = (dir_ / "nope").string();
  try {
    read_run_folder(missing);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(missing + ": no such folder"), std::string::npos)
        << e.what();
  }
  write("file", "x");
  try {
    read_run_folder((dir_ / "file").string());
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("not a folder"), std::string::npos) << e.what();
  }
}

TEST_F(RunFolderTest, FolderWithoutTheFiles) {
  EXPECT_NE(error().find("summary.json: missing"), std::string::npos) << error();
  write_summary("{}");
  EXPECT_NE(error().find("requests.csv: missing"), std::string::npos) << error();
}

TEST_F(RunFolderTest, SummaryThatIsNotJsonNamesLineAndColumn) {
  write("summary.json", "{\n  \"summary\": {\n    \"completed\": ,\n");
  write("requests.csv", kHeader);
  const std::string e = error();
  EXPECT_NE(e.find("summary.json: not valid JSON"), std::string::npos) << e;
  EXPECT_NE(e.find("line 3"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

// fuzz_run_folder: nlohmann throws out_of_range, not parse_error, for a number beyond a double;
// it escaped read_run_folder and ended `servesim compare`.
TEST_F(RunFolderTest, SummaryNumberBeyondADoubleIsAOneLineError) {
  write("summary.json", R"({"summary": {"completed": 1e3080}})");
  write("requests.csv", kHeader);
  const std::string e = error();
  EXPECT_NE(e.find("summary.json: not valid JSON"), std::string::npos) << e;
  EXPECT_NE(e.find("1e3080"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

// fuzz_run_folder: a count beyond uint64_t (or negative) was cast to one in metrics_summary()
// — undefined behaviour; counts are checked as whole numbers >= 0 when read.
TEST_F(RunFolderTest, CountsMustBeWholeNumbersThatFit) {
  write("requests.csv", kHeader);
  for (const char* bad : {R"({"rejected": 1e110})", R"({"completed": -3})", R"({"requests": 2.5})",
                          R"({"ttft": {"count": 1e30}})"}) {
    write_summary(bad);
    const std::string e = error();
    EXPECT_NE(e.find(", expected a whole number >= 0 or null"), std::string::npos) << bad << e;
  }
  write_summary(R"({"completed": 18446744073709551615, "ttft": {"count": null}})");
  EXPECT_EQ(error(), "");
  EXPECT_EQ(read_run_folder(dir_.string()).metrics_summary().completed, 18446744073709551615u);
}

TEST_F(RunFolderTest, SummaryWithoutItsObjectOrWithWrongTypes) {
  write("requests.csv", kHeader);
  write("summary.json", R"({"fingerprint": "abc"})");
  EXPECT_NE(error().find("no \"summary\" object"), std::string::npos) << error();
  write("summary.json", "[1, 2]");
  EXPECT_NE(error().find("no \"summary\" object"), std::string::npos) << error();
  write_summary(R"({"ttft": {"p50_ms": "fast"}})");
  EXPECT_NE(error().find("summary.ttft.p50_ms is string, expected a number or null"),
            std::string::npos)
      << error();
  write_summary(R"({"error_rate": [0.1]})");
  EXPECT_NE(error().find("summary.error_rate is array"), std::string::npos) << error();
  write_summary(R"({"e2e": 12})");
  EXPECT_NE(error().find("summary.e2e is number, expected an object or null"), std::string::npos)
      << error();
}

TEST_F(RunFolderTest, CsvErrorsNameFileLineAndColumn) {
  write_summary("{}");
  const std::string file = (dir_ / "requests.csv").string();
  write("requests.csv", "");
  EXPECT_EQ(error(), file + ": empty, expected a header line");
  write("requests.csv", "id,status,ttft_s,e2e_s\n");
  EXPECT_EQ(error(),
            file + " line 1: no column 'tpot_s' in the header — not a servesim requests.csv");
  write("requests.csv", "id,status,ttft_s,tpot_s,e2e_s,ttft_s\n");
  EXPECT_EQ(error(), file + " line 1, column 6 (ttft_s): column 'ttft_s' appears twice");
  write("requests.csv", std::string(kHeader) + "0,0,ok,0.1,0.1,0.2,0.9,5,4,0,0,0,0.1,0.2,0.8,0\n" +
                            "1,0,ok,0.2,0.2,0.3,");
  EXPECT_EQ(error(), file + " line 3: 7 fields where the header has 16 (a truncated file?)");
  write("requests.csv", std::string(kHeader) + "0,0,ok,0.1,0.1,0.2,0.9,5,4,0,0,0,fast,0.2,0.8,0\n");
  EXPECT_EQ(error(), file + " line 2, column 13 (ttft_s): 'fast' is not a number of seconds");
  write("requests.csv",
        std::string(kHeader) + "0,0,ok,0.1,0.1,0.2,0.9,5.5,4,0,0,0,0.1,0.2,0.8,0\n");
  EXPECT_EQ(error(), file + " line 2, column 8 (prompt_tokens): '5.5' is not an integer");
  write("requests.csv",
        std::string(kHeader) + "0,0,done,0.1,0.1,0.2,0.9,5,4,0,0,0,0.1,0.2,0.8,0\n");
  EXPECT_EQ(error(),
            file + " line 2, column 3 (status): unknown status 'done' (ok, rejected or timed_out)");
  write("requests.csv", std::string(kHeader) + "0,0,ok,0.1,0.1,0.2,0.9,5,4,0,0,0,,0.2,0.8,0\n");
  EXPECT_EQ(error(), file + " line 2, column 13 (ttft_s): empty for a request with status ok");
  write("requests.csv", std::string(kHeader) + "0,0,ok,0.1,0.1,0.2,0.9,5,4,0,0,0,0.1,0.2,-0.8,0\n");
  EXPECT_EQ(error(), file + " line 2, column 15 (e2e_s): negative latency -0.8");
  write("requests.csv", std::string(kHeader) + "0,0,ok,0.1,0.1,0.2,0.9,5,4,0,0,0,nan,0.2,0.8,0\n");
  EXPECT_EQ(error(), file + " line 2, column 13 (ttft_s): 'nan' is not a number of seconds");
  write("requests.csv", std::string(kHeader) + "\n");
  EXPECT_EQ(error(), file + " line 2: 1 fields where the header has 16 (a truncated file?)");
}

}  // namespace
}  // namespace servesim
