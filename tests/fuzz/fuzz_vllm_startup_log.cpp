// libFuzzer target: a vLLM start-up log (calibration/measured/vllm_startup_log.h), parsed line by
// line as `servesim memory --from-log` parses it. Only ConfigError may escape, and a log that
// parses must hold together (startup_log_check.h).
#include <sstream>

#include "calibration/measured/vllm_startup_log.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/startup_log_check.h"

// The parser's line patterns (std::regex, slow to build under the sanitizers) are built once
// here, before libFuzzer times the first input.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::istringstream empty;
  servesim::fuzz::run_or_reject([&] { servesim::VllmStartupLog::parse(empty, "warm-up"); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return servesim::fuzz::run_or_reject([&] {
    std::istringstream in(servesim::fuzz::as_text(data, size));
    servesim::fuzz::check_startup_log(servesim::VllmStartupLog::parse(in, "vllm.log"));
  });
}
