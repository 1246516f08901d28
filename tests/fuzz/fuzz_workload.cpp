// libFuzzer target: a workload file (docs/workloads.md), then the first requests of the
// source it describes, so a distribution or arrival process that parsed but cannot be
// drawn from is found too. Relative paths (empirical CSVs, traces) resolve against seeds/,
// which holds small stand-ins for the files docs/workloads.md's examples name.
#include "models/json_file.h"
#include "sim/workload/workload.h"
#include "tests/fuzz/fuzz_input.h"

namespace {
constexpr int kRequestsDrawn = 64;  // enough to reach a second turn, step or prefix group
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return servesim::fuzz::run_or_reject([&] {
    const nlohmann::json j =
        servesim::parse_json_text(servesim::fuzz::as_text(data, size), "workload.json");
    const servesim::WorkloadSpec spec = servesim::WorkloadSpec::from_json(
        j, SERVESIM_SOURCE_DIR "/tests/fuzz/seeds", "workload.json");
    const auto source = servesim::make_request_source(spec);
    for (int i = 0; i < kRequestsDrawn && source->next_arrival_s(); ++i) {
      const servesim::RequestSpec r = source->pop();
      source->on_request_done(r, r.arrival_s);
    }
  });
}
