// libFuzzer target: a provenance file of published serving runs
// (calibration/measured/run_provenance.h), read, then asked about a run it lists. Only ConfigError
// may escape, and a run the file records at the load it names must read as measured there.
#include "calibration/measured/run_provenance.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static servesim::fuzz::ScratchFile file(".csv");
  const std::string& path = file.write(data, size);
  return servesim::fuzz::run_or_reject([&] {
    const servesim::RunProvenance provenance = servesim::RunProvenance::read_file(path);
    servesim::MeasuredRun run;
    run.source = path;
    run.format = "published";
    run.tensor_parallel_size = 2;
    run.prompt_tokens_per_request = 1024;
    run.output_tokens_per_request = 128;
    run.load.max_concurrency = 8;
    // The run may be missing or recorded at another load (ConfigError); when the file records
    // 8 clients for it, it was measured at the load it names.
    const bool at_named_load = provenance.measured_at_named_load(run);
    (void)provenance.upstream_id(run);
    (void)at_named_load;
  });
}
