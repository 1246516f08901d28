// libFuzzer target: a `vllm bench serve --save-result` JSON file (either layout) read as
// `calibrate serving` reads it (read_vllm_bench_result). Only ConfigError may escape, and a run
// that reads must hold together (measured_run_check.h), with per-request arrays of one length
// and at most as many failed requests as the file has.
#include "calibration/measured/vllm_bench_result.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/measured_run_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static servesim::fuzz::ScratchFile file(".json");
  const std::string& path = file.write(data, size);
  return servesim::fuzz::run_or_reject([&] {
    const servesim::MeasuredRun run = servesim::read_vllm_bench_result(path);
    servesim::fuzz::check_run(run);
    servesim::fuzz::expect(run.format == "vllm-bench" || run.format == "vllm-bench-legacy",
                           "a format other than the two layouts");
  });
}
