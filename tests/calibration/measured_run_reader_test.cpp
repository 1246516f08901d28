// Measured runs read from every format servesim accepts — vllm bench serve results (current
// layout with and without --save-detailed, benchmark_serving.py's), timing traces (JSONL with
// aliases, CSV), a loadtest folder — against recorded examples in data/measured/ written from
// the formats' source; the model check; run_folder_from and replay_spec_from; and every bad
// input as a one-line ConfigError naming the file and the key.
#include "calibration/measured/measured_run_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "calibration/measured/timing_trace.h"
#include "calibration/measured/vllm_bench_result.h"
#include "models/config_error.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

std::string data(const std::string& name) {
  return std::string(SERVESIM_SOURCE_DIR) + "/tests/calibration/data/measured/" + name;
}

nlohmann::json detailed_json() {
  std::ifstream in(data("vllm-bench-detailed.json"));
  return nlohmann::json::parse(in);
}

// A scratch folder for the bad inputs, one per process.
class MeasuredRunBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("servesim_measured_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  // The error read_measured_run gives `path`; fails the test when there is none or it is not
  // one line naming the file.
  static std::string error_of(const std::string& path, const std::string& model = "") {
    try {
      read_measured_run(path, model);
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find(path), std::string::npos) << what;
      return what;
    }
    ADD_FAILURE() << "no error for " << path;
    return "";
  }

  std::string edited(const std::string& name, void (*edit)(nlohmann::json&)) const {
    nlohmann::json j = detailed_json();
    edit(j);
    return write(name, j.dump());
  }

  fs::path dir_;
};

TEST(VllmBenchResult, DetailedCurrentLayout) {
  const MeasuredRun run = read_vllm_bench_result(data("vllm-bench-detailed.json"));
  EXPECT_EQ(run.format, "vllm-bench");
  EXPECT_EQ(run.model, "Qwen/Qwen3-32B");
  EXPECT_EQ(run.backend, "vllm");
  ASSERT_TRUE(run.load.max_concurrency);
  EXPECT_EQ(*run.load.max_concurrency, 2);
  EXPECT_TRUE(std::isinf(run.load.request_rate_per_s));
  EXPECT_FALSE(run.load.ramp_up);
  ASSERT_EQ(run.requests.size(), 6u);
  ASSERT_TRUE(run.has_arrivals());  // start_times, as seconds since the first
  EXPECT_DOUBLE_EQ(run.requests[0].arrival_s, 0.0);
  EXPECT_NEAR(run.requests[2].arrival_s, 0.146, 1e-9);
  EXPECT_EQ(run.requests[0].prompt_tokens, 512);
  EXPECT_EQ(run.requests[0].output_tokens, 4);
  EXPECT_DOUBLE_EQ(run.requests[0].ttft_s, 0.080);
  EXPECT_NEAR(run.requests[0].e2e_s, 0.143, 1e-12);  // latencies[0]
  EXPECT_EQ(run.requests[0].itl_s.size(), 3u);
  EXPECT_FALSE(run.requests[3].ok);  // "Internal Server Error"
  EXPECT_EQ(run.summary.completed, 5u);
  EXPECT_EQ(run.summary.rejected, 1u);
  EXPECT_EQ(run.summary.requests, 6u);
  EXPECT_NEAR(run.summary.duration_s, 0.589, 1e-9);
  EXPECT_NEAR(run.summary.ttft.mean_s, 0.099, 1e-12);  // the file's mean_ttft_ms
  EXPECT_NEAR(run.summary.tpot.mean_s, 0.0209, 1e-12);
  // The file has no e2el aggregates (not in the default --percentile-metrics): from latencies.
  EXPECT_NEAR(run.summary.e2e.mean_s, 0.1556, 1e-6);
  EXPECT_NEAR(run.summary.e2e.p50_s, 0.143, 1e-6);
  EXPECT_EQ(run.summary.e2e.count, 5u);
}

TEST(VllmBenchResult, SummaryOnlyKeepsTheFileAggregates) {
  const MeasuredRun run = read_vllm_bench_result(data("vllm-bench-summary.json"));
  EXPECT_EQ(run.format, "vllm-bench");
  EXPECT_TRUE(run.requests.empty());  // latencies alone are not per-request data
  EXPECT_FALSE(run.load.max_concurrency);
  EXPECT_DOUBLE_EQ(run.load.request_rate_per_s, 4.0);
  EXPECT_DOUBLE_EQ(run.load.burstiness, 0.5);
  EXPECT_TRUE(run.load.ramp_up);  // ramp_up_strategy "linear"
  EXPECT_EQ(run.summary.completed, 5u);
  EXPECT_EQ(run.summary.ttft.count, 5u);
  EXPECT_NEAR(run.summary.ttft.mean_s, 0.099, 1e-12);
  EXPECT_NEAR(run.summary.e2e.mean_s, 0.1556, 1e-12);
  EXPECT_NEAR(run.summary.e2e.p90_s, 0.2192, 1e-9);
  EXPECT_TRUE(std::isnan(run.summary.ttft.p90_s));  // not in the file
  EXPECT_NEAR(run.summary.output_throughput, 18 / 0.589, 1e-6);
}

