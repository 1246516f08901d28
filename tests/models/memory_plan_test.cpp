#include "models/memory_plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "models/catalog.h"
#include "models/config_error.h"

namespace servesim {
namespace {

constexpr int64_t kGiB = 1LL << 30;

struct Fixture {
  Catalog catalog;
  ModelSpec model(const char* name) const { return catalog.resolve_model(name); }
  HardwareSpec gpu(const char* name) const { return catalog.resolve_gpu(name); }
};

TEST(MemoryPlan, HandComputedLlama2_7bOnA100) {
  Fixture f;
  const ModelSpec m = f.model("Llama-2-7B");
  const HardwareSpec g = f.gpu("A100-80GB-SXM");
  EngineConfig e;
  e.gpu_memory_utilization = 0.9;
  e.max_model_len = 4096;
  e.max_num_seqs = 256;
  e.max_num_batched_tokens = 2048;
  e.non_torch_memory_bytes = 0;
  const MemoryPlan plan = MemoryPlan::compute(m, g, ParallelConfig{}, e);

  // Vocabulary 32,000 is a multiple of 64, so no padding: weights are exactly 2 B/param.
  EXPECT_EQ(plan.weights_bytes, m.total_params() * 2);
  // 2,048 tokens x 2 B x (3 x 4096 + 3 x 11008) for the MLP working set.
  EXPECT_EQ(plan.activation_bytes, 2048LL * 2 * (3 * 4096 + 3 * 11008));
  const int64_t requested = static_cast<int64_t>(std::ceil(g.memory_total_bytes * 0.9));
  EXPECT_EQ(plan.requested_bytes, requested);
  // The newest modelled vLLM subtracts its CUDA-graph estimate too.
  EXPECT_TRUE(plan.cuda_graph_subtracted);
  EXPECT_EQ(plan.kv_cache_bytes,
            requested - plan.weights_bytes - plan.activation_bytes - plan.cuda_graph_bytes);
  // One block of one layer: 2 x 16 tokens x 32 heads x 128 x 2 B = 256 KiB.
  EXPECT_EQ(plan.page_bytes, 2 * 16 * 32 * 128 * 2);
  EXPECT_EQ(plan.num_gpu_blocks, plan.kv_cache_bytes / plan.page_bytes / 32);
  EXPECT_EQ(plan.kv_cache_tokens, plan.num_gpu_blocks * 16);
  EXPECT_DOUBLE_EQ(plan.max_concurrency, static_cast<double>(plan.num_gpu_blocks) / 256.0);
}

TEST(MemoryPlan, TensorParallelSplitsLinearLayersNotNorms) {
  Fixture f;
  const ModelSpec m = f.model("Llama-2-7B");
  EngineConfig e;
  ParallelConfig tp2;
  tp2.tp = 2;
  const int64_t norms = 2LL * 4096 * 32 + 4096;
  const int64_t expected = (m.total_params() - norms) * 2 / 2 + norms * 2;
  EXPECT_EQ(weights_bytes_per_gpu(m, tp2, e, 0), expected);
}

TEST(MemoryPlan, PipelineStagesHoldTheirLayersAndTheEndsOfTheModel) {
  Fixture f;
  const ModelSpec m = f.model("Llama-2-7B");
  EngineConfig e;
  ParallelConfig pp2;
  pp2.pp = 2;
  const int64_t table = 32000LL * 4096 * 2;
  const int64_t stage0 = weights_bytes_per_gpu(m, pp2, e, 0);
  const int64_t stage1 = weights_bytes_per_gpu(m, pp2, e, 1);
  // Both stages hold 16 layers; the first adds the embedding, the last the LM head + norm.
  EXPECT_EQ(stage1 - stage0, 4096 * 2);
  EXPECT_EQ(stage0 + stage1, m.total_params() * 2);
  EXPECT_EQ(stage0, (m.total_params() * 2 - table * 2 - 4096 * 2) / 2 + table);
}

TEST(MemoryPlan, QuantisedWeightsKeepEmbeddingsIn16Bit) {
  Fixture f;
  const ModelSpec m = f.model("Llama-2-7B");
  EngineConfig bf16;
  EngineConfig fp8;
  fp8.dtype = DType::kFp8;
  const int64_t tables = 2LL * 32000 * 4096 * 2;
  const int64_t b = weights_bytes_per_gpu(m, {}, bf16, 0);
  const int64_t q = weights_bytes_per_gpu(m, {}, fp8, 0);
  const int64_t norms = (2LL * 4096 * 32 + 4096) * 2;
  EXPECT_EQ(q, (b - tables - norms) / 2 + tables + norms);
}

TEST(MemoryPlan, IssueExampleThirteenBOnTwoA100s) {
  Fixture f;
  EngineConfig e;
  e.gpu_memory_utilization = 0.9;
  e.max_model_len = 8192;
  e.max_num_seqs = 64;
  e.enable_prefix_caching = true;
  ParallelConfig p;
  p.tp = 2;
  const MemoryPlan plan = MemoryPlan::compute(f.model("CodeLlama-13B"), f.gpu("A100-80GB"), p, e);
  // Weights of a 13B model split in two: ~12.1 GiB each; ~58 GiB left for KV.
  EXPECT_NEAR(static_cast<double>(plan.weights_bytes) / kGiB, 12.12, 0.05);
  EXPECT_GT(plan.kv_cache_tokens, 140000);
  EXPECT_GT(plan.max_concurrency, 16.0);
  const std::string table = plan.to_table();
  EXPECT_NE(table.find("GPU KV cache size:"), std::string::npos);
  EXPECT_NE(table.find("Maximum concurrency for 8,192 tokens per request:"), std::string::npos);
}

TEST(MemoryPlan, DefaultsFollowVllmPerGpu) {
  Fixture f;
  const ModelSpec m = f.model("Llama-3.1-8B");
  const EngineConfig h100 = EngineConfig{}.resolved_for(m, f.gpu("H100"));
  EXPECT_EQ(h100.max_num_seqs, 1024);
  EXPECT_EQ(h100.max_num_batched_tokens, 8192);
  EXPECT_EQ(h100.max_model_len, 131072);
  const EngineConfig a100 = EngineConfig{}.resolved_for(m, f.gpu("A100-80GB"));
  EXPECT_EQ(a100.max_num_seqs, 256);
  EXPECT_EQ(a100.max_num_batched_tokens, 2048);
}

TEST(MemoryPlan, SlidingWindowLayersNeedOnlyTheirWindow) {
  Fixture f;
  EngineConfig e;
  e.max_model_len = 32768;
  const MemoryPlan plan = MemoryPlan::compute(f.model("GPT-OSS-20B"), f.gpu("H100"), {}, e);
  // 12 full layers need 2,048 pages each, 12 sliding layers ceil(128/16) + 1 = 9.
  const double pages = 12.0 * 2048 + 12.0 * 9;
  EXPECT_NEAR(plan.max_concurrency, static_cast<double>(plan.num_gpu_blocks) * 24 / pages, 1e-9);
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(MemoryPlan, ModelThatDoesNotFitSaysByHowMuchAndWhatWouldFit) {
  Fixture f;
  const std::string err = error_of(
      [&] { MemoryPlan::compute(f.model("Llama-2-70B"), f.gpu("A100-80GB"), {}, EngineConfig{}); });
  EXPECT_NE(err.find("does not fit"), std::string::npos) << err;
  EXPECT_NE(err.find("--tensor-parallel-size 2"), std::string::npos) << err;
  EXPECT_NE(err.find(" by "), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos);
  // With the catalog at hand it names the GPUs that hold the model at TP 1.
  const std::vector<HardwareSpec> gpus = f.catalog.gpus();
  const std::string with_gpus = error_of([&] {
    MemoryPlan::compute(f.model("Llama-2-70B"), f.gpu("A100-80GB"), {}, EngineConfig{}, &gpus);
  });
  // 128 GiB of weights: above an H200's 126 GiB at 0.9 utilization, within a B200.
  EXPECT_NE(with_gpus.find("(B200)"), std::string::npos) << with_gpus;
  EXPECT_EQ(with_gpus.find("L4,"), std::string::npos) << with_gpus;
}

TEST(MemoryPlan, MaxModelLenBeyondKvCapacityNamesTheLargestThatFits) {
  Fixture f;
  EngineConfig e;
  e.max_model_len = 131072;
  const std::string err =
      error_of([&] { MemoryPlan::compute(f.model("Llama-3.1-8B"), f.gpu("L4"), {}, e); });
  EXPECT_NE(err.find("--max-model-len 131072"), std::string::npos) << err;
  EXPECT_NE(err.find("lower --max-model-len to at most"), std::string::npos) << err;
  EXPECT_NE(err.find("--tensor-parallel-size"), std::string::npos) << err;
}

TEST(MemoryPlan, InvalidFlagsAreNamed) {
  Fixture f;
  const ModelSpec m = f.model("Llama-2-13B");
  const HardwareSpec g = f.gpu("A100-80GB");
  auto with = [&](auto edit) {
    EngineConfig e;
    ParallelConfig p;
    edit(e, p);
    return error_of([&] { MemoryPlan::compute(m, g, p, e); });
  };
  EXPECT_NE(with([](EngineConfig&, ParallelConfig& p) { p.tp = 3; }).find("does not divide the 40"),
            std::string::npos);
  EXPECT_NE(with([](EngineConfig& e, ParallelConfig&) {
              e.gpu_memory_utilization = 0;
            }).find("--gpu-memory-utilization"),
            std::string::npos);
  EXPECT_NE(with([](EngineConfig& e, ParallelConfig&) {
              e.gpu_memory_utilization = 1.2;
            }).find("--gpu-memory-utilization"),
            std::string::npos);
  EXPECT_NE(with([](EngineConfig& e, ParallelConfig&) { e.block_size = 0; }).find("--block-size"),
            std::string::npos);
  EXPECT_NE(with([](EngineConfig& e, ParallelConfig&) {
              e.max_model_len = 8192;
            }).find("max_position_embeddings"),
            std::string::npos);
  EXPECT_NE(
      with([](EngineConfig& e, ParallelConfig&) { e.max_num_seqs = -4; }).find("--max-num-seqs"),
      std::string::npos);
  EXPECT_NE(with([](EngineConfig& e, ParallelConfig&) {
              e.enable_chunked_prefill = false;
              e.max_num_batched_tokens = 1024;
            }).find("--max-num-batched-tokens"),
            std::string::npos);
  EXPECT_NE(
      with([](EngineConfig&, ParallelConfig& p) { p.pp = 100; }).find("--pipeline-parallel-size"),
      std::string::npos);
}

TEST(MemoryPlan, CudaGraphsFollowTheVllmVersion) {
  Fixture f;
  const ModelSpec m = f.model("Llama-3.1-8B");
  const HardwareSpec g = f.gpu("L4");
  EngineConfig e;
  e.max_model_len = 8192;
  e.max_num_seqs = 256;
  auto plan_at = [&](VllmVersion v) {
    EngineConfig at = e;
    at.vllm_version = v;
    return MemoryPlan::compute(m, g, ParallelConfig{}, at);
  };
  // 0.11+: 1, 2, 4, 8..248 by 8, 256..512 by 16: 51 piecewise graphs, 35 full up to 256,
  // as vLLM logs "Profiling CUDA graph memory: PIECEWISE=51, FULL=35" for 256 sequences.
  const MemoryPlan newest = plan_at(kNewestModelledVllm);
  EXPECT_EQ(newest.cuda_graphs.piecewise, 51);
  EXPECT_EQ(newest.cuda_graphs.full, 35);
  EXPECT_EQ(newest.cuda_graphs.largest, 512);
  EXPECT_TRUE(newest.cuda_graph_subtracted);
  const MemoryPlan v020 = plan_at({0, 20});
  EXPECT_FALSE(v020.cuda_graph_subtracted);
  EXPECT_EQ(v020.kv_cache_bytes, newest.kv_cache_bytes + newest.cuda_graph_bytes);
  // 0.21's estimate sits above the capture it predicts.
  EXPECT_NEAR(static_cast<double>(newest.cuda_graph_bytes) / v020.cuda_graph_bytes,
              kCudaGraphEstimateOverCapture, 1e-6);
  const MemoryPlan v010 = plan_at({0, 10});
  EXPECT_EQ(v010.cuda_graphs.piecewise, 35);  // 1, 2, 4, 8..256
  EXPECT_EQ(v010.cuda_graphs.full, 0);
  const MemoryPlan v06 = plan_at({0, 6});
  EXPECT_EQ(v06.cuda_graphs.full, 35);
  EXPECT_EQ(v06.cuda_graphs.largest, 256);
  // Physically: a pool of the largest batch plus 170 KiB per graph per layer; Llama-3.1-8B's
  // 35 V0 graphs over 32 layers take 0.19 GiB + 28 MB.
  EXPECT_NEAR(static_cast<double>(v06.cuda_graph_bytes) / kGiB, 0.21, 0.01);
  EngineConfig eager = e;
  eager.enforce_eager = true;
  EXPECT_EQ(MemoryPlan::compute(m, g, ParallelConfig{}, eager).cuda_graph_bytes, 0);
  EngineConfig given = e;
  given.vllm_version = {0, 10};
  given.cuda_graph_memory_bytes = kGiB;
  const MemoryPlan explicit_plan = MemoryPlan::compute(m, g, ParallelConfig{}, given);
  EXPECT_TRUE(explicit_plan.cuda_graph_subtracted);
  EXPECT_EQ(explicit_plan.kv_cache_bytes, v010.kv_cache_bytes - kGiB);
}

TEST(MemoryPlan, CudaGraphsFollowTheCudagraphMode) {
  Fixture f;
  const ModelSpec m = f.model("Llama-3.1-8B");
  const HardwareSpec g = f.gpu("L4");
  auto graphs_with = [&](CudaGraphMode mode, VllmVersion v) {
    EngineConfig e;
    e.max_model_len = 8192;
    e.max_num_seqs = 256;
    e.vllm_version = v;
    e.cudagraph_mode = mode;
    return MemoryPlan::compute(m, g, ParallelConfig{}, e).cuda_graphs;
  };
  // 0.11+ sizes 1..512 (51), of them 35 up to max_num_seqs 256.
  const CudaGraphPlan decode_only = graphs_with(CudaGraphMode::kFullDecodeOnly, {0, 12});
  EXPECT_EQ(decode_only.piecewise, 0);
  EXPECT_EQ(decode_only.full, 35);
  const CudaGraphPlan full = graphs_with(CudaGraphMode::kFull, {0, 12});
  EXPECT_EQ(full.piecewise, 0);
  EXPECT_EQ(full.full, 51);
  const CudaGraphPlan piecewise = graphs_with(CudaGraphMode::kPiecewise, {0, 12});
  EXPECT_EQ(piecewise.piecewise, 51);
  EXPECT_EQ(piecewise.full, 0);
  EXPECT_EQ(graphs_with(CudaGraphMode::kNone, {0, 12}).largest, 0);
  // 0.10 captures 1, 2, 4, 8..256 whatever the mode; FULL_DECODE_ONLY makes them whole-model.
  const CudaGraphPlan v010 = graphs_with(CudaGraphMode::kFullDecodeOnly, {0, 10});
  EXPECT_EQ(v010.full, 35);
  EXPECT_EQ(v010.piecewise, 0);
  EXPECT_EQ(v010.largest, 256);
}

TEST(MemoryPlan, GpuMemoryBytesReplacesTheCatalogTotal) {
  Fixture f;
  EngineConfig e;
  e.max_model_len = 4096;
  e.gpu_memory_bytes = 23'000'000'000;
  const MemoryPlan plan =
      MemoryPlan::compute(f.model("Llama-3.1-8B"), f.gpu("L4"), ParallelConfig{}, e);
  EXPECT_EQ(plan.total_bytes, 23'000'000'000);
  EXPECT_EQ(plan.requested_bytes, static_cast<int64_t>(std::ceil(23e9 * 0.9)));
}

TEST(MemoryPlan, GpuJsonMayGiveTheTotalInBytes) {
  Fixture f;
  nlohmann::json j = f.gpu("L4").to_json();
  j.erase("memory_total_gib");
  j["memory_total_bytes"] = 23'580'000'000LL;
  EXPECT_EQ(HardwareSpec::from_json(j, "gpu.json").memory_total_bytes, 23'580'000'000LL);
  j["memory_total_gib"] = 22.0;
  EXPECT_THROW(HardwareSpec::from_json(j, "gpu.json"), ConfigError);
}

TEST(VllmVersion, ParsesReleasesAndRefusesOthers) {
  EXPECT_EQ(VllmVersion::parse("0.10.2", "v").to_string(), "0.10");
  EXPECT_EQ(VllmVersion::parse("v0.11.1rc6.dev115+gbc926c122", "v").to_string(), "0.11");
  EXPECT_FALSE(VllmVersion::parse("0.7.3", "v").v1_engine());
  EXPECT_TRUE(VllmVersion::parse("0.8", "v").v1_engine());
  EXPECT_FALSE(VllmVersion::parse("0.20.1", "v").subtracts_cuda_graphs());
  EXPECT_TRUE(VllmVersion::parse("0.21.0", "v").subtracts_cuda_graphs());
  EXPECT_THROW(VllmVersion::parse("0.3.3", "v"), ConfigError);
  EXPECT_THROW(VllmVersion::parse("1.0.0", "v"), ConfigError);
  EXPECT_THROW(VllmVersion::parse("latest", "v"), ConfigError);
}

// --- Observations of real deployments (tests/models/data/kv-capacity-observations.csv) ---

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.push_back(field);
      field.clear();
    } else {
      field += c;
    }
  }
  fields.push_back(field);
  return fields;
}

struct Deployment {
  const char* model;
  const char* gpu;
  int tp;
  // V0 engines profiled with max_num_batched_tokens = max_model_len and 256 sequences.
  int max_num_batched_tokens;
  int max_num_seqs;
  int max_model_len;
  bool engine_refused;  // vLLM refused to start: max_model_len beyond the KV capacity
  VllmVersion version;
};

// Rows the planner reproduces; every other row must be explained in docs/memory-model.md.
const std::map<std::string, Deployment> kReproduced = {
    {"KV02", {"Llama-3.1-8B", "RTX-3090", 1, 20000, 256, 20000, false, {0, 6}}},
    {"KV03", {"Llama-3.1-8B", "RTX-3090", 1, 29000, 256, 29000, true, {0, 6}}},
};

TEST(MemoryPlan, ObservedDeploymentsWithin5PercentOrExplained) {
  std::ifstream csv(SERVESIM_SOURCE_DIR "/tests/models/data/kv-capacity-observations.csv");
  ASSERT_TRUE(csv.good());
  std::ifstream doc_file(SERVESIM_SOURCE_DIR "/docs/memory-model.md");
  std::stringstream doc;
  doc << doc_file.rdbuf();
  Fixture f;
  std::string line;
  std::getline(csv, line);
  const std::vector<std::string> header = split_csv_line(line);
  const auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  int rows = 0;
  while (std::getline(csv, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> row = split_csv_line(line);
    const std::string id = row[0];
    SCOPED_TRACE(id);
    ++rows;
    auto it = kReproduced.find(id);
    if (it == kReproduced.end()) {
      EXPECT_NE(doc.str().find("### " + id), std::string::npos)
          << id << " is neither reproduced nor explained in docs/memory-model.md";
      continue;
    }
    const Deployment& d = it->second;
    const double logged_tokens = std::stod(row[column("kv_cache_tokens")]);
    EngineConfig e;
    e.gpu_memory_utilization = 0.9;
    e.max_model_len = d.max_model_len;
    e.max_num_batched_tokens = d.max_num_batched_tokens;
    e.max_num_seqs = d.max_num_seqs;
    e.vllm_version = d.version;
    ParallelConfig p;
    p.tp = d.tp;
    const MemoryPlan plan = MemoryPlan::compute_unchecked(f.model(d.model), f.gpu(d.gpu), p, e);
    EXPECT_NEAR(static_cast<double>(plan.kv_cache_tokens), logged_tokens, 0.05 * logged_tokens);
    const bool refused =
        !error_of([&] { MemoryPlan::compute(f.model(d.model), f.gpu(d.gpu), p, e); }).empty();
    EXPECT_EQ(refused, d.engine_refused);
  }
  EXPECT_GE(rows, 6);
}

}  // namespace
}  // namespace servesim
