#include "models/catalog.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "models/config_error.h"

namespace servesim {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Catalog, BundlesTheModelsAndGpusTheIssueLists) {
  Catalog catalog;
  for (const char* name :
       {"Llama-2-7B", "Llama-2-13B", "Llama-2-70B", "Llama-3.1-8B", "Llama-3.1-70B",
        "Llama-3.1-405B", "Mistral-7B-v0.1", "Mixtral-8x7B", "Qwen2.5-7B", "Qwen2.5-72B",
        "Qwen3-8B", "Qwen3-32B", "Qwen3-235B-A22B", "DeepSeek-V3", "GPT-OSS-20B", "GPT-OSS-120B",
        "TinyLlama-1.1B", "SmolLM2-135M"}) {
    EXPECT_NO_THROW(catalog.resolve_model(name)) << name;
  }
  for (const char* name : {"A10", "L4", "L40S", "A100-40GB", "A100-80GB-SXM", "A100-80GB-PCIe",
                           "H100-SXM", "H100-PCIe", "H100-NVL", "H200", "B200", "RTX-4090"}) {
    const HardwareSpec h = catalog.resolve_gpu(name);
    EXPECT_GT(h.price_per_hour_usd, 0) << name;
    EXPECT_FALSE(h.price_source.empty()) << name;
    EXPECT_GT(h.memory_bandwidth_Bps, 1e11) << name;
  }
}

// The H200 is the H100-SXM's GH100 die with more and faster memory: the same GEMMs reach the
// same fraction of the same peak, so the catalog gives it the H100's fitted compute efficiency
// (docs/cost-model.md), and only its memory differs.
TEST(Catalog, TheH200ComputesLikeTheH100ItsDieIs) {
  Catalog catalog;
  const HardwareSpec h100 = catalog.resolve_gpu("H100-SXM");
  const HardwareSpec h200 = catalog.resolve_gpu("H200");
  EXPECT_EQ(h200.peak_flops(DType::kBf16), h100.peak_flops(DType::kBf16));
  EXPECT_EQ(h200.compute_efficiency, h100.compute_efficiency);
  EXPECT_GT(h200.memory_bandwidth_Bps, h100.memory_bandwidth_Bps);
}

TEST(Catalog, LooksUpByAliasRepoAndCase) {
  Catalog catalog;
  EXPECT_EQ(catalog.resolve_model("llama_2_7b").name, "Llama-2-7B");
  EXPECT_EQ(catalog.resolve_model("meta-llama/Llama-2-7b-hf").name, "Llama-2-7B");
  EXPECT_EQ(catalog.resolve_gpu("a100").name, "A100-80GB-SXM");
  EXPECT_EQ(catalog.resolve_model("Mistral-7B").name, "Mistral-7B-v0.1");
  EXPECT_THROW(catalog.resolve_model("Llama-2"), ConfigError);  // ambiguous prefix
  EXPECT_EQ(catalog.resolve_gpu("H100 SXM5 80GB").name, "H100-SXM");
}

// A served checkpoint keeps its base model's architecture: its id resolves with its variant
// suffixes dropped, in any combination, and an unknown one is the plain lookup's error.
TEST(Catalog, ACheckpointNameResolvesToItsBaseModel) {
  Catalog catalog;
  EXPECT_EQ(catalog.resolve_checkpoint_name("Qwen/Qwen3-32B").name, "Qwen3-32B");
  EXPECT_EQ(catalog.resolve_checkpoint_name("Qwen/Qwen3-235B-A22B-FP8").name, "Qwen3-235B-A22B");
  EXPECT_EQ(catalog.resolve_checkpoint_name("nvidia/Llama-3.1-8B-Instruct-FP8").name,
            "Llama-3.1-8B");
  EXPECT_EQ(catalog.resolve_checkpoint_name("openai/gpt-oss-120b").name, "GPT-OSS-120B");
  const std::string err = error_of([&] { catalog.resolve_checkpoint_name("acme/Foo-7B-FP8"); });
  EXPECT_NE(err.find("unknown model 'acme/Foo-7B-FP8'"), std::string::npos) << err;
}

TEST(Catalog, UnknownNamesSuggestCloseOnes) {
  Catalog catalog;
  const std::string model_err = error_of([&] { catalog.resolve_model("Lama-2-13B"); });
  EXPECT_NE(model_err.find("did you mean 'Llama-2-13B'"), std::string::npos) << model_err;
  const std::string gpu_err = error_of([&] { catalog.resolve_gpu("H2000"); });
  EXPECT_NE(gpu_err.find("'H200'"), std::string::npos) << gpu_err;
}

TEST(Catalog, UserGpuFileLoadsAndMalformedJsonGivesLineAndColumn) {
  const auto dir = std::filesystem::temp_directory_path() / "servesim_catalog_test";
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "my_gpu.json").string();
  std::ofstream(good) << R"({"name": "MyGPU", "memory_gb": 48, "memory_bandwidth_tbs": 1.0,
    "peak_tflops": {"bf16": 200}})";
  EXPECT_EQ(Catalog().resolve_gpu(good).name, "MyGPU");

  const std::string bad = (dir / "bad_gpu.json").string();
  std::ofstream(bad) << "{\n  \"name\": \"x\",\n  \"memory_gb\": ,\n}";
  const std::string err = error_of([&] { Catalog().resolve_gpu(bad); });
  EXPECT_NE(err.find("bad_gpu.json:3:16"), std::string::npos) << err;

  const std::string typo = (dir / "typo_gpu.json").string();
  std::ofstream(typo) << R"({"name": "T", "memory_gb": 48, "memory_bandwith_tbs": 1.0,
    "peak_tflops": {"bf16": 200}})";
  const std::string typo_err = error_of([&] { Catalog().resolve_gpu(typo); });
  EXPECT_NE(typo_err.find("memory_bandwidth_tbs"), std::string::npos) << typo_err;

  EXPECT_NE(
      error_of([&] { Catalog().resolve_gpu((dir / "missing.json").string()); }).find("cannot open"),
      std::string::npos);
}

}  // namespace
}  // namespace servesim
