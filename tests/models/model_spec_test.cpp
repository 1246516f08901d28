#include "models/model_spec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "models/catalog.h"
#include "models/config_error.h"

namespace servesim {
namespace {

struct Expected {
  const char* name;
  double params_total_b;   // billions, shared/reference/model_configs.json "derived"
  double params_active_b;  // billions
  int64_t kv_bytes_per_token_bf16;
};

// Derived figures of the reference catalog (norms, biases and MTP layers ignored there,
// so parameter counts may differ by the tiny norm/bias share and by rounding to 1M).
constexpr Expected kReference[] = {
    {"Llama-2-7B", 6.738, 6.738, 524288},         {"Llama-2-13B", 13.015, 13.015, 819200},
    {"Llama-2-70B", 68.975, 68.975, 327680},      {"Llama-3-8B", 8.030, 8.030, 131072},
    {"Llama-3-70B", 70.552, 70.552, 327680},      {"Llama-3.1-405B", 405.849, 405.849, 516096},
    {"Mistral-7B-v0.1", 7.241, 7.241, 131072},    {"Mixtral-8x7B", 46.703, 12.880, 131072},
    {"Qwen2.5-7B", 7.615, 7.615, 57344},          {"Qwen2.5-72B", 72.704, 72.704, 327680},
    {"Qwen3-8B", 8.190, 8.190, 147456},           {"Qwen3-32B", 32.761, 32.761, 262144},
    {"Qwen3-235B-A22B", 235.093, 22.190, 192512}, {"DeepSeek-V3", 671.025, 37.551, 70272},
    {"GPT-OSS-20B", 20.908, 4.186, 49152},        {"GPT-OSS-120B", 116.789, 5.710, 73728},
    {"TinyLlama-1.1B", 1.100, 1.100, 22528},      {"SmolLM2-135M", 0.134, 0.134, 23040},
    {"SmolLM2-360M", 0.362, 0.362, 40960},
};

TEST(ModelSpec, BundledModelsMatchReferenceCountsAndKvBytes) {
  Catalog catalog;
  for (const Expected& e : kReference) {
    SCOPED_TRACE(e.name);
    const ModelSpec m = catalog.resolve_model(e.name);
    EXPECT_NEAR(static_cast<double>(m.total_params()) / 1e9, e.params_total_b,
                std::max(e.params_total_b * 0.003, 0.0006));
    EXPECT_NEAR(static_cast<double>(m.active_params()) / 1e9, e.params_active_b,
                std::max(e.params_active_b * 0.003, 0.0006));
    EXPECT_DOUBLE_EQ(m.kv_bytes_per_token(DType::kBf16, 1),
                     static_cast<double>(e.kv_bytes_per_token_bf16));
  }
}

TEST(ModelSpec, Llama2_7bKvIsHalfAMebibytePerToken) {
  const ModelSpec m = Catalog().resolve_model("Llama-2-7B");
  // 2 (K and V) x 32 layers x 4096 values x 2 bytes = 512 KiB; 2,048 tokens = 1 GiB.
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token(DType::kBf16, 1), 512.0 * 1024);
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token(DType::kBf16, 1) * 2048, 1024.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token(DType::kFp8, 1), 256.0 * 1024);
  // 32 heads split over 4 ranks: a quarter per rank.
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token(DType::kBf16, 4), 128.0 * 1024);
}

TEST(ModelSpec, KvHeadsAreReplicatedWhenTpExceedsThem) {
  const ModelSpec m = Catalog().resolve_model("Llama-2-70B");  // 8 KV heads
  EXPECT_EQ(m.kv_heads_per_rank(1), 8);
  EXPECT_EQ(m.kv_heads_per_rank(8), 1);
  EXPECT_EQ(m.kv_heads_per_rank(16), 1);
  // 2 x 80 layers x 1 head x 128 x 2 B at TP 8 and at TP 16 alike.
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token(DType::kBf16, 8), 2.0 * 80 * 128 * 2);
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token(DType::kBf16, 16), 2.0 * 80 * 128 * 2);
}

