// `servesim loadtest` end to end against the fake server: the files it writes (the same
// columns and summary keys as `simulate --out`), errors by cause, Ctrl-C, bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "fake_server_runner.h"
#include "tests/cli/cli_runner.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;
using testing::FakeOpenAiServer;
using testing::FakeServerOptions;
using testing::run_servesim;

const std::string kScenario =
    std::string(SERVESIM_SOURCE_DIR) + "/configs/scenarios/loadtest-tiny.json";
// Two half-second steps instead of three of 8 s.
const std::string kShort =
    " --scenario " + kScenario +
    " --set 'workload.arrival.steps=[1,2]' --set workload.arrival.step_duration_s=0.5"
    " --set metrics.step_warmup_s=0 --quiet";

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("servesim_loadtest_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string read_all(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::json read_json(const fs::path& file) {
  return nlohmann::json::parse(read_all(file));
}

TEST(LoadtestCommand, WritesSimulatesFilesAndItsOwn) {
  FakeOpenAiServer server;
  const fs::path out = fresh_dir("files");
  const fs::path sim = fresh_dir("sim");
  const auto r = run_servesim("loadtest " + server.url() + kShort + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("per step: 2 steps of"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("knee:"), std::string::npos);
  EXPECT_NE(r.out.find("client: the load generator"), std::string::npos);
  EXPECT_NE(r.out.find("\n  why\n  - "), std::string::npos) << r.out;
  ASSERT_EQ(run_servesim("simulate " + kScenario + " --out " + sim.string()).exit_code, 0);

  for (const char* file : {"requests.csv", "timeseries.csv"}) {
    EXPECT_EQ(first_line(out / file), first_line(sim / file)) << file;
  }
  const nlohmann::json j = read_json(out / "summary.json");
  const nlohmann::json s = read_json(sim / "summary.json");
  for (const auto& [key, value] : s["summary"].items())
    EXPECT_TRUE(j["summary"].contains(key)) << key;
  ASSERT_EQ(j["steps"].size(), 2u);
  EXPECT_EQ(j["steps"][1]["clients"], 2);
  EXPECT_EQ(j["partial"], false);
  EXPECT_EQ(j["model"], "fake-model");
  EXPECT_EQ(j["scenario"], "loadtest-tiny");
  EXPECT_EQ(j["loadtest"]["url"], server.url());
  EXPECT_EQ(j["loadtest"]["models_response"]["data"][0]["id"], "fake-model");
  EXPECT_EQ(j["loadtest"]["version_response"]["version"], "fake-1");
  EXPECT_EQ(j["loadtest"]["timeseries_source"], "server /metrics");
  EXPECT_FALSE(j["loadtest"]["client_host"].get<std::string>().empty());
  EXPECT_EQ(j["scenario_config"]["workload"]["arrival"]["steps"], nlohmann::json({1, 2}));
  EXPECT_GT(j["summary"]["completed"].get<int>(), 0);
  ASSERT_FALSE(j["diagnosis"].empty());
  EXPECT_TRUE(j["diagnosis"][0]["code"].is_string());
  EXPECT_EQ(first_line(out / "errors.csv"), "id,step_index,arrival_s,http_status,cause,detail");
  EXPECT_NE(read_all(out / "server_metrics.csv").find("vllm:num_requests_running"),
            std::string::npos);
  // The setup record, in a simulation's shape where they overlap, so compare can say why
  // the two runs differ: here the load test's --set steps.
  EXPECT_EQ(j["setup"]["model"]["name"], "fake-model");
  EXPECT_EQ(j["setup"]["server_version"], "fake-1");
  EXPECT_EQ(j["setup"]["workload"]["arrival"]["steps"], nlohmann::json({1, 2}));
  EXPECT_EQ(j["setup"]["seed"], s["setup"]["seed"]);
  EXPECT_EQ(j["setup"]["url"], server.url());
  const auto c = run_servesim("compare " + sim.string() + " " + out.string());
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("setup against the first run:"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("workload.arrival.steps [1,2,4] → [1,2]"), std::string::npos) << c.out;
  fs::remove_all(out);
  fs::remove_all(sim);
}

TEST(LoadtestCommand, FailedRequestsAreResultsCountedByCause) {
  FakeServerOptions fo;
  fo.status = {{0, 503}};
  FakeOpenAiServer server(fo);
  const fs::path out = fresh_dir("errors");
  const auto r =
      run_servesim("loadtest " + server.url() + kShort + " --out " + out.string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["loadtest"]["errors"]["http_status"], 1);
  EXPECT_EQ(j["loadtest"]["http_status"]["503"], 1);
  EXPECT_NE(read_all(out / "errors.csv").find("0,0,0,503,http_status,\"HTTP 503"),
            std::string::npos);
  fs::remove_all(out);
}

TEST(LoadtestCommand, CtrlCWritesThePartialRun) {
  FakeServerOptions fo;
  fo.token_delay_s = 0.02;
  FakeOpenAiServer server(fo);
  const fs::path out = fresh_dir("sigint");
  // 30 s of load; SIGINT after 1.5 s. --preserve-status: servesim's own exit status.
  const auto r = run_servesim("loadtest " + server.url() + " --scenario " + kScenario +
                              " --set 'workload.arrival.steps=[2]' --set "
                              "workload.arrival.step_duration_s=30 --quiet --out " +
                              out.string() + " & pid=$!; sleep 1.5; kill -INT $pid; wait $pid");
  EXPECT_EQ(r.exit_code, 130) << r.err;
  const nlohmann::json j = read_json(out / "summary.json");
  EXPECT_EQ(j["partial"], true);
  EXPECT_EQ(j["loadtest"]["stop_reason"], "interrupted");
  EXPECT_GT(j["summary"]["completed"].get<int>(), 0);
  EXPECT_LT(j["loadtest"]["wall_s"].get<double>(), 20);
  fs::remove_all(out);
}

TEST(LoadtestCommand, BadInputIsOneLine) {
  struct Case {
    std::string args;
    std::string says;
  };
  for (const Case& c :
       {Case{"loadtest https://127.0.0.1:1 --scenario " + kScenario, "https is not supported"},
        Case{"loadtest http://127.0.0.1:1 --scenario " + kScenario + " --model m --endpoint /v1/x",
             "--endpoint"},
        Case{"loadtest http://127.0.0.1:1 --scenario " + kScenario + " --model m --timeout-s 0",
             "--timeout-s"},
        Case{"loadtest http://127.0.0.1:1 --scenario " + kScenario + " --max-error-rate 2",
             "--max-error-rate"}}) {
    const auto r = run_servesim(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace servesim
