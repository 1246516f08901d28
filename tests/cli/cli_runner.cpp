#include "cli_runner.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace servesim::testing {

CliResult run_servesim(const std::string& args, int timeout_s) {
  return run_command(std::string(SERVESIM_BIN) + " " + args, timeout_s);
}

CliResult run_command(const std::string& line, int timeout_s) {
  static int counter = 0;
  const std::string err_path =
      (std::filesystem::temp_directory_path() /
       ("servesim_cli_err_" + std::to_string(::getpid()) + "_" + std::to_string(counter++)))
          .string();
  const std::string bound =
      timeout_s > 0 ? "timeout -k 5 " + std::to_string(timeout_s) + " " : std::string();
  const std::string command = bound + line + " 2>" + err_path;
  CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    result.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  std::stringstream ss;
  ss << err.rdbuf();
  result.err = ss.str();
  std::filesystem::remove(err_path);
  return result;
}

}  // namespace servesim::testing
