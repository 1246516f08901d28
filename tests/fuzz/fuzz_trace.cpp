// libFuzzer target for one trace format (SERVESIM_FUZZ_TRACE_FORMAT, one binary per format:
// azure, burstgpt, splitwise, mooncake) and for the auto-detection (auto): the input is the
// trace file, read row by row to its end as a trace workload does.
#include "sim/workload/trace_reader.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static servesim::fuzz::ScratchFile file(".trace");
  const std::string& path = file.write(data, size);
  return servesim::fuzz::run_or_reject([&] {
    servesim::TraceOptions options;
    options.format = servesim::trace_format_from_string(SERVESIM_FUZZ_TRACE_FORMAT);
    servesim::TraceReader reader(path, options);
    servesim::TraceRow row;
    while (reader.next(row)) {
    }
  });
}
