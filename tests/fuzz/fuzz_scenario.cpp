// libFuzzer target: a scenario file and its `--set path=value` overrides, parsed as
// load_scenario does. Input layout: the scenario JSON, then optionally NUL-separated
// overrides ("engine.max_num_seqs=8\0parallel.tensor_parallel_size=2"), so one input
// exercises both parsers and their interplay. Models and GPUs resolve against the bundled
// catalog (configs/); relative paths against configs/scenarios/, as for the bundled ones.
#include <string>
#include <vector>

#include "models/json_file.h"
#include "sim/scenario/scenario.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const servesim::Catalog catalog(SERVESIM_SOURCE_DIR "/configs");
  const std::string input = servesim::fuzz::as_text(data, size);
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t nul = input.find('\0', start);
    parts.push_back(input.substr(start, nul == std::string::npos ? nul : nul - start));
    if (nul == std::string::npos) break;
    start = nul + 1;
  }
  return servesim::fuzz::run_or_reject([&] {
    nlohmann::json j = servesim::parse_json_text(parts[0], "scenario.json");
    servesim::apply_overrides(j, {parts.begin() + 1, parts.end()});
    servesim::parse_scenario(j, SERVESIM_SOURCE_DIR "/configs/scenarios", "scenario.json", catalog);
  });
}