TEST(ModelSpec, MlaCachesOneLatentNotSplitByTp) {
  const ModelSpec m = Catalog().resolve_model("DeepSeek-V3");
  ASSERT_TRUE(m.is_mla());
  // 61 layers x (512 + 64) x 2 bytes, the same on every TP rank.
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token(DType::kBf16, 1), 61.0 * 576 * 2);
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token(DType::kBf16, 8), 61.0 * 576 * 2);
}

TEST(ModelSpec, GptOssAlternatesSlidingLayers) {
  const ModelSpec m = Catalog().resolve_model("GPT-OSS-20B");
  EXPECT_TRUE(m.layer_is_sliding(0));
  EXPECT_FALSE(m.layer_is_sliding(1));
  EXPECT_EQ(m.num_sliding_layers(), 12);
  EXPECT_EQ(m.sliding_window, 128);
  ASSERT_TRUE(m.native_expert_dtype.has_value());
  EXPECT_EQ(*m.native_expert_dtype, DType::kMxfp4);
}

TEST(ModelSpec, MoeActiveParamsCountTopKAndSharedExperts) {
  const ModelSpec m = Catalog().resolve_model("Mixtral-8x7B");
  const int64_t expert = 3LL * 4096 * 14336;
  const int64_t router = 4096LL * 8;
  EXPECT_EQ(m.ffn_params(0), 8 * expert + router);
  EXPECT_EQ(m.ffn_active_params(0), 2 * expert + router);
}

TEST(ModelSpec, JsonRoundTrips) {
  const ModelSpec m = Catalog().resolve_model("DeepSeek-V3");
  const ModelSpec back = ModelSpec::from_json(m.to_json(), "roundtrip");
  EXPECT_EQ(back.total_params(), m.total_params());
  EXPECT_EQ(back.active_params(), m.active_params());
  EXPECT_EQ(back.kv_bytes_per_token(DType::kBf16, 1), m.kv_bytes_per_token(DType::kBf16, 1));
}

nlohmann::json minimal() {
  return {{"name", "tiny"},    {"hidden_size", 64},
          {"num_layers", 2},   {"num_heads", 4},
          {"num_kv_heads", 2}, {"intermediate_size", 128},
          {"vocab_size", 100}, {"max_position_embeddings", 256}};
}

std::string error_of(const nlohmann::json& j) {
  try {
    ModelSpec::from_json(j, "tiny.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ModelSpec, MisspeltKeyIsAnErrorWithASuggestion) {
  nlohmann::json j = minimal();
  j["num_kv_head"] = 2;
  const std::string err = error_of(j);
  EXPECT_NE(err.find("unknown key 'num_kv_head'"), std::string::npos) << err;
  EXPECT_NE(err.find("did you mean 'num_kv_heads'"), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos);
}

// Fuzz finding (fuzz_model_config): JsonObjectReader took an integer beyond int by wrapping it
// (4294967297 read as 1).
TEST(ModelSpec, IntegerBeyondItsTypeIsAnErrorNotAWrap) {
  nlohmann::json j = minimal();
  j["num_layers"] = 4294967297LL;
  const std::string err = error_of(j);
  EXPECT_NE(err.find("num_layers has an out-of-range value 4294967297"), std::string::npos) << err;
  j["num_layers"] = -4294967297LL;
  EXPECT_NE(error_of(j).find("num_layers has an out-of-range value"), std::string::npos);
}

TEST(ModelSpec, BadShapesAreRefusedNamingTheField) {
  nlohmann::json j = minimal();
  j["num_kv_heads"] = 3;
  EXPECT_NE(error_of(j).find("num_kv_heads"), std::string::npos);
  j = minimal();
  j["hidden_size"] = -1;
  EXPECT_NE(error_of(j).find("hidden_size"), std::string::npos);
  j = minimal();
  j["vocab_size"] = "many";
  EXPECT_NE(error_of(j).find("vocab_size"), std::string::npos);
  j = minimal();
  j.erase("num_layers");
  EXPECT_NE(error_of(j).find("num_layers is required"), std::string::npos);
  j = minimal();
  j["moe"] = {{"num_experts", 4}, {"experts_per_token", 8}, {"expert_intermediate_size", 32}};
  EXPECT_NE(error_of(j).find("experts_per_token"), std::string::npos);
  EXPECT_EQ(error_of(minimal()), "");
}

}  // namespace
}  // namespace servesim
