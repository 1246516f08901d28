// engine/runtime/backend.h: parsing, the CPU backend's weights, runners and ceilings, and the
// CUDA backend's one-line errors on a machine without a GPU (or in a build without CUDA).
#include "engine/runtime/backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "engine/runtime/engine.h"
#include "models/config_error.h"
#include "tests/engine/tiny_model.h"

namespace servesim {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::test_prompt;
using ::testing::ThrowsMessage;
using testing::tiny_model_spec;
using testing::tiny_scheduler_config;

std::string mapped_files() {
  std::ifstream maps("/proc/self/maps");
  return {std::istreambuf_iterator<char>(maps), std::istreambuf_iterator<char>()};
}

// The greedy tokens of one request served to completion.
std::vector<int32_t> generate(Engine& engine) {
  std::vector<int32_t> tokens;
  engine.set_token_callback([&](uint64_t, int32_t t) { tokens.push_back(t); });
  Request r;
  r.id = 1;
  r.prompt_token_ids = test_prompt(11);
  r.max_output_tokens = 6;
  EXPECT_TRUE(engine.add_request(std::move(r)));
  while (engine.has_unfinished()) engine.step();
  return tokens;
}

TEST(Backend, ParsesItsTwoNamesAndRefusesOthersInOneLine) {
  EXPECT_EQ(parse_backend("cpu"), Backend::kCpu);
  EXPECT_EQ(parse_backend("cuda"), Backend::kCuda);
  for (Backend b : {Backend::kCpu, Backend::kCuda}) EXPECT_EQ(parse_backend(backend_name(b)), b);
  for (const char* bad : {"", "CPU", "gpu", "cuda "}) {
    EXPECT_THAT([&] { parse_backend(bad); },
                ThrowsMessage<ConfigError>(HasSubstr("': expected cpu or cuda")))
        << bad;
  }
  EXPECT_THAT([] { parse_backend("tpu"); },
              ThrowsMessage<ConfigError>("--backend 'tpu': expected cpu or cuda"));
}

TEST(Backend, StoresFp32OnTheCpuAndBf16OnCuda) {
  EXPECT_EQ(backend_dtype(Backend::kCpu), DType::kFp32);
  EXPECT_EQ(backend_dtype(Backend::kCuda), DType::kBf16);
}

TEST(Backend, TheCpuIsAlwaysThereWithANameAndItsKernelsIsa) {
  EXPECT_NO_THROW(require_backend(Backend::kCpu));
  EXPECT_FALSE(device_name(Backend::kCpu).empty());
  EXPECT_THAT(cpu_kernels_summary(), StartsWith(cpu_kernels_isa()));
}

// load_weights(kCpu) is Weights::random behind the shared handle: the same seed serves the same
// tokens as an Engine over host weights, and two runners share one copy.
TEST(Backend, CpuWeightsServeWhatHostWeightsServe) {
  const ModelSpec spec = tiny_model_spec();
  const std::shared_ptr<const BackendWeights> shared = load_weights(Backend::kCpu, spec, {}, 3);
  const Weights host = Weights::random(spec, 3);
  EXPECT_EQ(shared->spec().name, spec.name);
  EXPECT_EQ(shared->num_params(), host.num_params());
  EXPECT_EQ(shared->bytes_read_per_step(), host.bytes_read_per_step());

  const EngineOptions options{tiny_scheduler_config(), 1, false};
  Engine from_host(host, options);
  Engine first(*shared, options);
  Engine second(*shared, options);
  const std::vector<int32_t> expected = generate(from_host);
  ASSERT_EQ(expected.size(), 6u);
  EXPECT_EQ(generate(first), expected);
  EXPECT_EQ(generate(second), expected);
}

// A runner keeps its weights: the handle it was built from may go first.
TEST(Backend, ARunnerOutlivesTheHandleOfItsWeights) {
  std::unique_ptr<Runner> runner = load_weights(Backend::kCpu, tiny_model_spec(), {}, 3)
                                       ->make_runner({.num_blocks = 200, .block_size = 4});
  Engine engine(std::move(runner), EngineOptions{tiny_scheduler_config(), 1, false});
  EXPECT_EQ(generate(engine).size(), 6u);
}

TEST(Backend, BadWeightsOrRunnerOptionsAreOneLineErrors) {
  ModelSpec qk_norm = tiny_model_spec();
  qk_norm.qk_norm = true;
  EXPECT_THROW(load_weights(Backend::kCpu, qk_norm, {}, 0), ConfigError);
  EXPECT_THAT(
      [] { load_weights(Backend::kCpu, tiny_model_spec(), {"/nonexistent.safetensors"}, 0); },
      ThrowsMessage<ConfigError>(HasSubstr("/nonexistent.safetensors")));
  const auto weights = load_weights(Backend::kCpu, tiny_model_spec(), {}, 0);
  EXPECT_THAT([&] { weights->make_runner({.num_blocks = 1}); },
              ThrowsMessage<ConfigError>(HasSubstr("at least 2 blocks")));
}

TEST(Backend, MeasuresTheCpuCeilings) {
  const DeviceCeilings c = measure_ceilings(
      Backend::kCpu,
      {.read_bytes = int64_t{1} << 20, .read_repeats = 1, .gemm_size = 32, .gemm_repeats = 1});
  EXPECT_GT(c.read_bandwidth_Bps, 0);
  EXPECT_GT(c.gemm_flops, 0);
}

// Without a GPU (CI) or without the CUDA build, every CUDA entry point gives the same one
// line; where a GPU is present there is nothing to check here.
TEST(Backend, CudaWithoutABuildOrADeviceIsOneLine) {
  try {
    require_backend(Backend::kCuda);
    GTEST_SKIP() << "a CUDA device is usable";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, StartsWith("--backend cuda: "));
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_THAT(what, HasSubstr(cuda_backend_built() ? "no CUDA device found"
                                                     : "this build has no CUDA backend"));
    EXPECT_THAT([] { load_weights(Backend::kCuda, tiny_model_spec(), {}, 0); },
                ThrowsMessage<ConfigError>(what));
    EXPECT_THAT([] { measure_ceilings(Backend::kCuda, {}); }, ThrowsMessage<ConfigError>(what));
    EXPECT_THAT(
        [] {
          Engine(Weights::random(tiny_model_spec(), 0),
                 EngineOptions{tiny_scheduler_config(), 1, false, Backend::kCuda});
        },
        ThrowsMessage<ConfigError>(what));
  }
}

// The engine links no CUDA library: the CUDA runtime and cuBLAS are mapped only once the CUDA
// module has been opened, by a CUDA call (which other tests of this process may have made).
TEST(Backend, NoCudaLibraryIsMappedBeforeTheCudaModuleIsOpened) {
  const std::string before = mapped_files();
  if (before.find("servesim_cuda_backend") == std::string::npos) {
    EXPECT_EQ(before.find("libcublas"), std::string::npos);
    EXPECT_EQ(before.find("libcudart"), std::string::npos);
  }
  if (!cuda_backend_built()) return;
  try {
    require_backend(Backend::kCuda);
  } catch (const ConfigError&) {
    // No device: the module was still opened to ask.
  }
  const std::string after = mapped_files();
  EXPECT_NE(after.find("servesim_cuda_backend"), std::string::npos);
  EXPECT_NE(after.find("libcublas"), std::string::npos);
}

}  // namespace
}  // namespace servesim
