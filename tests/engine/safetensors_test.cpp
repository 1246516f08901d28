#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/runtime/model_runner.h"
#include "engine/runtime/safetensors_file.h"
#include "engine/runtime/weights.h"
#include "models/config_error.h"
#include "tests/engine/tiny_model.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

uint16_t float_to_bf16_truncate(float f) {
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(f) >> 16);
}

// Writes a safetensors file. Each tensor: name, dtype ("F32" / "BF16"), shape, fp32 values
// (BF16 stores them truncated).
struct TensorToWrite {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  const std::vector<float>* values;
};

std::string write_safetensors(const std::string& file, const std::vector<TensorToWrite>& tensors,
                              const std::string& header_override = "") {
  const fs::path path = fs::temp_directory_path() / ("servesim_engine_test_" + file);
  nlohmann::json header;
  header["__metadata__"] = {{"format", "pt"}};
  std::string data;
  for (const TensorToWrite& t : tensors) {
    const size_t begin = data.size();
    for (float v : *t.values) {
      if (t.dtype == "BF16") {
        const uint16_t b = float_to_bf16_truncate(v);
        data.append(reinterpret_cast<const char*>(&b), 2);
      } else {
        data.append(reinterpret_cast<const char*>(&v), 4);
      }
    }
    header[t.name] = {
        {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  const std::string text = header_override.empty() ? header.dump() : header_override;
  const uint64_t n = text.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << text << data;
  return path.string();
}

// Every tensor of `w` under its Hugging Face name.
std::vector<TensorToWrite> hf_tensors(const Weights& w, const std::string& dtype) {
  const ModelSpec& m = w.spec;
  const int64_t H = m.hidden_size, Q = int64_t(m.num_heads) * m.head_dim,
                KV = int64_t(m.num_kv_heads) * m.head_dim, F = m.intermediate_size,
                V = m.vocab_size;
  std::vector<TensorToWrite> t = {{"model.embed_tokens.weight", dtype, {V, H}, &w.embedding},
                                  {"model.norm.weight", dtype, {H}, &w.final_norm},
                                  {"lm_head.weight", dtype, {V, H}, &w.lm_head}};
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const LayerWeights& l = w.layers[i];
    const std::string p = "model.layers." + std::to_string(i) + ".";
    t.push_back({p + "input_layernorm.weight", dtype, {H}, &l.attn_norm});
    t.push_back({p + "self_attn.q_proj.weight", dtype, {Q, H}, &l.wq});
    t.push_back({p + "self_attn.k_proj.weight", dtype, {KV, H}, &l.wk});
    t.push_back({p + "self_attn.v_proj.weight", dtype, {KV, H}, &l.wv});
    t.push_back({p + "self_attn.o_proj.weight", dtype, {H, Q}, &l.wo});
    t.push_back({p + "post_attention_layernorm.weight", dtype, {H}, &l.ffn_norm});
    t.push_back({p + "mlp.gate_proj.weight", dtype, {F, H}, &l.w_gate});
    t.push_back({p + "mlp.up_proj.weight", dtype, {F, H}, &l.w_up});
    t.push_back({p + "mlp.down_proj.weight", dtype, {H, F}, &l.w_down});
  }
  return t;
}

void expect_one_line_error(const std::function<void()>& fn, const std::string& needle) {
  try {
    fn();
    FAIL() << "no error; expected one mentioning '" << needle << "'";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(HalfFloats, ConvertExactly) {
  EXPECT_EQ(fp16_to_float(0x3c00), 1.0f);
  EXPECT_EQ(fp16_to_float(0xc000), -2.0f);
  EXPECT_EQ(fp16_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(fp16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(fp16_to_float(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_TRUE(std::isinf(fp16_to_float(0x7c00)));
  EXPECT_TRUE(std::isnan(fp16_to_float(0x7e00)));
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_float(0xc0a0), -5.0f);
}

TEST(Safetensors, LoadsACheckpointInFp32AndBf16) {
  const Weights w = Weights::random(testing::tiny_model_spec(), 21);
  const std::string f32 = write_safetensors("f32.safetensors", hf_tensors(w, "F32"));
  const Weights loaded = Weights::load_safetensors(w.spec, {f32});
  EXPECT_EQ(loaded.embedding, w.embedding);
  EXPECT_EQ(loaded.layers[1].w_down, w.layers[1].w_down);
  EXPECT_EQ(loaded.lm_head, w.lm_head);

  // Split into two BF16 shards: the loader finds each tensor in whichever shard holds it.
  std::vector<TensorToWrite> all = hf_tensors(w, "BF16");
  const std::vector<TensorToWrite> first(all.begin(), all.begin() + 5),
      rest(all.begin() + 5, all.end());
  const std::string s1 = write_safetensors("shard1.safetensors", first);
  const std::string s2 = write_safetensors("shard2.safetensors", rest);
  const Weights bf16 = Weights::load_safetensors(w.spec, {s1, s2});
  for (size_t i = 0; i < w.layers[0].wq.size(); ++i) {
    EXPECT_EQ(bf16.layers[0].wq[i], bf16_to_float(float_to_bf16_truncate(w.layers[0].wq[i])));
  }
  fs::remove(f32);
  fs::remove(s1);
  fs::remove(s2);
}

TEST(Safetensors, CheckpointThatDoesNotMatchItsConfigIsAOneLineError) {
  const Weights w = Weights::random(testing::tiny_model_spec(), 22);
  std::vector<TensorToWrite> tensors = hf_tensors(w, "F32");
  const std::string path = write_safetensors("mismatch.safetensors", tensors);
  ModelSpec wider = w.spec;
  wider.intermediate_size = 64;
  expect_one_line_error([&] { Weights::load_safetensors(wider, {path}); },
                        "'model.layers.0.mlp.gate_proj.weight' has shape [48, 32]");
  ModelSpec deeper = w.spec;
  deeper.num_layers = 3;
  expect_one_line_error([&] { Weights::load_safetensors(deeper, {path}); },
                        "'model.layers.2.input_layernorm.weight' is missing");
  fs::remove(path);
}

TEST(Safetensors, TruncatedOrMalformedFilesAreOneLineErrors) {
  const Weights w = Weights::random(testing::tiny_model_spec(), 23);
  const std::string path = write_safetensors("truncated.safetensors", hf_tensors(w, "F32"));
  const auto full = fs::file_size(path);
  fs::resize_file(path, full - 100);
  expect_one_line_error([&] { SafetensorsFile f(path); }, "truncated");
  fs::resize_file(path, 20);
  expect_one_line_error([&] { SafetensorsFile f(path); }, "truncated");
  fs::resize_file(path, 3);
  expect_one_line_error([&] { SafetensorsFile f(path); }, "truncated");
  expect_one_line_error([&] { SafetensorsFile f(path + ".absent"); }, "cannot open");

  const std::vector<float> four = {1, 2, 3, 4};
  const std::string bad_json = write_safetensors("badjson.safetensors", {}, "{\"a\": [1,");
  expect_one_line_error([&] { SafetensorsFile f(bad_json); }, "not valid JSON");
  const std::string int8 = write_safetensors(
      "int8.safetensors", {}, R"({"x": {"dtype": "I8", "shape": [4], "data_offsets": [0, 4]}})");
  expect_one_line_error([&] { SafetensorsFile f(int8); }, "dtype 'I8'");
  const std::string wrong_size = write_safetensors("size.safetensors", {{"x", "F32", {5}, &four}});
  expect_one_line_error([&] { SafetensorsFile f(wrong_size); }, "holds 16 bytes");
  for (const std::string& p : {path, bad_json, int8, wrong_size}) fs::remove(p);
}

// Fuzz finding (fuzz_safetensors, its one-hour run): "data_offsets": [1e308] was converted to
// int64 by the JSON library (undefined behaviour UBSan reports); header integers are now read
// by type and range, and a shape whose element count would overflow is refused.
TEST(Safetensors, HeaderNumbersThatAreNotSmallIntegersAreOneLineErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"w": {"dtype": "F16", "shape": [4, 2], "data_offsets": [1e308, 16]}})",
       "data offset that is not an integer"},
      {R"({"w": {"dtype": "F16", "shape": [4.5], "data_offsets": [0, 8]}})",
       "dimension that is not an integer"},
      {R"({"w": {"dtype": "F16", "shape": [4], "data_offsets": [0, 18446744073709551615]}})",
       "data offset beyond 2^50"},
      {R"({"w": {"dtype": "F16", "shape": [4], "data_offsets": [-1, 8]}})", "negative data offset"},
      {R"({"w": {"dtype": "F16", "shape": [-4], "data_offsets": [0, 8]}})", "negative dimension"},
      {R"({"w": {"dtype": "F16", "shape": [1048576, 1048576, 1048576], "data_offsets": [0, 8]}})",
       "more than 2^50 elements"},
      {R"({"w": {"dtype": "F16", "shape": 4, "data_offsets": [0, 8]}})", "malformed shape"},
      {R"({"w": {"dtype": "F16", "shape": [4], "data_offsets": [0]}})", "malformed data_offsets"},
  };
  for (const auto& [header, needle] : cases) {
    const std::string path = write_safetensors("numbers.safetensors", {}, header);
    expect_one_line_error([&] { SafetensorsFile f(path); }, needle);
    fs::remove(path);
  }
}

// Fuzz finding (fuzz_safetensors): an empty tensor's fp32 vector has no buffer, and reading
// it passed a null pointer to memcpy (undefined behaviour UBSan reports).
TEST(Safetensors, EmptyTensorReadsAsAnEmptyVector) {
  const std::vector<float> none;
  const std::string path = write_safetensors(
      "empty.safetensors", {{"e", "F32", {0, 4}, &none}, {"b", "BF16", {0}, &none}});
  const SafetensorsFile f(path);
  EXPECT_TRUE(f.read_fp32("e").empty());
  EXPECT_TRUE(f.read_fp32("b").empty());
  fs::remove(path);
}

}  // namespace
}  // namespace servesim
