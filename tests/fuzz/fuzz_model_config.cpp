// libFuzzer target: a model description, servesim's schema or a Hugging Face config.json
// (told apart by model_type / architectures, as Catalog::load_model_file does), then the
// checks every model passes before use.
#include "models/json_file.h"
#include "models/model_spec.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return servesim::fuzz::run_or_reject([&] {
    const nlohmann::json j =
        servesim::parse_json_text(servesim::fuzz::as_text(data, size), "config.json");
    const bool hf = j.is_object() && (j.contains("model_type") || j.contains("architectures"));
    const servesim::ModelSpec m = hf ? servesim::ModelSpec::from_hf_config(j, "config.json")
                                     : servesim::ModelSpec::from_json(j, "config.json");
    m.validate();
    // Sizes derived from a model that passed validate() must not overflow either.
    (void)m.total_params();
    (void)m.active_params();
    (void)m.kv_bytes_per_token(m.native_dtype, 1);
    (void)m.to_json().dump();
  });
}
