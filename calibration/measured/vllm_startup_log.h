// VllmStartupLog: what a vLLM start-up log says about the deployment and its memory budget,
// read line by line whatever each line's prefix ("INFO 05-12 10:11:12 [gpu_worker.py:123]",
// "(EngineCore_0 pid=42)", "(Worker_TP0 pid=7)"). Every field is optional: a log holds the
// lines its version prints and its log level lets through.
//
// Wordings recognised (format strings of vLLM's source, V0 0.4-0.7 and V1 0.8-0.23):
//   config     "Initializing a V1 LLM engine (v0.10.2) with config: model='...', ..."
//              "Initializing an LLM engine (v0.6.4) with config: ..." (V0),
//              "non-default args: {...}", "vLLM API server version 0.6.4",
//              "Chunked prefill is enabled with max_num_batched_tokens=8192."
//   weights    "Model loading took 14.9888 GiB ...", "Loading model weights took 14.9888 GB"
//   profiling  V0 0.6.0-0.6.4 "Memory profiling results: total_gpu_memory=23.58GiB ...
//              peak_torch_memory=17.06GiB ... non_torch_memory=0.35GiB kv_cache_size=3.81GiB
//              gpu_memory_utilization=0.90"; V0 0.6.5+ and V1 0.8-0.10 "the current vLLM
//              instance can use total_gpu_memory (X GiB) x gpu_memory_utilization (U) = R GiB"
//              and "model weights take W GiB; non_torch_memory takes N GiB; PyTorch
//              activation peak memory takes A GiB; the rest of the memory reserved for KV
//              Cache is K GiB."
//   KV         "Available KV cache memory: X GiB", "GPU KV cache size: N tokens",
//              "Maximum concurrency for L tokens per request: X.XXx",
//              "# GPU blocks: N, # CPU blocks: M" (V0; also "# CUDA blocks"),
//              "num_gpu_blocks is: N"
//   graphs     "Graph capturing finished in N secs, took X GiB", 0.21+ "Profiling CUDA graph
//              memory: PIECEWISE=N (largest=B), FULL=M (largest=B)", "Estimated CUDA
//              graph memory: X GiB total" and "CUDA graph pool memory: X GiB (actual), Y GiB
//              (estimated)"
//   advice     V1 "Free memory on device (F/T GiB) on startup. Desired GPU memory
//              utilization is (U, R GiB). Actual usage is W GiB for consumed memory (weights
//              + non-torch), A GiB for peak activation, and C GiB for CUDAGraph memory."
// GiB figures become bytes (x 2^30): they carry the log's rounding (+-0.005 GiB).
//
// parse() throws ConfigError when the log holds none of the KV lines (it says which lines it
// expected), and naming the line when a recognised line's figure is no number (read whole,
// locale-free), a GiB figure is beyond 1 PiB, a count beyond 2^31 - 1, a utilization outside
// [0, 1] or a concurrency negative. A version servesim does not model is kept in
// unmodelled_version for the caller to refuse or override. Plain value; thread-safe.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>

#include "models/engine_config.h"

namespace servesim {

struct VllmStartupLog {
  std::string origin;  // file name, for messages

  // Deployment, from the config line and the non-default args.
  std::optional<VllmVersion> version;
  std::optional<std::string> version_text;  // as logged: "0.10.2", "0.11.1rc6.dev115+g..."
  std::optional<bool> v1_engine;
  // Why version_text is no modelled release, when it is not (version then unset).
  std::optional<std::string> unmodelled_version;
  std::optional<std::string> model;  // as given to vLLM: "meta-llama/Llama-3.1-8B"
  std::optional<int> tensor_parallel_size;
  std::optional<int> pipeline_parallel_size;
  std::optional<std::string> dtype;           // vLLM's: "bfloat16", "float16"
  std::optional<std::string> quantization;    // "fp8", "compressed-tensors"; absent: none
  std::optional<std::string> kv_cache_dtype;  // "auto", "fp8"
  std::optional<int> max_model_len;           // tokens (max_seq_len in the config line)
  std::optional<double> gpu_memory_utilization;
  std::optional<int> block_size;  // tokens
  std::optional<bool> enforce_eager;
  std::optional<bool> enable_chunked_prefill;
  std::optional<int> max_num_seqs;
  std::optional<int> max_num_batched_tokens;

  // Memory, bytes per GPU (the first worker's lines).
  std::optional<int64_t> total_bytes;          // torch.cuda.mem_get_info total
  std::optional<int64_t> requested_bytes;      // total x utilization
  std::optional<int64_t> model_loading_bytes;  // "Model loading took"
  std::optional<int64_t> weights_bytes;        // profiling line's "model weights take"
  std::optional<int64_t> non_torch_bytes;
  std::optional<int64_t> activation_bytes;    // torch peak increase of the profiling run
  std::optional<int64_t> peak_torch_bytes;    // V0 0.6.0-0.6.4: the peak, weights included
  std::optional<int64_t> kv_reserved_bytes;   // profiling line's "rest ... for KV Cache"
  std::optional<int64_t> available_kv_bytes;  // "Available KV cache memory"
  std::optional<int64_t> kv_cache_tokens;     // "GPU KV cache size"
  std::optional<int> concurrency_len;         // tokens per request of the concurrency line
  std::optional<double> max_concurrency;
  std::optional<int64_t> num_gpu_blocks;
  std::optional<int64_t> num_cpu_blocks;
  std::optional<int64_t> cuda_graph_estimate_bytes;  // 0.21+: subtracted from the KV budget
  std::optional<int64_t> cuda_graph_captured_bytes;  // "Graph capturing finished ..., took"
  std::optional<int> cuda_graphs_piecewise;
  std::optional<int> cuda_graphs_full;

  static VllmStartupLog parse(std::istream& in, const std::string& origin);
  static VllmStartupLog read_file(const std::string& path);

  // KV-cache memory vLLM sized its blocks from: "Available KV cache memory", else the
  // profiling line's remainder.
  std::optional<int64_t> kv_bytes() const {
    return available_kv_bytes ? available_kv_bytes : kv_reserved_bytes;
  }
};

}  // namespace servesim
