// Import of Hugging Face config.json files, one per architecture family, checked against
// the bundled catalog entry of the same model.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "models/catalog.h"
#include "models/config_error.h"
#include "models/model_spec.h"

namespace servesim {
namespace {

struct HfCase {
  const char* catalog_name;
  const char* config_json;  // the fields of the published config.json that matter
};

const HfCase kCases[] = {
    {"Llama-2-7B", R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
      "hidden_size": 4096, "intermediate_size": 11008, "num_attention_heads": 32,
      "num_hidden_layers": 32, "num_key_value_heads": 32, "vocab_size": 32000,
      "max_position_embeddings": 4096, "rms_norm_eps": 1e-05, "rope_scaling": null,
      "tie_word_embeddings": false, "torch_dtype": "float16"})"},
    {"Llama-3.1-8B", R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
      "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
      "vocab_size": 128256, "max_position_embeddings": 131072, "rope_theta": 500000.0,
      "rope_scaling": {"factor": 8.0, "rope_type": "llama3"}, "torch_dtype": "bfloat16"})"},
    {"Mistral-7B-v0.1", R"({"model_type": "mistral", "hidden_size": 4096,
      "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32,
      "num_key_value_heads": 8, "vocab_size": 32000, "max_position_embeddings": 32768,
      "sliding_window": 4096, "torch_dtype": "bfloat16"})"},
    {"Mixtral-8x7B", R"({"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336,
      "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
      "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000,
      "max_position_embeddings": 32768, "sliding_window": null, "torch_dtype": "bfloat16"})"},
    {"Qwen2.5-7B", R"({"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
      "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4,
      "vocab_size": 152064, "max_position_embeddings": 131072, "sliding_window": 131072,
      "use_sliding_window": false, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})"},
    {"Qwen3-8B", R"({"model_type": "qwen3", "hidden_size": 4096, "intermediate_size": 12288,
      "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8,
      "head_dim": 128, "vocab_size": 151936, "max_position_embeddings": 40960,
      "tie_word_embeddings": false, "attention_bias": false, "torch_dtype": "bfloat16"})"},
    {"Qwen3-235B-A22B", R"({"model_type": "qwen3_moe", "hidden_size": 4096,
      "intermediate_size": 12288, "moe_intermediate_size": 1536, "num_attention_heads": 64,
      "num_hidden_layers": 94, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
      "num_experts_per_tok": 8, "decoder_sparse_step": 1, "mlp_only_layers": [],
      "norm_topk_prob": true, "vocab_size": 151936, "max_position_embeddings": 40960,
      "tie_word_embeddings": false, "torch_dtype": "bfloat16"})"},
    {"DeepSeek-V3", R"({"model_type": "deepseek_v3", "hidden_size": 7168,
      "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_attention_heads": 128,
      "num_hidden_layers": 61, "num_key_value_heads": 128, "n_routed_experts": 256,
      "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
      "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
      "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 129280,
      "max_position_embeddings": 163840, "num_nextn_predict_layers": 1,
      "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]},
      "torch_dtype": "bfloat16"})"},
    {"GPT-OSS-20B", R"({"model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880,
      "num_attention_heads": 64, "num_hidden_layers": 24, "num_key_value_heads": 8,
      "head_dim": 64, "num_local_experts": 32, "num_experts_per_tok": 4,
      "experts_per_token": 4, "sliding_window": 128, "vocab_size": 201088,
      "max_position_embeddings": 131072, "attention_bias": true,
      "layer_types": ["sliding_attention", "full_attention"],
      "quantization_config": {"quant_method": "mxfp4"}, "torch_dtype": "bfloat16"})"},
    {"TinyLlama-1.1B", R"({"model_type": "llama", "hidden_size": 2048, "intermediate_size": 5632,
      "num_attention_heads": 32, "num_hidden_layers": 22, "num_key_value_heads": 4,
      "vocab_size": 32000, "max_position_embeddings": 2048, "tie_word_embeddings": false,
      "torch_dtype": "bfloat16"})"},
    {"SmolLM2-135M", R"({"model_type": "llama", "hidden_size": 576, "intermediate_size": 1536,
      "num_attention_heads": 9, "num_hidden_layers": 30, "num_key_value_heads": 3,
      "vocab_size": 49152, "max_position_embeddings": 8192, "tie_word_embeddings": true,
      "torch_dtype": "bfloat16"})"},
};

