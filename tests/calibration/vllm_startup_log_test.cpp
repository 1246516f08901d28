// VllmStartupLog on excerpts in each version's wording (tests/calibration/data/vllm-logs,
// figures of kv-capacity-observations.csv rows), and on logs it must refuse.
#include "calibration/measured/vllm_startup_log.h"

#include <gtest/gtest.h>

#include <sstream>

#include "models/config_error.h"

namespace servesim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

VllmStartupLog read(const std::string& name) {
  return VllmStartupLog::read_file(SERVESIM_SOURCE_DIR "/tests/calibration/data/vllm-logs/" + name);
}

double gib(const std::optional<int64_t>& bytes) {
  return bytes ? static_cast<double>(*bytes) / kGiB : -1;
}

TEST(VllmStartupLog, ReadsV0ProfilingResultsOf064) {
  const VllmStartupLog log = read("kv02-v0.6.4-llama-3.1-8b-rtx3090.log");
  ASSERT_TRUE(log.version);
  EXPECT_EQ(log.version->to_string(), "0.6");
  EXPECT_EQ(*log.version_text, "0.6.4.post1");
  EXPECT_FALSE(*log.v1_engine);
  EXPECT_EQ(*log.model, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(*log.tensor_parallel_size, 1);
  EXPECT_EQ(*log.max_model_len, 20000);
  EXPECT_EQ(*log.dtype, "bfloat16");
  EXPECT_FALSE(log.quantization);
  EXPECT_FALSE(*log.enforce_eager);
  EXPECT_FALSE(*log.enable_chunked_prefill);
  EXPECT_NEAR(gib(log.total_bytes), 23.58, 1e-9);
  EXPECT_DOUBLE_EQ(*log.gpu_memory_utilization, 0.9);
  EXPECT_NEAR(gib(log.model_loading_bytes), 14.9888, 1e-9);
  EXPECT_NEAR(gib(log.non_torch_bytes), 0.35, 1e-9);
  // peak_torch_memory 17.06 GiB counts the weights.
  EXPECT_NEAR(gib(log.activation_bytes), 17.06 - 14.9888, 1e-9);
  EXPECT_NEAR(gib(log.kv_bytes()), 3.81, 1e-9);
  EXPECT_EQ(*log.num_gpu_blocks, 1952);
  EXPECT_EQ(*log.num_cpu_blocks, 2048);
  EXPECT_EQ(*log.concurrency_len, 20000);
  EXPECT_DOUBLE_EQ(*log.max_concurrency, 1.56);
  EXPECT_FALSE(log.kv_cache_tokens);
}

TEST(VllmStartupLog, ReadsTheLinesOfALogThatRefusedToStart) {
  const VllmStartupLog log = read("kv03-v0.6.4-llama-3.1-8b-rtx3090-refused.log");
  EXPECT_EQ(*log.max_model_len, 29000);
  EXPECT_EQ(*log.num_gpu_blocks, 1478);
  EXPECT_DOUBLE_EQ(*log.max_concurrency, 0.82);
  EXPECT_NEAR(gib(log.activation_bytes), 17.98 - 14.9888, 1e-9);
}

TEST(VllmStartupLog, ReadsV1KvLinesOnceWhateverTheWorkerPrefix) {
  const VllmStartupLog log = read("kv07-v0.10-qwen3-235b-fp8-h100-tp4.log");
  EXPECT_EQ(log.version->to_string(), "0.10");
  EXPECT_TRUE(*log.v1_engine);
  EXPECT_EQ(*log.model, "Qwen/Qwen3-235B-A22B-FP8");
  EXPECT_EQ(*log.tensor_parallel_size, 4);
  EXPECT_EQ(*log.quantization, "fp8");
  EXPECT_EQ(*log.kv_cache_dtype, "auto");
  EXPECT_NEAR(gib(log.available_kv_bytes), 8.11, 1e-9);
  EXPECT_EQ(*log.kv_cache_tokens, 178880);
  EXPECT_EQ(*log.concurrency_len, 40960);
  EXPECT_FALSE(log.total_bytes);  // V1 at INFO level does not print it
  EXPECT_FALSE(log.non_torch_bytes);
}

TEST(VllmStartupLog, ReadsV04BlocksLine) {
  const VllmStartupLog log = read("kv09-v0.4-deepseek-coder-t4-tp2.log");
  EXPECT_EQ(log.version->to_string(), "0.4");
  EXPECT_EQ(*log.dtype, "float16");
  EXPECT_EQ(*log.tensor_parallel_size, 2);
  EXPECT_EQ(*log.max_model_len, 16384);
  EXPECT_EQ(*log.num_gpu_blocks, 507);
  EXPECT_EQ(*log.num_cpu_blocks, 1024);
}

TEST(VllmStartupLog, ReadsTheCudaGraphProfilingOf021) {
  const VllmStartupLog log = read("v0.2x-estimated-cuda-graphs.log");
  EXPECT_EQ(log.version->to_string(), "0.22");
  EXPECT_TRUE(log.version->subtracts_cuda_graphs());
  EXPECT_EQ(*log.cuda_graphs_piecewise, 51);
  EXPECT_EQ(*log.cuda_graphs_full, 35);
  EXPECT_NEAR(gib(log.cuda_graph_estimate_bytes), 1.58, 1e-9);
  EXPECT_NEAR(gib(log.cuda_graph_captured_bytes), 1.29, 1e-9);
  EXPECT_NEAR(gib(log.model_loading_bytes), 17.66, 1e-9);
  EXPECT_EQ(*log.kv_cache_tokens, 331584);
  EXPECT_EQ(*log.max_model_len, 65536);
  EXPECT_FALSE(log.model);
}

TEST(VllmStartupLog, ReadsTheV1ProfilingLinesAndNonDefaultArgs) {
  std::istringstream in(
      "(APIServer pid=1) INFO 06-14 04:56:37 [api_utils.py:273] non-default args: {'model': "
      "'Qwen/Qwen3-8B', 'max_model_len': 32768, 'enforce_eager': True, 'tensor_parallel_size': "
      "2, 'gpu_memory_utilization': 0.82, 'max_num_batched_tokens': 2048, 'max_num_seqs': 64, "
      "'block_size': 32}\n"
      "INFO 03-14 09:13:07 [gpu_worker.py:227] Memory profiling takes 11.85 seconds\n"
      "INFO 03-14 09:13:07 [gpu_worker.py:227] the current vLLM instance can use "
      "total_gpu_memory (79.11GiB) x gpu_memory_utilization (0.82) = 64.87GiB\n"
      "INFO 03-14 09:13:07 [gpu_worker.py:227] model weights take 7.63GiB; non_torch_memory "
      "takes 0.08GiB; PyTorch activation peak memory takes 1.40GiB; the rest of the memory "
      "reserved for KV Cache is 55.76GiB.\n");
  const VllmStartupLog log = VllmStartupLog::parse(in, "inline");
  EXPECT_FALSE(log.version);
  EXPECT_EQ(*log.model, "Qwen/Qwen3-8B");
  EXPECT_EQ(*log.max_model_len, 32768);
  EXPECT_TRUE(*log.enforce_eager);
  EXPECT_EQ(*log.tensor_parallel_size, 2);
  EXPECT_EQ(*log.max_num_seqs, 64);
  EXPECT_EQ(*log.max_num_batched_tokens, 2048);
  EXPECT_EQ(*log.block_size, 32);
  EXPECT_NEAR(gib(log.requested_bytes), 64.87, 1e-9);
  EXPECT_NEAR(gib(log.weights_bytes), 7.63, 1e-9);
  EXPECT_NEAR(gib(log.activation_bytes), 1.40, 1e-9);
  EXPECT_NEAR(gib(log.kv_bytes()), 55.76, 1e-9);
}

// The wording of the V1 advice and pool lines; the figures are illustrative.
TEST(VllmStartupLog, ReadsTheV1AdviceLineAndThePoolLine) {
  std::istringstream in(
      "(Worker_TP0 pid=9) INFO 09-01 10:00:00 [gpu_worker.py:300] Free memory on device "
      "(78.50/79.18 GiB) on startup. Desired GPU memory utilization is (0.9, 71.26 GiB). Actual "
      "usage is 16.40 GiB for consumed memory (weights + non-torch), 1.25 GiB for peak "
      "activation, and 0.61 GiB for CUDAGraph memory. Replace gpu_memory_utilization config "
      "with `--kv-cache-memory=57571737190` (53.62 GiB) to fit into requested memory\n"
      "(Worker_TP0 pid=9) INFO 09-01 10:00:20 [gpu_model_runner.py:4000] CUDA graph pool "
      "memory: 0.52 GiB (actual), 0.61 GiB (estimated)\n"
      "(EngineCore_DP0 pid=8) INFO 09-01 10:00:01 [kv_cache_utils.py:1] GPU KV cache size: "
      "439,216 tokens\n");
  const VllmStartupLog log = VllmStartupLog::parse(in, "inline");
  EXPECT_NEAR(gib(log.total_bytes), 79.18, 1e-9);
  EXPECT_DOUBLE_EQ(*log.gpu_memory_utilization, 0.9);
  EXPECT_NEAR(gib(log.requested_bytes), 71.26, 1e-9);
  EXPECT_NEAR(gib(log.activation_bytes), 1.25, 1e-9);
  EXPECT_NEAR(gib(log.cuda_graph_estimate_bytes), 0.61, 1e-9);
  EXPECT_NEAR(gib(log.cuda_graph_captured_bytes), 0.52, 1e-9);
}

void expect_one_line_error(const std::string& name, const std::string& fragment) {
  try {
    read(name);
    ADD_FAILURE() << name << " was accepted";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(VllmStartupLog, RefusesALogWithoutKvLinesSayingWhichItExpected) {
  expect_one_line_error("no-memory-lines.log", "expected 'Available KV cache memory: X GiB'");
}

TEST(VllmStartupLog, KeepsWhyAVersionIsNotModelled) {
  const VllmStartupLog log = read("unknown-version.log");
  EXPECT_FALSE(log.version);
  EXPECT_EQ(*log.version_text, "0.99.0");
  ASSERT_TRUE(log.unmodelled_version);
  EXPECT_NE(log.unmodelled_version->find("vLLM 0.99 is not modelled"), std::string::npos);
  EXPECT_EQ(*log.kv_cache_tokens, 100000);
}

// What fuzz_vllm_startup_log found (tests/fuzz/corpus/fuzz_vllm_startup_log/regress-*): numbers
// the line patterns match but std::stod / std::stoll threw on (std::invalid_argument escaped),
// counts that wrapped into a negative int, GiB figures whose byte count overflowed, and ratios
// outside their range. Each is a one-line ConfigError naming the line and what it read.
std::string parse_error(const std::string& text) {
  std::istringstream in(text);
  try {
    VllmStartupLog::parse(in, "vllm.log");
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for " << text;
  return "";
}

TEST(VllmStartupLog, AMatchedFigureThatIsNoNumberNamesItsLine) {
  EXPECT_EQ(parse_error("GPU KV cache size: 10 tokens\nModel loading took . GiB\n"),
            "vllm.log line 2: in 'Model loading took . GiB': '.' is not a number");
  EXPECT_EQ(parse_error("Available KV cache memory: 1.2.3 GiB\n"),
            "vllm.log line 1: in 'Available KV cache memory: 1.2.3 GiB': '1.2.3' is not a number");
  EXPECT_NE(parse_error("Initializing an LLM engine (v0.6.4) with config: model='m', "
                        "gpu_memory_utilization=nan, x\n# GPU blocks: 1, # CPU blocks: 1\n")
                .find("'nan' is not a number"),
            std::string::npos);
}

TEST(VllmStartupLog, CountsBeyondAnIntAreRefusedNotWrapped) {
  EXPECT_NE(parse_error("# GPU blocks: 99999999999999999999, # CPU blocks: 1\n")
                .find("'99999999999999999999' is not a whole number"),
            std::string::npos);
  EXPECT_NE(parse_error("Initializing an LLM engine (v0.6.4) with config: max_seq_len=4294967297, "
                        "x\nGPU KV cache size: 10 tokens\n")
                .find("4294967297 is not in [0, 2^31 - 1]"),
            std::string::npos);
  std::istringstream in("GPU KV cache size: 2,147,483,647 tokens\n");
  EXPECT_EQ(*VllmStartupLog::parse(in, "vllm.log").kv_cache_tokens, 2147483647);
}

TEST(VllmStartupLog, GibFiguresBeyondAPebibyteAndRatiosOutOfRangeAreRefused) {
  EXPECT_NE(parse_error("Available KV cache memory: 99999999999999999999 GiB\n")
                .find("GiB is beyond 1 PiB"),
            std::string::npos);
  EXPECT_NE(parse_error("GPU KV cache size: 10 tokens\ncurrent --gpu-memory-utilization=7 is "
                        "equivalent\n")
                .find("gpu_memory_utilization 7 is not in [0, 1]"),
            std::string::npos);
  EXPECT_NE(parse_error("GPU KV cache size: 10 tokens\nMaximum concurrency for 4 tokens per "
                        "request: -2.5x\n")
                .find("-2.5 is negative"),
            std::string::npos);
  std::istringstream in("Available KV cache memory: -0.5 GiB\n");  // a log that refused to start
  EXPECT_EQ(*VllmStartupLog::parse(in, "vllm.log").available_kv_bytes, -(int64_t{1} << 29));
}

// fuzz_memory_log: a version of byte 0xFF read, then nlohmann's type_error escaped the JSON
// report (memory --from-log --json).
TEST(VllmStartupLog, TextThatIsNotUtf8IsRefusedNamingTheField) {
  EXPECT_EQ(parse_error("Initializing an LLM engine (v0.\xff) with config: x\n"
                        "GPU KV cache size: 10 tokens\n"),
            "vllm.log: the log's vLLM version is not valid UTF-8");
  EXPECT_EQ(parse_error("non-default args: {'model': '\xc0\x80'}\nGPU KV cache size: 10 tokens\n"),
            "vllm.log: the log's model is not valid UTF-8");
  std::istringstream in(
      "non-default args: {'model': '/models/\xc3\xa9t\xc3\xa9'}\n"
      "GPU KV cache size: 10 tokens\n");
  EXPECT_EQ(*VllmStartupLog::parse(in, "vllm.log").model, "/models/\xc3\xa9t\xc3\xa9");
}

TEST(VllmStartupLog, RefusesAMissingFile) {
  expect_one_line_error("absent.log", "cannot open");
}

}  // namespace
}  // namespace servesim
