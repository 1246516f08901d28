// `servesim calibrate serving` as a user runs it: on the recorded published rows, fitting two
// parameters with one run held out — the report, the three files it writes, and that the
// written scenario simulates with the fitted values; and bad input (another model, an unknown
// parameter, no deployment): exit 2 with one line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

namespace servesim::testing {
namespace {

namespace fs = std::filesystem;

const std::string kRows =
    SERVESIM_SOURCE_DIR "/tests/calibration/data/published/qwen3-32b-h100-rows.csv";
const std::string kDeployment = " --model Qwen3-32B --gpu H100 --max-model-len 8192";

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

void expect_one_line_error(const CliResult& r, const std::string& needle) {
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

TEST(CalibrateServingCommand, FitsHoldsOutReportsAndWritesAScenarioThatSimulates) {
  const fs::path out =
      fs::temp_directory_path() / ("servesim_cal_serving_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const CliResult r = run_servesim("calibrate serving --measured " + kRows + kDeployment +
                                   " --fit memory_efficiency,step_overhead_s --holdout 0.34"
                                   " --max-iterations 4 --threads 2 --out " +
                                   out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("calibrate serving: fitted on 2 runs (2 measured values), 1 held out"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("|error| on the held-out runs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("qwen3-32b-h100-rows.csv:4"), std::string::npos) << r.out;

  const nlohmann::json report = read_json(out / "report.json");
  ASSERT_EQ(report["runs"].size(), 3u);
  EXPECT_TRUE(report["runs"][2]["held_out"].get<bool>());
  EXPECT_FALSE(report["runs"][0]["held_out"].get<bool>());
  const double fitted = report["parameters"]["memory_efficiency"]["fitted"].get<double>();
  const nlohmann::json profile = read_json(out / "profile.json");
  EXPECT_EQ(profile["format"], "servesim-serving-profile");
  EXPECT_EQ(profile["model"], "Qwen3-32B");
  EXPECT_EQ(profile["parameters"]["memory_efficiency"].get<double>(), fitted);
  EXPECT_EQ(profile["runs_held_out"].size(), 1u);
  const nlohmann::json scenario = read_json(out / "scenario.json");
  EXPECT_EQ(scenario["cost_model"]["memory_efficiency"].get<double>(), fitted);

  const CliResult sim = run_servesim("simulate " + (out / "scenario.json").string() +
                                     " --set workload.num_requests=4 --json");
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
  fs::remove_all(out);
}

// A fitted round trip is written where simulate reads it, service.network.rtt_s, and printed in
// milliseconds.
TEST(CalibrateServingCommand, AFittedRoundTripIsInTheScenario) {
  const fs::path out =
      fs::temp_directory_path() / ("servesim_cal_rtt_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const CliResult r =
      run_servesim("calibrate serving --measured " + kRows + kDeployment +
                   " --fit rtt_s --holdout 0 --max-iterations 4 --threads 2 --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("rtt_s                  0.00 ms"), std::string::npos) << r.out;
  const double fitted = read_json(out / "report.json")["parameters"]["rtt_s"]["fitted"];
  EXPECT_GE(fitted, 1e-4);  // the search box starts at 0.1 ms
  EXPECT_EQ(read_json(out / "scenario.json")["service"]["network"]["rtt_s"].get<double>(), fitted);
  EXPECT_EQ(read_json(out / "profile.json")["parameters"]["rtt_s"].get<double>(), fitted);
  fs::remove_all(out);
}

// With a start-up log, the runs are simulated with the KV capacity vLLM had: the log's memory
// terms land in the fitted scenario's engine block.
TEST(CalibrateServingCommand, ALogSetsTheMemoryTermsFirst) {
  const fs::path dir =
      fs::temp_directory_path() / ("servesim_cal_log_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string rows = (dir / "rows.csv").string();
  std::ofstream(rows) << "engine,engine_version,model,gpu,isl,osl,concurrency,tp,ttft_ms,tpot_ms\n"
                         "vllm,0.6.4,meta-llama/Llama-3.1-8B-Instruct,rtx_3090,512,32,4,1,90,25\n"
                         "vllm,0.6.4,meta-llama/Llama-3.1-8B-Instruct,rtx_3090,512,32,8,1,150,28\n";
  const CliResult r = run_servesim(
      "calibrate serving --model Llama-3.1-8B --gpu RTX-3090 --max-model-len 20000 "
      "--log " SERVESIM_SOURCE_DIR
      "/tests/calibration/data/vllm-logs/kv02-v0.6.4-llama-3.1-8b-rtx3090.log --measured " +
      rows + " --fit memory_efficiency --holdout 0 --max-iterations 2 --out " +
      (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("31232 fitted"), std::string::npos) << r.out;
  const nlohmann::json scenario = read_json(dir / "out" / "scenario.json");
  EXPECT_EQ(scenario["engine"]["vllm_version"], "0.6");
  EXPECT_TRUE(scenario["engine"].contains("non_torch_memory_gib")) << scenario.dump();
  fs::remove_all(dir);
}

TEST(CalibrateServingCommand, BadInputIsOneLineAndExitTwo) {
  expect_one_line_error(
      run_servesim("calibrate serving --measured " + kRows + " --model Llama-3.1-8B --gpu H100"),
      "the run served model 'Qwen/Qwen3-32B', the scenario deploys 'Llama-3.1-8B'");
  expect_one_line_error(
      run_servesim("calibrate serving --measured " + kRows + kDeployment + " --fit speed"),
      "--fit: unknown parameter 'speed'");
  expect_one_line_error(run_servesim("calibrate serving --measured " + kRows),
                        "name the deployment: a scenario file, or --model and --gpu");
  expect_one_line_error(
      run_servesim("calibrate serving --measured " + kRows + kDeployment + " --holdout 1"),
      "--holdout: must be a fraction in [0, 1)");
  expect_one_line_error(
      run_servesim("calibrate serving --measured " + kRows + kDeployment +
                   " --published-protocol aiperf"),
      "--published-protocol: expected steady, inferencex, aiconfigurator or inferencemax");
}

TEST(CalibrateServingCommand, ThePublishedProtocolDecidesTheRowsTtftAndIsInTheProfile) {
  // The same rows, nothing fitted: issued InferenceX's way (10 x clients requests of varied
  // lengths, the start in the means) their simulated TTFT is not the steady state's, and the
  // profile names the protocol its fit holds for.
  const auto before_ttft = [](const std::string& protocol, const fs::path& out) {
    const CliResult r = run_servesim("calibrate serving --measured " + kRows + kDeployment +
                                     " --published-protocol " + protocol +
                                     " --fit memory_efficiency --holdout 0 --max-iterations 1"
                                     " --out " +
                                     out.string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(read_json(out / "profile.json")["published_protocol"], protocol);
    return read_json(out / "report.json")["runs"][0]["metrics"]["ttft_mean"]["before"]
        .get<double>();
  };
  const fs::path out =
      fs::temp_directory_path() / ("servesim_cal_protocol_" + std::to_string(::getpid()));
  const double steady = before_ttft("steady", out / "steady");
  const double inferencex = before_ttft("inferencex", out / "inferencex");
  EXPECT_GT(std::abs(inferencex / steady - 1), 0.1) << steady << " " << inferencex;
  // aiconfigurator's deployments cap a step at clients + ISL + 1500 tokens, which splits the
  // steady state's cohorts of exact-length prompts.
  const double aiconfigurator = before_ttft("aiconfigurator", out / "aiconfigurator");
  EXPECT_GT(std::abs(aiconfigurator / steady - 1), 0.1) << steady << " " << aiconfigurator;
  fs::remove_all(out);
}

// A row whose means ask more prefill than the GPU's peak gives is named under "warnings" (and
// in report.json); a base scenario that says the benchmark repeated its prompts silences it.
TEST(CalibrateServingCommand, WarnsOfARowThatCannotHaveSentNewPrompts) {
  const fs::path dir =
      fs::temp_directory_path() / ("servesim_cal_impossible_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path rows = dir / "rows.csv";
  std::ofstream(rows) << "engine,engine_version,model,gpu,precision,mode,isl,osl,concurrency,tp,"
                         "pp,ttft_ms,tpot_ms\n"
                         // 32 clients back every 30 + 99 x 3 ms: ~98 prompts of 2,000 a second
                         "vllm,0.12.0,Llama-3.1-8B,h200_sxm,fp8,agg,2000,100,32,1,1,30,3\n"
                         "vllm,0.12.0,Llama-3.1-8B,h200_sxm,fp8,agg,2000,100,2,1,1,40,8\n";
  const std::string command = "calibrate serving --measured " + rows.string() +
                              " --model Llama-3.1-8B --gpu H200 --max-model-len 4096"
                              " --fit step_overhead_s --holdout 0 --max-iterations 1 --threads 2";
  const CliResult warned = run_servesim(command + " --out " + (dir / "warned").string());
  EXPECT_EQ(warned.exit_code, 0) << warned.err;
  EXPECT_NE(
      warned.out.find("\nwarnings\n  - " + rows.string() + ":2: its means imply 97.9 requests/s"),
      std::string::npos)
      << warned.out;
  EXPECT_EQ(warned.out.find(rows.string() + ":3:"), std::string::npos) << warned.out;
  EXPECT_EQ(read_json(dir / "warned" / "report.json")["warnings"].size(), 1u);
  const CliResult told = run_servesim(command + " --set workload.distinct_prompts=100");
  EXPECT_EQ(told.exit_code, 0) << told.err;
  EXPECT_EQ(told.out.find("warnings"), std::string::npos) << told.out;
  fs::remove_all(dir);
}

// --provenance: a published row whose source records no concurrency is neither fitted nor held
// out, and is named under "left out" (and in report.json); a file that does not list a row is
// refused in one line.
TEST(CalibrateServingCommand, LeavesOutARowWhoseSourceRecordsNoConcurrency) {
  const fs::path dir =
      fs::temp_directory_path() / ("servesim_cal_provenance_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path provenance = dir / "provenance.csv";
  std::ofstream(provenance) << "tp,precision,isl,osl,concurrency,recorded_concurrency,upstream_id\n"
                               "2,,1024,128,8,8,run_c8_tp2\n"
                               "4,,1024,128,8,,run_c_tp4\n"
                               "2,,1024,128,16,16,run_c16_tp2\n";
  const std::string command = "calibrate serving --measured " + kRows + kDeployment +
                              " --fit step_overhead_s --holdout 0 --max-iterations 1 --threads 2";
  const CliResult r = run_servesim(command + " --provenance " + provenance.string() + " --out " +
                                   (dir / "out").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("fitted on 2 runs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nleft out of the fit and of the held-out runs\n  - " + kRows +
                       ":3 (run_c_tp4): its source records no concurrency, so its 8 clients are "
                       "not the load it ran at"),
            std::string::npos)
      << r.out;
  const nlohmann::json report = read_json(dir / "out" / "report.json");
  EXPECT_EQ(report["runs"].size(), 2u);
  EXPECT_EQ(report["left_out"].size(), 1u);

  std::ofstream(provenance) << "tp,precision,isl,osl,concurrency,recorded_concurrency,upstream_id\n"
                               "2,,1024,128,8,8,run_c8_tp2\n";
  expect_one_line_error(
      run_servesim(command + " --provenance " + provenance.string()),
      kRows + ":3 (TP 4, 1024/128, 8 clients) has no line in " + provenance.string());
  std::ofstream(provenance) << "tp,precision,isl,osl,concurrency,recorded_concurrency,upstream_id\n"
                               "2,,1024,128,8,,a\n4,,1024,128,8,,b\n2,,1024,128,16,,c\n";
  expect_one_line_error(run_servesim(command + " --provenance " + provenance.string()),
                        "every run is left out by --provenance");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace servesim::testing
