// `servesim loadtest` against `servesim engine serve` on the serve tests' tiny CPU model
// (tests/serve/data/tiny-serve-model.json, answers in microseconds): the two halves of
// issue #17 together — a short stepped closed-loop run over loopback, every request answered
// with the asked output length, the server's /metrics in the time series.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "tests/cli/cli_runner.h"

extern char** environ;

namespace servesim {
namespace {

namespace fs = std::filesystem;

const std::string kTinyModel =
    std::string(SERVESIM_SOURCE_DIR) + "/tests/serve/data/tiny-serve-model.json";

// `servesim engine serve` on 127.0.0.1, port 0, in a child process; stopped on destruction.
class EngineServeProcess {
 public:
  EngineServeProcess() {
    log_ = fs::temp_directory_path() /
           ("servesim_engine_serve_" + std::to_string(::getpid()) + ".log");
    const std::string command = std::string(SERVESIM_BIN) + " engine serve --model " + kTinyModel +
                                " --host 127.0.0.1 --port 0"
                                " --max-model-len 512 --max-num-seqs 8 2>" +
                                log_.string();
    const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
    // exec: the shell becomes servesim, so the pid is the server's.
    const std::string exec_command = "exec " + command;
    argv[2] = exec_command.c_str();
    if (posix_spawn(&pid_, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) != 0)
      pid_ = -1;
  }
  ~EngineServeProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    fs::remove(log_);
  }

  // The URL it listens on, once it says so (empty after 120 s or if it exited).
  std::string wait_for_url() const {
    const std::regex listening("listening on (http://127\\.0\\.0\\.1:[0-9]+)");
    for (int i = 0; i < 1200 && pid_ > 0; ++i) {
      std::ifstream in(log_);
      std::stringstream ss;
      ss << in.rdbuf();
      const std::string text = ss.str();
      std::smatch m;
      if (std::regex_search(text, m, listening)) return m[1];
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return "";
  }

 private:
  pid_t pid_ = -1;
  fs::path log_;
};

TEST(EngineServeLoadtest, SteppedClosedLoopOverLoopback) {
  EngineServeProcess server;
  const std::string url = server.wait_for_url();
  ASSERT_FALSE(url.empty()) << "engine serve did not start";
  const fs::path out = fs::temp_directory_path() / ("servesim_e2e_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const auto r = testing::run_servesim(
      "loadtest " + url + " --scenario " + SERVESIM_SOURCE_DIR +
      "/configs/scenarios/loadtest-tiny.json --set model=" + kTinyModel +
      " --set 'workload.arrival.steps=[1,2]'"
      " --set workload.arrival.step_duration_s=1.5 --set workload.output_tokens=8"
      " --set metrics.step_warmup_s=0 --quiet --json --out " +
      out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], j["loadtest"]["models_response"]["data"][0]["id"]);  // GET /v1/models
  EXPECT_EQ(j["partial"], false);
  EXPECT_GT(j["summary"]["completed"].get<int>(), 0);
  EXPECT_EQ(j["summary"]["rejected"], 0);
  EXPECT_EQ(j["summary"]["timed_out"], 0);
  EXPECT_EQ(j["summary"]["output_tokens"].get<int>(), 8 * j["summary"]["completed"].get<int>());
  EXPECT_EQ(j["loadtest"]["output_length_mismatch"], 0);
  ASSERT_EQ(j["steps"].size(), 2u);
  EXPECT_GT(j["steps"][1]["completed"].get<int>(), 0);
  EXPECT_EQ(j["loadtest"]["timeseries_source"], "server /metrics");
  EXPECT_GT(j["loadtest"]["scrapes"].get<int>(), 0);
  fs::remove_all(out);
}

}  // namespace
}  // namespace servesim