TEST(VllmBenchResult, LegacyLayout) {
  const MeasuredRun run = read_vllm_bench_result(data("vllm-bench-legacy.json"));
  EXPECT_EQ(run.format, "vllm-bench-legacy");
  EXPECT_EQ(run.model, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_DOUBLE_EQ(run.load.request_rate_per_s, 8.0);
  ASSERT_EQ(run.requests.size(), 4u);
  EXPECT_FALSE(run.has_arrivals());
  EXPECT_NEAR(run.requests[0].e2e_s, 0.081, 1e-12);  // TTFT + the ITLs
  EXPECT_FALSE(run.requests[2].ok);                  // "Bad Request"
  EXPECT_EQ(run.summary.completed, 3u);
  EXPECT_EQ(run.summary.rejected, 1u);  // no "failed" key: counted from the errors
  EXPECT_NEAR(run.summary.ttft.mean_s, 0.055, 1e-12);
  EXPECT_NEAR(run.summary.duration_s, 0.9, 1e-12);
}

TEST(TimingTrace, JsonlWithAliasesInSendOrder) {
  const MeasuredRun run = read_timing_trace(data("trace.jsonl"));
  EXPECT_EQ(run.format, "trace");
  ASSERT_EQ(run.requests.size(), 5u);
  ASSERT_TRUE(run.has_arrivals());
  EXPECT_DOUBLE_EQ(run.requests[0].arrival_s, 0.0);  // r2 was sent first
  EXPECT_EQ(run.requests[0].prompt_tokens, 256);
  EXPECT_NEAR(run.requests[0].ttft_s, 0.06, 1e-6);
  EXPECT_NEAR(run.requests[0].e2e_s, 0.16, 1e-6);
  EXPECT_NEAR(run.requests[1].arrival_s, 0.25, 1e-6);
  EXPECT_FALSE(run.requests[3].ok);  // "HTTP 503"
  EXPECT_EQ(run.requests[4].output_tokens, 1);
  EXPECT_EQ(run.summary.completed, 4u);
  EXPECT_EQ(run.summary.rejected, 1u);
  EXPECT_NEAR(run.summary.duration_s, 1.3, 1e-6);
  EXPECT_EQ(run.summary.itl.count, 0u);  // a trace has no ITLs
}

TEST(TimingTrace, Csv) {
  const MeasuredRun run = read_timing_trace(data("trace.csv"));
  ASSERT_EQ(run.requests.size(), 4u);
  EXPECT_NEAR(run.requests[1].arrival_s, 0.5, 1e-12);
  EXPECT_NEAR(run.requests[1].ttft_s, 0.08, 1e-9);
  EXPECT_FALSE(run.requests[2].ok);
  EXPECT_NEAR(run.summary.tpot.mean_s, 0.02, 1e-9);
}

TEST(MeasuredRunReader, LoadtestFolder) {
  const MeasuredRun run = read_measured_run(data("loadtest"));
  EXPECT_EQ(run.format, "loadtest");
  EXPECT_EQ(run.model, "Llama-2-7B");
  ASSERT_TRUE(run.load.max_concurrency);  // setup.workload: closed loop of 2 clients
  EXPECT_EQ(*run.load.max_concurrency, 2);
  ASSERT_EQ(run.requests.size(), 4u);  // by id, though written in finish order
  EXPECT_DOUBLE_EQ(run.requests[0].arrival_s, 0.0);
  EXPECT_NEAR(run.requests[1].arrival_s, 0.002, 1e-9);
  EXPECT_NEAR(run.requests[1].ttft_s, 0.08, 1e-12);
  EXPECT_EQ(run.requests[2].prompt_tokens, 128);
  EXPECT_FALSE(run.requests[3].ok);
  EXPECT_NEAR(run.summary.ttft.mean_s, 0.070, 1e-12);  // summary.json's, not recomputed
  EXPECT_EQ(run.summary.itl.count, 30u);
  EXPECT_EQ(run.engine_version, "0.12.0");  // setup.server_version
  EXPECT_DOUBLE_EQ(run.prompt_tokens_per_request, 128);
  EXPECT_DOUBLE_EQ(run.output_tokens_per_request, 11);
}

TEST(MeasuredRunReader, DispatchesOnThePathAndChecksTheModel) {
  EXPECT_EQ(read_measured_run(data("vllm-bench-legacy.json")).format, "vllm-bench-legacy");
  EXPECT_EQ(read_measured_run(data("trace.csv")).format, "trace");
  EXPECT_EQ(read_measured_run(data("vllm-bench-detailed.json"), "qwen3-32b").model,
            "Qwen/Qwen3-32B");
  EXPECT_EQ(read_measured_run(data("trace.csv"), "Llama-2-7B").format, "trace");  // no model
  EXPECT_TRUE(same_model("Qwen/Qwen3-32B", "QWEN3-32B"));
  EXPECT_FALSE(same_model("Qwen/Qwen3-32B", "Qwen3-8B"));
}

TEST(MeasuredRunReader, RunFolderFromAResultFile) {
  const RunFolder f = run_folder_from(read_measured_run(data("vllm-bench-detailed.json")));
  EXPECT_EQ(f.path, data("vllm-bench-detailed.json"));
  EXPECT_EQ(f.clock(), "measured");
  EXPECT_EQ(f.records, 6u);
  EXPECT_EQ(f.ok, 5u);
  ASSERT_EQ(f.ttft_s.size(), 5u);
  EXPECT_TRUE(std::is_sorted(f.ttft_s.begin(), f.ttft_s.end()));
  EXPECT_EQ(f.tpot_s.size(), 5u);
  EXPECT_NEAR(f.value("ttft.mean_ms"), 99.0, 1e-9);
  EXPECT_EQ(f.setup["model"], "Qwen/Qwen3-32B");
  EXPECT_EQ(f.setup["load"]["max_concurrency"], 2);
  EXPECT_EQ(f.setup["load"]["request_rate_per_s"], "inf");
  const RunFolder summary_only =
      run_folder_from(read_measured_run(data("vllm-bench-summary.json")));
  EXPECT_EQ(summary_only.records, 6u);
  EXPECT_EQ(summary_only.ok, 5u);
  EXPECT_TRUE(summary_only.ttft_s.empty());
}

TEST(MeasuredRunReader, ReplaySpecFromARun) {
  const ReplaySpec detailed = replay_spec_from(read_measured_run(data("vllm-bench-detailed.json")));
  EXPECT_TRUE(detailed.recorded_arrivals);
  ASSERT_EQ(detailed.requests.size(), 5u);  // the failed request is left out
  EXPECT_EQ(detailed.requests[3].prompt_tokens, 128);
  EXPECT_EQ(detailed.requests[3].output_tokens, 2);
  ASSERT_TRUE(detailed.max_concurrency);
  EXPECT_EQ(*detailed.max_concurrency, 2);
  const ReplaySpec legacy = replay_spec_from(read_measured_run(data("vllm-bench-legacy.json")));
  EXPECT_FALSE(legacy.recorded_arrivals);
  EXPECT_DOUBLE_EQ(legacy.request_rate_per_s, 8.0);
  EXPECT_EQ(legacy.requests.size(), 3u);
  MeasuredRun fixed = read_measured_run(data("vllm-bench-summary.json"));
  fixed.prompt_tokens_per_request = 1024;  // as --random-input-len would state them
  fixed.output_tokens_per_request = 128;
  fixed.load.ramp_up = false;  // at one rate, so its load replays
  const ReplaySpec synthesised = replay_spec_from(fixed);
  ASSERT_EQ(synthesised.requests.size(), 5u);  // the completed ones
  EXPECT_EQ(synthesised.requests[4].prompt_tokens, 1024);
  EXPECT_EQ(synthesised.requests[4].output_tokens, 128);
  EXPECT_DOUBLE_EQ(synthesised.request_rate_per_s, 4.0);
  EXPECT_FALSE(synthesised.recorded_arrivals);
  MeasuredRun ramped = read_measured_run(data("vllm-bench-legacy.json"));
  ramped.load.ramp_up = true;
  try {
    replay_spec_from(ramped);
    ADD_FAILURE() << "a ramped-up run without send times replayed at one rate";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("ramped up"), std::string::npos) << e.what();
  }
  try {
    replay_spec_from(read_measured_run(data("vllm-bench-summary.json")));
    ADD_FAILURE() << "a summary-only result replayed";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--save-detailed"), std::string::npos) << e.what();
  }
}

