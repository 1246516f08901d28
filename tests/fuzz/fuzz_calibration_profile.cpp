// libFuzzer target: a calibration profile (configs/profiles/*.json, written by
// `servesim calibrate fit`), read back and written out again.
#include "models/calibration_profile.h"
#include "models/json_file.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return servesim::fuzz::run_or_reject([&] {
    const nlohmann::json j =
        servesim::parse_json_text(servesim::fuzz::as_text(data, size), "profile.json");
    const servesim::CalibrationProfile p = servesim::profile_from_json(j, "profile.json");
    (void)servesim::profile_to_json(p).dump();
  });
}
