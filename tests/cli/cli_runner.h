// Runs the servesim binary built alongside the tests and captures what it prints.
// Test-only helper; not thread-safe (uses popen and a temporary file).
#pragma once

#include <string>

namespace servesim::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// `args` is appended to the binary path as written (shell quoting is the caller's). With
// `timeout_s` > 0 the run is killed past that many seconds (coreutils timeout: exit code 124),
// for commands that must end on their own, such as a server refusing its flags.
CliResult run_servesim(const std::string& args, int timeout_s = 0);

// Runs one command with its arguments (a project script, say; `env K=V ...` for variables),
// quoted by the caller, as run_servesim runs the binary.
CliResult run_command(const std::string& command, int timeout_s = 0);

}  // namespace servesim::testing
