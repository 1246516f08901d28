// libFuzzer target: a GPU description (configs/hardware/*.json schema), parsed as
// Catalog::load_gpu_file does.
#include "models/hardware_spec.h"
#include "models/json_file.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return servesim::fuzz::run_or_reject([&] {
    const nlohmann::json j =
        servesim::parse_json_text(servesim::fuzz::as_text(data, size), "gpu.json");
    servesim::HardwareSpec::from_json(j, "gpu.json");
  });
}
