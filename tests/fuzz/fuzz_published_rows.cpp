// libFuzzer target: a CSV of published serving runs
// (calibration/measured/published_serving_rows.h), first told apart as `calibrate serving` does
// (is_published_serving_rows), then read. Only ConfigError may escape, and every row read must be a
// run the fitter can replay: TP, PP and concurrency >= 1, lengths >= 1, mean TTFT and TPOT finite
// and > 0 (measured_run_check.h).
#include <cmath>

#include "calibration/measured/published_serving_rows.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/measured_run_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static servesim::fuzz::ScratchFile file(".csv");
  const std::string& path = file.write(data, size);
  return servesim::fuzz::run_or_reject([&] {
    (void)servesim::is_published_serving_rows(path);
    using servesim::fuzz::expect;
    for (const servesim::MeasuredRun& run : servesim::read_published_serving_rows(path)) {
      servesim::fuzz::check_run(run);
      expect(run.tensor_parallel_size >= 1 && run.pipeline_parallel_size >= 0 &&
                 run.load.max_concurrency && *run.load.max_concurrency >= 1,
             "a row with TP, PP or concurrency out of range");
      expect(run.prompt_tokens_per_request >= 1 && run.output_tokens_per_request >= 1,
             "a row with a length < 1");
      for (double mean_s : {run.summary.ttft.mean_s, run.summary.tpot.mean_s}) {
        expect(std::isfinite(mean_s) && mean_s > 0, "a row whose mean TTFT or TPOT is not > 0");
      }
    }
  });
}