TEST_F(MeasuredRunBadInput, VllmBenchResults) {
  std::ifstream in(data("vllm-bench-detailed.json"));
  const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(error_of(write("truncated.json", whole.substr(0, whole.size() / 2))).find("truncated"),
            std::string::npos);
  EXPECT_NE(error_of(edited("short.json", [](nlohmann::json& j) { j["ttfts"].erase(5); }))
                .find("ttfts has 5 entries where input_lens has 6"),
            std::string::npos);
  EXPECT_NE(error_of(edited("type.json", [](nlohmann::json& j) { j["completed"] = "five"; }))
                .find("completed is \"five\""),
            std::string::npos);
  EXPECT_NE(error_of(edited("negative.json", [](nlohmann::json& j) { j["ttfts"][1] = -0.1; }))
                .find("ttfts[1] is -0.1, a negative latency"),
            std::string::npos);
  EXPECT_NE(error_of(edited("itl.json", [](nlohmann::json& j) { j["itls"][0][1] = -1; }))
                .find("itls[0][1]"),
            std::string::npos);
  EXPECT_NE(error_of(edited("lens.json", [](nlohmann::json& j) { j["input_lens"][2] = 1.5; }))
                .find("input_lens[2]"),
            std::string::npos);
  EXPECT_NE(error_of(edited("nolens.json", [](nlohmann::json& j) { j.erase("input_lens"); }))
                .find("output_lens is there but input_lens is not"),
            std::string::npos);
  EXPECT_NE(error_of(edited("rate.json", [](nlohmann::json& j) { j["request_rate"] = "fast"; }))
                .find("request_rate"),
            std::string::npos);
  EXPECT_NE(error_of(edited("cap.json", [](nlohmann::json& j) { j["max_concurrency"] = 0; }))
                .find("max_concurrency"),
            std::string::npos);
  EXPECT_NE(error_of(write("other.json", R"({"name": "not a result"})"))
                .find("not a vllm bench serve result"),
            std::string::npos);
  EXPECT_NE(error_of(data("vllm-bench-detailed.json"), "Llama-3.1-70B")
                .find("served Qwen/Qwen3-32B, not Llama-3.1-70B"),
            std::string::npos);
}

