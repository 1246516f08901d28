// libFuzzer target: a .safetensors file (8-byte header length, JSON header, data), opened
// and every tensor read out as fp32, as the engine loads weights.
#include "engine/runtime/safetensors_file.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static servesim::fuzz::ScratchFile file(".safetensors");
  const std::string& path = file.write(data, size);
  return servesim::fuzz::run_or_reject([&] {
    const servesim::SafetensorsFile st(path);
    for (const auto& [name, tensor] : st.tensors()) (void)st.read_fp32(name);
  });
}
