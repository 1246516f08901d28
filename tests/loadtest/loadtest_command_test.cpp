// `servesim loadtest` end to end against the fake server: the files it writes (the same
// columns and summary keys as `simulate --out`), errors by cause, Ctrl-C, bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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

// A server's probe answers go into summary.json as they came. One that is not JSON is kept as
// text; text that is not UTF-8 (here GET /version's) used to make the summary's JSON dump throw
// once the whole run was over, losing it. Such bytes are written as U+FFFD now.
TEST(LoadtestCommand, AProbeAnswerThatIsNotUtf8DoesNotLoseTheSummary) {
  FakeServerOptions options;
  options.version_body = "vLLM \xff\xfe build";
  FakeOpenAiServer server(options);
  const fs::path out = fresh_dir("not-utf8");
  const auto r = run_servesim("loadtest " + server.url() + kShort + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = read_json(out / "summary.json");
  EXPECT_EQ(j["loadtest"]["version_response"], "vLLM \xef\xbf\xbd\xef\xbf\xbd build");
  EXPECT_GT(j["summary"]["completed"].get<int>(), 0);
  fs::remove_all(out);
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

// A scenario file in the temporary directory: loadtest-tiny's model with `workload` and
// `metrics` blocks of the test's own.
fs::path scenario_file(const std::string& name, const nlohmann::json& workload,
                       const nlohmann::json& metrics = nlohmann::json::object()) {
  const fs::path file = fs::temp_directory_path() /
                        ("servesim_loadtest_" + name + "_" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << nlohmann::json{{"name", name},       {"model", "Llama-100M-bench"},
                                        {"gpu", "L4"},        {"workload", workload},
                                        {"metrics", metrics}, {"seed", 5}}
                             .dump();
  return file;
}

// requests.csv's rows as column name -> value.
std::vector<std::map<std::string, std::string>> csv_rows(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  auto split = [](const std::string& text) {
    std::vector<std::string> cells;
    std::stringstream ss(text);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    return cells;
  };
  const std::vector<std::string> header = split(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = split(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

// --warmup-s on an open loop: 20 requests due every 50 ms; those due before 0.52 s (ids 0 to
// 10) are written to requests.csv but left out of every figure.
TEST(LoadtestCommand, WarmupSLeavesTheEarlyRequestsOutOfTheFigures) {
  FakeOpenAiServer server;
  const fs::path scenario =
      scenario_file("warmup", {{"arrival", {{"type", "constant"}, {"rate_qps", 20}}},
                               {"prompt_tokens", 8},
                               {"output_tokens", 2},
                               {"num_requests", 20}});
  const fs::path all = fresh_dir("warmup_all");
  const fs::path cut = fresh_dir("warmup_cut");
  const std::string run =
      "loadtest " + server.url() + " --scenario " + scenario.string() + " --quiet --json --out ";
  const auto r0 = run_servesim(run + all.string());
  const auto r1 = run_servesim(run + cut.string() + " --warmup-s 0.52");
  ASSERT_EQ(r0.exit_code, 0) << r0.err;
  ASSERT_EQ(r1.exit_code, 0) << r1.err;
  const nlohmann::json s0 = nlohmann::json::parse(r0.out)["summary"];
  const nlohmann::json s1 = nlohmann::json::parse(r1.out)["summary"];
  EXPECT_EQ(s0["requests"], 20);
  EXPECT_EQ(s0["completed"], 20);
  EXPECT_EQ(s0["excluded_warmup"], 0);
  EXPECT_EQ(s1["requests"], 9);
  EXPECT_EQ(s1["completed"], 9);
  EXPECT_EQ(s1["excluded_warmup"], 11);
  EXPECT_EQ(s1["output_tokens"], 18);
  EXPECT_EQ(s1["e2e"]["count"], 9);
  EXPECT_EQ(s1["ttft"]["count"], 9);
  EXPECT_EQ(s1["itl"]["count"], 9);  // one gap per 2-token answer, warm-up gaps dropped too
  EXPECT_EQ(csv_rows(cut / "requests.csv").size(), 20u);  // every request is still a row
  EXPECT_EQ(read_json(cut / "summary.json")["scenario_config"]["metrics"]["warmup_s"], 0.52);
  fs::remove_all(all);
  fs::remove_all(cut);
  fs::remove(scenario);
}

// metrics.step_warmup_s on a stepped closed loop: each step leaves out exactly the requests
// due in its first 0.3 s, as requests.csv's step_index and arrival_s say, and counts the rest;
// the whole-run summary counts them all.
TEST(LoadtestCommand, StepWarmupLeavesEachStepsFirstRequestsOut) {
  FakeServerOptions fo;
  fo.token_delay_s = 0.01;
  FakeOpenAiServer server(fo);
  constexpr double kStepS = 1.0;
  constexpr double kWarmupS = 0.3;
  const fs::path scenario = scenario_file(
      "stepwarmup",
      {{"arrival", {{"type", "stepped"}, {"steps", {1, 2}}, {"step_duration_s", kStepS}}},
       {"prompt_tokens", 8},
       {"output_tokens", 2}},
      {{"step_warmup_s", kWarmupS}});
  const fs::path out = fresh_dir("stepwarmup");
  const auto r = run_servesim("loadtest " + server.url() + " --scenario " + scenario.string() +
                              " --quiet --json --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const auto rows = csv_rows(out / "requests.csv");
  ASSERT_EQ(j["steps"].size(), 2u);
  uint64_t total = 0;
  for (int k = 0; k < 2; ++k) {
    uint64_t in_step = 0;
    uint64_t early = 0;
    for (const auto& row : rows) {
      if (std::stoi(row.at("step_index")) != k) continue;
      ++in_step;
      if (std::stod(row.at("arrival_s")) < k * kStepS + kWarmupS) ++early;
    }
    total += in_step;
    const nlohmann::json& step = j["steps"][k];
    EXPECT_GT(early, 0u) << "step " << k;  // at 10-20 ms a request, several each warm-up
    EXPECT_EQ(step["excluded_warmup"], early) << "step " << k;
    EXPECT_EQ(step["requests"], in_step - early) << "step " << k;
    EXPECT_GT(step["requests"].get<uint64_t>(), 0u) << "step " << k;
    EXPECT_EQ(step["e2e"]["count"], step["completed"]) << "step " << k;
  }
  EXPECT_EQ(total, rows.size());
  EXPECT_EQ(j["summary"]["requests"], rows.size());  // only metrics.warmup_s applies here
  EXPECT_EQ(j["summary"]["excluded_warmup"], 0);
  fs::remove_all(out);
  fs::remove(scenario);
}

// Without --quiet, one progress line a second on stderr: elapsed time, step and its clients,
// requests done, errors, in flight and the p50 TTFT of the requests that ended in that second.
TEST(LoadtestCommand, ProgressLinesOnStderrUnlessQuiet) {
  FakeServerOptions fo;
  fo.token_delay_s = 0.005;
  FakeOpenAiServer server(fo);
  const std::string run = "loadtest " + server.url() + " --scenario " + kScenario +
                          " --set 'workload.arrival.steps=[1,2]'"
                          " --set workload.arrival.step_duration_s=1.5 --set "
                          "workload.output_tokens=2 --set metrics.step_warmup_s=0";
  const auto r = run_servesim(run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::regex line(
      R"(\[ *([0-9]+) s\] step ([12])/2 \(([12]) clients\)  ([0-9]+) done, 0 errors, )"
      R"(([0-9]+) in flight(  p50 TTFT ([0-9]+\.[0-9]) ms)?)");
  std::stringstream err(r.err);
  std::set<int> steps;
  uint64_t last_done = 0;
  int lines = 0;
  int with_ttft = 0;
  for (std::string text; std::getline(err, text);) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(text, m, line)) << "not a progress line: '" << text << "'";
    ++lines;
    const int step = std::stoi(m[2]);
    EXPECT_EQ(std::stoi(m[3]), step) << text;  // step k of [1, 2] runs k clients
    EXPECT_LE(std::stoi(m[5]), step) << text;
    const uint64_t done = std::stoull(m[4]);
    EXPECT_GE(done, last_done) << text;
    last_done = done;
    if (m[6].matched) {  // some request ended since the last line
      ++with_ttft;
      EXPECT_GT(std::stod(m[7]), 0) << text;
    }
    steps.insert(step);
  }
  EXPECT_GE(lines, 2) << r.err;
  EXPECT_GE(with_ttft, 2) << r.err;  // a request ends every few ms: nearly every line has one
  EXPECT_GT(last_done, 0u) << r.err;
  EXPECT_EQ(steps, std::set<int>({1, 2})) << r.err;

  const auto quiet = run_servesim(run + " --quiet");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
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