TEST_F(MeasuredRunBadInput, TimingTraces) {
  const std::string header = "arrival_s,first_token_s,last_token_s,prompt_tokens,output_tokens\n";
  EXPECT_NE(error_of(write("early.csv", header + "10,9.5,11,100,5\n")).find("negative latency"),
            std::string::npos);
  EXPECT_NE(error_of(write("late.csv", header + "10,10.5,10.2,100,5\n")).find("line 2"),
            std::string::npos);
  EXPECT_NE(error_of(write("nan.csv", header + "10,abc,11,100,5\n")).find("'abc' is not a number"),
            std::string::npos);
  EXPECT_NE(error_of(write("short.csv", header + "10,10.5,11,100\n")).find("4 fields"),
            std::string::npos);
  EXPECT_NE(error_of(write("nocol.csv", "first_token_s,prompt_tokens\n1,2\n")).find("arrival_s"),
            std::string::npos);
  EXPECT_NE(error_of(write("clash.csv", "arrival_s,send_time,prompt_tokens\n1,1,2\n"))
                .find("'arrival_s' and 'send_time'"),
            std::string::npos);
  EXPECT_NE(error_of(write("tokens.csv", header + "10,10.5,11,100,2.5\n")).find("output_tokens"),
            std::string::npos);
  EXPECT_NE(error_of(write("empty.jsonl", "\n")).find("no requests"), std::string::npos);
  EXPECT_NE(error_of(write("bad.jsonl", "{\"arrival_s\": 1, \"prompt_tokens\": \n")).find("line 1"),
            std::string::npos);
  EXPECT_NE(error_of(write("noend.jsonl", R"({"arrival_s": 1, "prompt_tokens": 2})"))
                .find("no first_token_s"),
            std::string::npos);
  EXPECT_NE(error_of(write("run.txt", "x")).find("not a measured run"), std::string::npos);
  EXPECT_NE(error_of((dir_ / "absent.json").string()).find("no such file"), std::string::npos);
}

}  // namespace
}  // namespace servesim

