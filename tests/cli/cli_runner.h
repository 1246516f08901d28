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

// `args` is appended to the binary path as written (shell quoting is the caller's).
CliResult run_servesim(const std::string& args);

}  // namespace servesim::testing