TEST(HfImport, EachFamilyMatchesTheCatalogEntry) {
  Catalog catalog;
  for (const HfCase& c : kCases) {
    SCOPED_TRACE(c.catalog_name);
    const ModelSpec imported =
        ModelSpec::from_hf_config(nlohmann::json::parse(c.config_json), "config.json");
    const ModelSpec bundled = catalog.resolve_model(c.catalog_name);
    EXPECT_EQ(imported.total_params(), bundled.total_params());
    EXPECT_EQ(imported.active_params(), bundled.active_params());
    EXPECT_EQ(imported.kv_bytes_per_token(DType::kBf16, 1),
              bundled.kv_bytes_per_token(DType::kBf16, 1));
    EXPECT_EQ(imported.head_dim, bundled.head_dim);
    EXPECT_EQ(imported.sliding_pattern, bundled.sliding_pattern);
    EXPECT_EQ(imported.is_moe(), bundled.is_moe());
    EXPECT_EQ(imported.is_mla(), bundled.is_mla());
    EXPECT_EQ(imported.native_dtype == DType::kFp8, bundled.native_dtype == DType::kFp8);
  }
}

std::string import_error(const char* text) {
  try {
    ModelSpec::from_hf_config(nlohmann::json::parse(text), "config.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(HfImport, UnknownArchitectureNamesTheField) {
  const std::string err = import_error(R"({"model_type": "mamba", "hidden_size": 768})");
  EXPECT_NE(err.find("model_type 'mamba'"), std::string::npos) << err;
  EXPECT_NE(err.find("supported"), std::string::npos) << err;
}

TEST(HfImport, MissingFieldIsNamed) {
  const std::string err = import_error(R"({"model_type": "llama", "hidden_size": 768,
    "num_attention_heads": 12, "vocab_size": 100, "max_position_embeddings": 128})");
  EXPECT_NE(err.find("num_hidden_layers is required"), std::string::npos) << err;
}

TEST(HfImport, WrongTypeIsNamed) {
  const std::string err = import_error(R"({"model_type": "llama", "hidden_size": "big",
    "num_hidden_layers": 2, "num_attention_heads": 12, "vocab_size": 100,
    "max_position_embeddings": 128})");
  EXPECT_NE(err.find("hidden_size"), std::string::npos) << err;
}

// Fuzz finding (fuzz_model_config): a size beyond int (2e10, or 4294967297) was cast to int —
// undefined behaviour for the float, a silent wrap for the integer. Both are errors now; a
// size written as a whole float (4096.0) is still read.
TEST(HfImport, SizeBeyondAnIntIsNamedAndWholeFloatsAreRead) {
  const std::string rest =
      R"(, "num_attention_heads": 12, "vocab_size": 100, "intermediate_size": 3072,
    "max_position_embeddings": 128})";
  for (const std::string layers : {"2e10", "4294967297", "2.5", "-1e300"}) {
    const std::string text =
        R"({"model_type": "llama", "hidden_size": 768, "num_hidden_layers": )" + layers + rest;
    const std::string err = import_error(text.c_str());
    EXPECT_NE(err.find("num_hidden_layers has an unexpected value"), std::string::npos) << err;
  }
  const ModelSpec m = ModelSpec::from_hf_config(nlohmann::json::parse(
                                                    R"({"model_type": "llama", "hidden_size": 768.0,
        "num_hidden_layers": 2)" + rest),
                                                "config.json");
  EXPECT_EQ(m.hidden_size, 768);
}

}  // namespace
}  // namespace servesim