namespace servesim {
namespace {

// `vllm bench serve --append-result`: each run's JSON on its own line after the earlier ones.
class AppendedBenchResults : public MeasuredRunBadInput {
 protected:
  std::string appended(const std::string& name, const std::string& second_line) const {
    std::ifstream summary(data("vllm-bench-summary.json"));
    return write(name, nlohmann::json::parse(summary).dump() + "\n" + second_line + "\n");
  }
};

TEST_F(AppendedBenchResults, EveryResultOfTheFileIsARunNamedByItsNumber) {
  const std::string path = appended("sweep.json", detailed_json().dump());
  const std::vector<MeasuredRun> runs = read_vllm_bench_results(path);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].source, path + "#1");
  EXPECT_EQ(runs[1].source, path + "#2");
  const MeasuredRun summary = read_vllm_bench_result(data("vllm-bench-summary.json"));
  const MeasuredRun detailed = read_vllm_bench_result(data("vllm-bench-detailed.json"));
  EXPECT_EQ(runs[0].summary.ttft.mean_s, summary.summary.ttft.mean_s);
  EXPECT_EQ(runs[1].requests.size(), detailed.requests.size());
  EXPECT_TRUE(runs[0].requests.empty());
  EXPECT_EQ(read_measured_runs(path).size(), 2u);
  // One by number, through every reader.
  EXPECT_EQ(read_vllm_bench_result(path + "#2").requests.size(), detailed.requests.size());
  EXPECT_EQ(read_measured_run(path + "#2").source, path + "#2");
  EXPECT_EQ(read_measured_run(path + "#1").summary.completed, summary.summary.completed);
  // A one-result file reads the same with or without #1.
  EXPECT_EQ(read_measured_runs(data("vllm-bench-detailed.json")).size(), 1u);
  EXPECT_EQ(read_measured_run(data("vllm-bench-detailed.json") + "#1").requests.size(),
            detailed.requests.size());
}

TEST_F(AppendedBenchResults, ASeveralResultFileMustBeNamedWithItsRunsNumber) {
  const std::string path = appended("sweep.json", detailed_json().dump());
  EXPECT_NE(error_of(path).find("holds 2 results appended with --append-result; name one as " +
                                path + "#1 .. " + path + "#2"),
            std::string::npos);
  EXPECT_NE(error_of(path + "#3").find("the file holds 2 results; number them from 1 to 2"),
            std::string::npos);
  EXPECT_NE(error_of(path + "#0").find("number them from 1 to 2"), std::string::npos);
  EXPECT_NE(error_of(dir_.string() + "/missing.json#2").find("no such file or folder"),
            std::string::npos);
}

TEST_F(AppendedBenchResults, ATruncatedLineIsTheWholeFilesParseError) {
  std::string cut = detailed_json().dump();
  cut.resize(cut.size() / 2);
  const std::string path = appended("cut.json", cut);
  const std::string e = error_of(path);
  EXPECT_NE(e.find("invalid JSON"), std::string::npos) << e;
  EXPECT_NE(e.find("a result per line"), std::string::npos) << e;
  // A bad key in the second result names that result.
  nlohmann::json bad = detailed_json();
  bad["ttfts"] = "x";
  const std::string second = appended("bad.json", bad.dump());
  try {
    read_vllm_bench_results(second);
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& err) {
    EXPECT_NE(std::string(err.what()).find(second + "#2"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace servesim

namespace servesim {
namespace {

TEST_F(MeasuredRunBadInput, MetadataNamesTheDeploymentAndABadDegreeIsRefused) {
  const std::string path = edited("meta.json", [](nlohmann::json& j) {
    j["tp"] = "2";
    j["pp"] = "1";
    j["gpu"] = "H100-SXM";
    j["version"] = "0.12.0";
    j["rank0"] = "T4x1";  // any other pair is kept out of the run
  });
  const MeasuredRun run = read_measured_run(path);
  EXPECT_EQ(run.tensor_parallel_size, 2);
  EXPECT_EQ(run.pipeline_parallel_size, 1);
  EXPECT_EQ(run.gpu, "H100-SXM");
  EXPECT_EQ(run.engine_version, "0.12.0");
  const RunFolder folder = run_folder_from(run);
  EXPECT_EQ(folder.setup["tp"], 2);
  EXPECT_EQ(folder.setup["gpu"], "H100-SXM");
  const MeasuredRun plain = read_measured_run(data("vllm-bench-detailed.json"));
  EXPECT_EQ(plain.tensor_parallel_size, 0);
  EXPECT_EQ(plain.gpu, "");
  EXPECT_NE(error_of(edited("tp.json", [](nlohmann::json& j) { j["tp"] = "two"; }))
                .find("tp is \"two\", expected a degree >= 1 (--metadata tp=2)"),
            std::string::npos);
  EXPECT_NE(error_of(edited("tp0.json", [](nlohmann::json& j) { j["tensor_parallel_size"] = "0"; }))
                .find("tensor_parallel_size is \"0\""),
            std::string::npos);
}

}  // namespace
}  // namespace servesim
