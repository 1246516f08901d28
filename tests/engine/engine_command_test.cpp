// End-to-end tests of `servesim engine bench`: a tiny model, small measurement buffers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/runtime/backend.h"
#include "tests/cli/cli_runner.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;
using testing::run_servesim;

std::string tiny_model_file() {
  // Private to this process: ctest runs each test in its own process, in parallel, and a
  // file they all rewrote was read half-written.
  const fs::path path = fs::temp_directory_path() /
                        ("servesim_engine_cli_tiny_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << R"({"name": "tiny-cli", "hidden_size": 32, "num_layers": 2,
    "num_heads": 4, "num_kv_heads": 2, "head_dim": 8, "intermediate_size": 48,
    "vocab_size": 64, "max_position_embeddings": 64})";
  return path.string();
}

const std::string kSmall = " --bandwidth-mib 4 --gemm-size 32 --repeats 1 --gen-len 3";

void expect_one_line_error(const CliResult& r, const std::string& needle) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

TEST(EngineBenchCommand, PrintsPrefillAndDecodeTables) {
  const CliResult r =
      run_servesim("engine bench --model " + tiny_model_file() + " --prompt-len 8 16" + kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("prefill"), std::string::npos);
  EXPECT_NE(r.out.find("%GEMM"), std::string::npos);
  EXPECT_NE(r.out.find("%BW"), std::string::npos);
}

TEST(EngineBenchCommand, JsonHasOnePointPerBatchAndPrompt) {
  const CliResult r = run_servesim("engine bench --json --threads 2 --model " + tiny_model_file() +
                                   " --prompt-len 8 --batch 1 3" + kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["points"].size(), 2u);
  EXPECT_EQ(j["points"][1]["batch"], 3);
  for (const auto& p : j["points"]) {
    EXPECT_GT(p["prefill_tokens_per_s"].get<double>(), 0);
    EXPECT_GT(p["decode_tokens_per_s"].get<double>(), 0);
  }
  EXPECT_GT(j["read_bandwidth_Bps"].get<double>(), 0);
  EXPECT_EQ(j["params"], 19616);
}

TEST(EngineBenchCommand, ProfileReportsTimePerOpOfEachPhase) {
  const CliResult r = run_servesim("engine bench --json --profile --model " + tiny_model_file() +
                                   " --prompt-len 8 --batch 1,2" + kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["points"].size(), 2u);
  for (const auto& p : j["points"]) {
    EXPECT_GT(p["prefill_op_s"]["qkv"].get<double>(), 0);
    EXPECT_GT(p["prefill_op_s"]["attention_prefill"].get<double>(), 0);
    EXPECT_GT(p["decode_op_s"]["mlp"].get<double>(), 0);
    EXPECT_GT(p["decode_op_s"]["attention_decode"].get<double>(), 0);
  }
  const CliResult text = run_servesim("engine bench --profile --model " + tiny_model_file() +
                                      " --prompt-len 8" + kSmall);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("batch 1, prompt 8, decode: qkv"), std::string::npos) << text.out;
}

TEST(EngineBenchCommand, BadInputIsAOneLineError) {
  const std::string model = " --model " + tiny_model_file();
  expect_one_line_error(run_servesim("engine bench --backend tpu" + model + kSmall),
                        "--backend 'tpu': expected cpu or cuda");
  expect_one_line_error(run_servesim("engine bench --prompt-len 62" + model + kSmall),
                        "exceeds max_model_len 64");
  expect_one_line_error(run_servesim("engine bench --model Mixtral-8x7B" + kSmall),
                        "mixture-of-experts");
  const fs::path truncated =
      fs::temp_directory_path() /
      ("servesim_engine_cli_bad_" + std::to_string(::getpid()) + ".safetensors");
  std::ofstream(truncated) << "abc";
  expect_one_line_error(run_servesim("engine bench --prompt-len 8 --checkpoint " +
                                     truncated.string() + model + kSmall),
                        "truncated");
  fs::remove(truncated);
}

// Runs in CI: a build without CUDA names the rebuild, a CUDA build on a machine without a GPU
// names the missing device. Where a GPU is present the bench runs and there is nothing to check.
TEST(EngineBenchCommand, CudaBackendNeedsTheBuildAndADevice) {
  const CliResult r =
      run_servesim("engine bench --backend cuda --model " + tiny_model_file() + kSmall);
  if (r.exit_code == 0) GTEST_SKIP() << "a CUDA device ran the bench";
  expect_one_line_error(
      r, cuda_backend_built()
             ? "engine bench: --backend cuda: no CUDA device found"
             : "engine bench: --backend cuda: this build has no CUDA backend (rebuild with "
               "-DSERVESIM_CUDA=ON on a machine with nvcc)");
}

// The CUDA module is opened only when used: a module path that does not exist costs
// --version and the CPU bench nothing, and `--backend cuda` names it and the loader's reason in
// one line. A build without CUDA has no module to look for and says so.
TEST(EngineBenchCommand, AMissingCudaModuleIsOneLineAndOnlyForCuda) {
  const std::string missing = (fs::temp_directory_path() / "servesim_no_such_module.so").string();
  ::setenv("SERVESIM_CUDA_BACKEND", missing.c_str(), 1);
  const CliResult version = run_servesim("--version");
  const std::string bench = "engine bench --prompt-len 8 --model " + tiny_model_file() + kSmall;
  const CliResult cpu = run_servesim(bench);
  const CliResult cuda = run_servesim(bench + " --backend cuda");
  ::unsetenv("SERVESIM_CUDA_BACKEND");
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(cpu.exit_code, 0) << cpu.err;
  if (!cuda_backend_built()) {
    expect_one_line_error(cuda, "this build has no CUDA backend");
    return;
  }
  expect_one_line_error(
      cuda, "engine bench: --backend cuda: cannot load the CUDA backend module " + missing + ": ");
  EXPECT_NE(cuda.err.find("No such file"), std::string::npos) << cuda.err;
}

}  // namespace
}  // namespace servesim
