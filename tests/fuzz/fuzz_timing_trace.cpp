// libFuzzer target for the per-request timing trace (calibration/measured/timing_trace.h), one
// binary per encoding (SERVESIM_FUZZ_TIMING_TRACE_EXT: ".csv" or ".jsonl"): the input is the trace
// file. Only ConfigError may escape, and a trace that reads must hold together
// (measured_run_check.h): every request has an arrival, in send order from 0, and the summary
// counts every request.
#include <algorithm>

#include "calibration/measured/timing_trace.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/measured_run_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static servesim::fuzz::ScratchFile file(SERVESIM_FUZZ_TIMING_TRACE_EXT);
  const std::string& path = file.write(data, size);
  return servesim::fuzz::run_or_reject([&] {
    const servesim::MeasuredRun run = servesim::read_timing_trace(path);
    servesim::fuzz::check_run(run);
    using servesim::fuzz::expect;
    expect(run.has_arrivals() && run.requests.front().arrival_s == 0,
           "a trace whose first send is not at 0");
    expect(std::is_sorted(run.requests.begin(), run.requests.end(),
                          [](const auto& a, const auto& b) { return a.arrival_s < b.arrival_s; }),
           "requests out of send order");
    expect(run.summary.requests == run.requests.size(), "a summary that misses requests");
  });
}
