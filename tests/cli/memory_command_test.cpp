// End-to-end tests of `servesim memory`, `models` and `gpus`: the binary as a user runs it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace servesim::testing {
namespace {

const char* kExample =
    "memory --model CodeLlama-13B --gpu A100-80GB --tensor-parallel-size 2 "
    "--gpu-memory-utilization 0.9 --max-model-len 8192 --max-num-seqs 64 --enable-prefix-caching";

TEST(MemoryCommand, IssueExamplePrintsTheFullBreakdown) {
  const CliResult r = run_servesim(kExample);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {"model weights", "activation peak", "non-torch",
                           "available KV cache memory", "# GPU blocks:", "GPU KV cache size:",
                           "Maximum concurrency for 8,192 tokens per request:"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
}

TEST(MemoryCommand, JsonOutputCarriesTheSameNumbers) {
  const CliResult r = run_servesim(std::string(kExample) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["tensor_parallel_size"], 2);
  EXPECT_EQ(j["max_num_seqs"], 64);
  EXPECT_EQ(j["kv_cache_tokens"].get<int64_t>(), j["num_gpu_blocks"].get<int64_t>() * 16);
  EXPECT_GT(j["max_concurrency"].get<double>(), 1.0);
  EXPECT_GT(j["per_gpu"]["kv_cache_bytes"].get<int64_t>(), 0);
}

TEST(MemoryCommand, AcceptsAHuggingFaceConfigFile) {
  const CliResult r = run_servesim("memory --model " SERVESIM_SOURCE_DIR
                                   "/tests/cli/data/tinyllama_config.json --gpu L4 "
                                   "--max-model-len 2048");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GPU KV cache size:"), std::string::npos);
}

struct BadInput {
  const char* args;
  const char* expected;  // a fragment of the one-line error
};

TEST(MemoryCommand, BadInputGivesOneLineErrorAndExit2) {
  const BadInput cases[] = {
      {"memory --model Lama-2-13B --gpu A100", "did you mean 'Llama-2-13B'"},
      {"memory --model Llama-2-13B --gpu A1OO", "unknown GPU"},
      {"memory --model Llama-2-13B --gpu A100 --tp 3", "does not divide the 40 attention heads"},
      {"memory --model Llama-2-13B --gpu A100 --gpu-memory-utilization 1.5",
       "--gpu-memory-utilization must be in (0, 1]"},
      {"memory --model Llama-2-13B --gpu A100 --gpu-memory-utilization 0",
       "--gpu-memory-utilization must be in (0, 1]"},
      {"memory --model Llama-2-13B --gpu A100 --max-num-seqs -3", "--max-num-seqs"},
      {"memory --model Llama-2-13B --gpu A100 --block-size 0", "--block-size"},
      {"memory --model Llama-2-70B --gpu A100", "does not fit"},
      {"memory --model Llama-3.1-8B --gpu L4 --max-model-len 131072", "lower --max-model-len"},
      {"memory --model Llama-2-13B --gpu A100 --dtype fp7", "--dtype: unknown dtype 'fp7'"},
      {"memory --model Llama-2-13B --gpu A100 --kv-cache-memory lots", "--kv-cache-memory"},
      {"memory --model " SERVESIM_SOURCE_DIR "/tests/cli/data/malformed.json --gpu A100",
       "malformed.json:3:"},
      {"memory --model /nonexistent/config.json --gpu A100", "cannot open"},
  };
  for (const BadInput& c : cases) {
    SCOPED_TRACE(c.args);
    const CliResult r = run_servesim(c.args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("error: "), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not one line: " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

#define VLLM_LOGS SERVESIM_SOURCE_DIR "/tests/calibration/data/vllm-logs/"

TEST(MemoryCommand, FromLogComparesTermByTerm) {
  const CliResult r = run_servesim("memory --from-log " VLLM_LOGS
                                   "kv02-v0.6.4-llama-3.1-8b-rtx3090.log --gpu RTX-3090");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"Llama-3.1-8B on 1 x RTX-3090", "vLLM 0.6.4.post1", "model weights",
                        "activation peak", "non-torch", "CUDA graphs subtracted", "GPU blocks",
                        "KV cache tokens", "max concurrency", "difference"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  }
}

TEST(MemoryCommand, FromLogJsonWithFitPrintsEngineKeys) {
  const CliResult r =
      run_servesim("memory --from-log " VLLM_LOGS
                   "kv02-v0.6.4-llama-3.1-8b-rtx3090.log --gpu RTX-3090 --fit --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["terms"]["num_gpu_blocks"]["log"], 1952);
  const double error = j["kv_tokens_error"].get<double>();
  EXPECT_LT(std::abs(error), 0.02);
  EXPECT_TRUE(j["fit"]["engine"].contains("non_torch_memory_gib"));
  EXPECT_NEAR(j["fit"]["num_gpu_blocks"].get<double>(), 1952, 3);
}

// A file name may hold any bytes; the JSON report names the log, and its writer used to throw
// (type_error 316) on a name that is not UTF-8, aborting the command. Every JSON report is
// written with such bytes as U+FFFD now (json_text).
TEST(MemoryCommand, ALogWhoseNameIsNotUtf8IsReportedInJson) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "memory_not_utf8";
  std::filesystem::create_directories(dir);
  const std::filesystem::path log = dir / "vllm-\xff.log";
  std::filesystem::copy_file(VLLM_LOGS "kv02-v0.6.4-llama-3.1-8b-rtx3090.log", log,
                             std::filesystem::copy_options::overwrite_existing);
  const CliResult r =
      run_servesim("memory --from-log '" + log.string() + "' --gpu RTX-3090 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["log"], (dir / "vllm-\xef\xbf\xbd.log").string());
  std::filesystem::remove_all(dir);
}

TEST(MemoryCommand, FlagsOverrideTheLog) {
  const CliResult r = run_servesim("memory --from-log " VLLM_LOGS
                                   "kv02-v0.6.4-llama-3.1-8b-rtx3090.log --gpu RTX-3090 "
                                   "--max-model-len 8192 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["plan"]["max_model_len"], 8192);
}

TEST(MemoryCommand, VllmVersionDecidesWhetherCudaGraphsAreSubtracted) {
  const std::string base = "memory --model Llama-3.1-8B --gpu L4 --max-model-len 8192 --json";
  const nlohmann::json newest = nlohmann::json::parse(run_servesim(base).out);
  const nlohmann::json v020 =
      nlohmann::json::parse(run_servesim(base + " --vllm-version 0.20").out);
  const nlohmann::json eager = nlohmann::json::parse(run_servesim(base + " --enforce-eager").out);
  EXPECT_TRUE(newest["cuda_graphs"]["subtracted"].get<bool>());
  EXPECT_FALSE(v020["cuda_graphs"]["subtracted"].get<bool>());
  EXPECT_GT(newest["per_gpu"]["cuda_graph_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(eager["per_gpu"]["cuda_graph_bytes"].get<int64_t>(), 0);
  EXPECT_LT(newest["kv_cache_tokens"].get<int64_t>(), v020["kv_cache_tokens"].get<int64_t>());
  EXPECT_EQ(eager["kv_cache_tokens"], v020["kv_cache_tokens"]);
  const nlohmann::json bytes =
      nlohmann::json::parse(run_servesim(base + " --gpu-memory-bytes 23000000000").out);
  EXPECT_EQ(bytes["per_gpu"]["total_bytes"], 23000000000LL);
}

// --cudagraph-mode chooses which graphs vLLM captures: whole-model decode graphs alone take less
// memory than those plus the piecewise ones, and the table names an explicit mode.
TEST(MemoryCommand, CudagraphModeChoosesTheGraphsCaptured) {
  const std::string base = "memory --model Llama-3.1-8B --gpu H100-SXM --json";
  const nlohmann::json fallback = nlohmann::json::parse(run_servesim(base).out);
  const nlohmann::json decode_only =
      nlohmann::json::parse(run_servesim(base + " --cudagraph-mode FULL_DECODE_ONLY").out);
  EXPECT_EQ(fallback["cuda_graphs"]["mode"], "FULL_AND_PIECEWISE");
  EXPECT_EQ(decode_only["cuda_graphs"]["mode"], "FULL_DECODE_ONLY");
  EXPECT_EQ(decode_only["cuda_graphs"]["piecewise"], 0);
  EXPECT_LT(decode_only["per_gpu"]["cuda_graph_bytes"].get<int64_t>(),
            fallback["per_gpu"]["cuda_graph_bytes"].get<int64_t>());
  EXPECT_GT(decode_only["kv_cache_tokens"].get<int64_t>(),
            fallback["kv_cache_tokens"].get<int64_t>());
  const CliResult table =
      run_servesim("memory --model Llama-3.1-8B --gpu H100-SXM --cudagraph-mode PIECEWISE");
  EXPECT_NE(table.out.find("(cudagraph_mode PIECEWISE)"), std::string::npos) << table.out;
}

TEST(MemoryCommand, AnUnmodelledLogVersionCanBeComparedAsANamedRelease) {
  const CliResult r = run_servesim("memory --from-log " VLLM_LOGS
                                   "unknown-version.log --gpu H100-SXM --vllm-version 0.23");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Qwen3-8B"), std::string::npos) << r.out;
}

TEST(MemoryCommand, ScenarioEngineKeysChooseTheVersion) {
  const std::string quickstart = "simulate " SERVESIM_SOURCE_DIR
                                 "/configs/scenarios/quickstart.json --json "
                                 "--set workload.num_requests=20";
  const CliResult r = run_servesim(quickstart + " --set 'engine.vllm_version=\"0.20\"'" +
                                   " --set engine.enforce_eager=true");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json engine = nlohmann::json::parse(r.out)["setup"]["engine"];
  EXPECT_EQ(engine["vllm_version"], "0.20") << engine.dump();
  EXPECT_EQ(engine["enforce_eager"], true);
  const CliResult bad = run_servesim(quickstart + " --set 'engine.vllm_version=\"0.3\"'");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("vllm_version: vLLM 0.3 is not modelled"), std::string::npos) << bad.err;
}

TEST(MemoryCommand, BadLogsAndFlagsGiveOneLineErrors) {
  const BadInput cases[] = {
      {"memory --from-log " VLLM_LOGS "no-memory-lines.log --gpu L4",
       "no vLLM KV-cache line found"},
      {"memory --from-log " VLLM_LOGS "unknown-version.log --gpu L4",
       "or pass --vllm-version 0.23"},
      {"memory --from-log " VLLM_LOGS "kv09-v0.4-deepseek-coder-t4-tp2.log --gpu T4",
       "pass --model"},
      {"memory --from-log /nonexistent.log --gpu L4", "cannot open"},
      {"memory --model Llama-3.1-8B --gpu L4 --fit", "--fit needs --from-log"},
      {"memory --model Llama-3.1-8B --gpu L4 --vllm-version 0.3", "vLLM 0.3 is not modelled"},
      {"memory --model Llama-3.1-8B --gpu L4 --vllm-version newest", "is not a vLLM version"},
      {"memory --model Llama-3.1-8B --gpu L4 --gpu-memory-bytes lots", "--gpu-memory-bytes"},
      {"memory --gpu L4", "--model is required"},
      {"memory --model Llama-3.1-8B --gpu L4 --cudagraph-mode full",
       "--cudagraph-mode: 'full' is not a vLLM cudagraph_mode"},
      {"memory --model Llama-3.1-8B --gpu L4 --cudagraph-mode FULL --enforce-eager",
       "contradicts enforce_eager"},
      {"memory --model Llama-3.1-8B --gpu L4 --cudagraph-mode FULL --vllm-version 0.9",
       "cudagraph_mode needs vLLM 0.10 or later"},
  };
  for (const BadInput& c : cases) {
    SCOPED_TRACE(c.args);
    const CliResult r = run_servesim(c.args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not one line: " << r.err;
  }
}

TEST(CatalogCommands, ListModelsAndGpus) {
  const CliResult models = run_servesim("models");
  ASSERT_EQ(models.exit_code, 0) << models.err;
  EXPECT_NE(models.out.find("DeepSeek-V3"), std::string::npos);
  EXPECT_NE(models.out.find("GPT-OSS-120B"), std::string::npos);
  const CliResult gpus = run_servesim("gpus --json");
  ASSERT_EQ(gpus.exit_code, 0) << gpus.err;
  const nlohmann::json j = nlohmann::json::parse(gpus.out);
  EXPECT_GE(j.size(), 13u);
}

// A served checkpoint's name resolves to the catalog model it is; an unknown one is one line,
// exit 2 (scripts/compare_published_h100.sh maps published rows this way).
TEST(CatalogCommands, ResolveNamesTheCatalogModelOfACheckpoint) {
  const CliResult fp8 = run_servesim("models --resolve Qwen/Qwen3-235B-A22B-FP8");
  EXPECT_EQ(fp8.exit_code, 0) << fp8.err;
  EXPECT_EQ(fp8.out, "Qwen3-235B-A22B\n");
  EXPECT_EQ(run_servesim("models --resolve openai/gpt-oss-120b").out, "GPT-OSS-120B\n");
  const CliResult unknown = run_servesim("models --resolve acme/Foo-7B");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown model 'acme/Foo-7B'"), std::string::npos) << unknown.err;
  EXPECT_EQ(unknown.err.find('\n'), unknown.err.size() - 1) << unknown.err;
}

}  // namespace
}  // namespace servesim::testing
