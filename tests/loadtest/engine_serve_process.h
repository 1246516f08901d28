// EngineServeProcess: `servesim engine serve` on 127.0.0.1 with an ephemeral port (--port 0),
// in a child process, for tests that drive it over real HTTP; it is stopped (SIGTERM, then
// reaped) when the object goes. wait_for_url() reads the port the server announces on stderr.
// Header-only test helper; needs SERVESIM_BIN defined by the test target. Not thread-safe.
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

extern char** environ;

namespace servesim::testing {

class EngineServeProcess {
 public:
  // `args`: engine serve's options after the host and port, e.g. "--model m.json --max-num-seqs 8".
  explicit EngineServeProcess(const std::string& args) {
    log_ = std::filesystem::temp_directory_path() /
           ("servesim_engine_serve_" + std::to_string(::getpid()) + "_" +
            std::to_string(next_id()) + ".log");
    // exec: the shell becomes servesim, so the pid is the server's.
    const std::string command = "exec " + std::string(SERVESIM_BIN) +
                                " engine serve --host 127.0.0.1 --port 0 " + args + " 2>" +
                                log_.string();
    const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
    if (posix_spawn(&pid_, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) != 0)
      pid_ = -1;
  }
  ~EngineServeProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    std::filesystem::remove(log_);
  }
  EngineServeProcess(const EngineServeProcess&) = delete;
  EngineServeProcess& operator=(const EngineServeProcess&) = delete;

  // The URL it listens on, once it says so (empty after 120 s or if it exited).
  std::string wait_for_url() const {
    const std::regex listening("listening on (http://127\\.0\\.0\\.1:[0-9]+)");
    for (int i = 0; i < 1200 && pid_ > 0; ++i) {
      const std::string text = log();
      std::smatch m;
      if (std::regex_search(text, m, listening)) return m[1];
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return "";
  }

  // What the server wrote on stderr so far.
  std::string log() const {
    std::ifstream in(log_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  static int next_id() {
    static int id = 0;
    return id++;
  }

  pid_t pid_ = -1;
  std::filesystem::path log_;
};

}  // namespace servesim::testing
