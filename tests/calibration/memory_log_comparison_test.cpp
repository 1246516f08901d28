// MemoryLogComparison and MemoryLogFit on the kv-capacity-observations.csv rows written as
// vLLM logs (tests/calibration/data/vllm-logs), and the version-dependent CUDA-graph term.
#include "calibration/measured/memory_log_comparison.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "models/config_error.h"

namespace servesim {
namespace {

VllmStartupLog read(const std::string& name) {
  return VllmStartupLog::read_file(SERVESIM_SOURCE_DIR "/tests/calibration/data/vllm-logs/" + name);
}

struct FromLog {
  ModelSpec model;
  HardwareSpec gpu;
  ParallelConfig parallel;
  EngineConfig engine;
};

FromLog deployment(const VllmStartupLog& log, const std::string& gpu) {
  const Catalog catalog;
  FromLog d{model_named_in_log(log, catalog), catalog.resolve_gpu(gpu), {}, {}};
  deployment_from_log(log, GivenSettings{}, d.parallel, d.engine);
  return d;
}

MemoryLogComparison compare(const VllmStartupLog& log, const FromLog& d) {
  return MemoryLogComparison::compare(
      log, MemoryPlan::compute_unchecked(d.model, d.gpu, d.parallel, d.engine));
}

TEST(MemoryLogComparison, TakesTheDeploymentFromTheLog) {
  const FromLog d = deployment(read("kv02-v0.6.4-llama-3.1-8b-rtx3090.log"), "RTX-3090");
  EXPECT_EQ(d.model.name, "Llama-3.1-8B");  // meta-llama/Llama-3.1-8B-Instruct
  EXPECT_EQ(d.engine.max_model_len, 20000);
  EXPECT_EQ(d.engine.vllm_version.to_string(), "0.6");
  EXPECT_FALSE(d.engine.enable_chunked_prefill);
  EXPECT_DOUBLE_EQ(d.engine.gpu_memory_utilization, 0.9);
  EXPECT_EQ(*d.engine.gpu_memory_bytes, std::llround(23.58 * 1024 * 1024 * 1024));
}

TEST(MemoryLogComparison, FlagsTheCallerGaveWinOverTheLog) {
  const VllmStartupLog log = read("kv02-v0.6.4-llama-3.1-8b-rtx3090.log");
  GivenSettings given;
  given.max_model_len = true;
  given.vllm_version = true;
  ParallelConfig parallel;
  EngineConfig engine;
  engine.max_model_len = 8192;
  deployment_from_log(log, given, parallel, engine);
  EXPECT_EQ(engine.max_model_len, 8192);
  EXPECT_EQ(engine.vllm_version, kNewestModelledVllm);
  EXPECT_DOUBLE_EQ(engine.gpu_memory_utilization, 0.9);
}

// The rows that state their deployment fully: KV capacity within 2% of the log's.
TEST(MemoryLogComparison, KvCapacityOfTheRowsIsWithinTwoPercentOfTheLog) {
  for (const char* name :
       {"kv02-v0.6.4-llama-3.1-8b-rtx3090.log", "kv03-v0.6.4-llama-3.1-8b-rtx3090-refused.log"}) {
    SCOPED_TRACE(name);
    const VllmStartupLog log = read(name);
    const MemoryLogComparison c = compare(log, deployment(log, "RTX-3090"));
    ASSERT_TRUE(c.kv_tokens_error());
    EXPECT_LT(std::abs(*c.kv_tokens_error()), 0.02) << c.to_table();
    // V0 subtracts no CUDA graphs: the log's 0 is implied, servesim's is 0 too.
    EXPECT_EQ(*c.term("cuda_graph_subtracted_bytes")->log, 0);
    EXPECT_EQ(c.term("cuda_graph_subtracted_bytes")->servesim, 0);
    EXPECT_NEAR(c.term("non_torch_bytes")->servesim, *c.term("non_torch_bytes")->log, 1e7);
  }
}

TEST(MemoryLogComparison, JsonAndTableCarryEveryTerm) {
  const VllmStartupLog log = read("kv02-v0.6.4-llama-3.1-8b-rtx3090.log");
  const MemoryLogComparison c = compare(log, deployment(log, "RTX-3090"));
  const nlohmann::json j = c.to_json();
  for (const char* key : {"total_bytes", "requested_bytes", "weights_bytes", "activation_bytes",
                          "non_torch_bytes", "cuda_graph_subtracted_bytes", "kv_cache_bytes",
                          "num_gpu_blocks", "kv_cache_tokens", "max_concurrency"}) {
    EXPECT_TRUE(j["terms"].contains(key)) << key;
  }
  EXPECT_EQ(j["terms"]["num_gpu_blocks"]["log"], 1952);
  EXPECT_TRUE(j["terms"]["cuda_graph_captured_bytes"]["log"].is_null());
  EXPECT_NE(c.to_table().find("KV cache tokens"), std::string::npos);
}

TEST(MemoryLogFit, MakesServesimsKvMatchTheLog) {
  const VllmStartupLog log = read("kv02-v0.6.4-llama-3.1-8b-rtx3090.log");
  const FromLog d = deployment(log, "RTX-3090");
  const MemoryLogFit fit = MemoryLogFit::fit(log, d.model, d.gpu, d.parallel, d.engine);
  EXPECT_EQ(fit.activation_source, "log");
  EXPECT_EQ(fit.cuda_graph_source, "not subtracted");
  EXPECT_EQ(fit.cuda_graph_bytes, 0);
  EXPECT_EQ(fit.plan.num_gpu_blocks, 1952);
  const nlohmann::json keys = fit.engine_keys();
  EXPECT_TRUE(keys.contains("non_torch_memory_gib"));
  EXPECT_NEAR(keys["activation_memory_gib"].get<double>(), 17.06 - 14.9888, 1e-3);
}

// KV07's 8.11 GiB would give 11,308 blocks; its 178,880 tokens are 11,180: the tokens win.
TEST(MemoryLogFit, FitsTheLoggedKvTokensExactly) {
  const VllmStartupLog log = read("kv07-v0.10-qwen3-235b-fp8-h100-tp4.log");
  const FromLog d = deployment(log, "H100-SXM");
  const MemoryLogFit fit = MemoryLogFit::fit(log, d.model, d.gpu, d.parallel, d.engine);
  EXPECT_EQ(fit.plan.kv_cache_tokens, 178880);
  EXPECT_EQ(fit.cuda_graph_source, "not subtracted");  // 0.10
}

TEST(MemoryLogFit, UsesTheKvBytesWhenTheLogGivesNoBlocks) {
  VllmStartupLog log = read("kv02-v0.6.4-llama-3.1-8b-rtx3090.log");
  const FromLog d = deployment(log, "RTX-3090");
  log.num_gpu_blocks.reset();
  // 3.81 GiB is rounded to 0.01 GiB: 2.5 blocks of 2 MiB.
  const MemoryLogFit fit = MemoryLogFit::fit(log, d.model, d.gpu, d.parallel, d.engine);
  EXPECT_NEAR(static_cast<double>(fit.plan.num_gpu_blocks), 1952.0, 3.0);
}

TEST(MemoryLogFit, RefusesALogWithoutAKvFigure) {
  VllmStartupLog log = read("kv02-v0.6.4-llama-3.1-8b-rtx3090.log");
  const FromLog d = deployment(log, "RTX-3090");
  log.kv_reserved_bytes.reset();
  log.num_gpu_blocks.reset();
  EXPECT_THROW(MemoryLogFit::fit(log, d.model, d.gpu, d.parallel, d.engine), ConfigError);
}

TEST(MemoryLogComparison, AnUnmodelledVersionIsRefusedUnlessTheCallerNamesOne) {
  const VllmStartupLog log = read("unknown-version.log");
  ParallelConfig parallel;
  EngineConfig engine;
  EXPECT_THROW(deployment_from_log(log, GivenSettings{}, parallel, engine), ConfigError);
  GivenSettings given;
  given.vllm_version = true;
  engine.vllm_version = {0, 20};
  deployment_from_log(log, given, parallel, engine);
  EXPECT_EQ(engine.vllm_version.to_string(), "0.20");
}

TEST(MemoryLogComparison, AModelOutsideTheCatalogAsksForModel) {
  try {
    model_named_in_log(read("kv09-v0.4-deepseek-coder-t4-tp2.log"), Catalog{});
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("pass --model"), std::string::npos) << e.what();
  }
}

TEST(MemoryLogComparison, AModelNameInALogIsNeverOpenedAsAFile) {
  // A log is input servesim did not write: a model "name" that is a path to a valid model
  // file must not make it read that file.
  VllmStartupLog log;
  log.origin = "x.log";
  log.model = std::string(SERVESIM_SOURCE_DIR) + "/configs/models/Llama-3.1-8B.json";
  try {
    model_named_in_log(log, Catalog{});
    ADD_FAILURE() << "a path in the log was opened";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("is not in the catalog"), std::string::npos) << e.what();
  }
  log.model = "meta-llama/Llama-3.1-8B";  // names still resolve, by their HF repo
  EXPECT_EQ(model_named_in_log(log, Catalog{}).name, "Llama-3.1-8B");
}

}  // namespace
}  // namespace servesim
