#include "models/engine_config.h"

#include <cctype>
#include <cmath>
#include <cstdio>

#include "models/config_error.h"
#include "models/hardware_spec.h"
#include "models/model_spec.h"

namespace servesim {
namespace {

// vLLM (engine/arg_utils.py get_batch_defaults) gives GPUs with >= 70 GiB, except the
// A100, larger API-server batches.
bool is_large_non_a100(const HardwareSpec& gpu) {
  const bool a100 = gpu.name.find("A100") != std::string::npos;
  return gpu.memory_total_gib() >= 70.0 && !a100;
}

}  // namespace

VllmVersion VllmVersion::parse(const std::string& text, const std::string& field) {
  size_t i = !text.empty() && (text[0] == 'v' || text[0] == 'V') ? 1 : 0;
  auto number = [&](int& out) {
    const size_t start = i;
    out = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && i - start < 4) {
      out = out * 10 + (text[i++] - '0');
    }
    return i > start;
  };
  VllmVersion v;
  const bool ok = number(v.major) && i < text.size() && text[i++] == '.' && number(v.minor);
  const std::string range =
      kOldestModelledVllm.to_string() + " to " + kNewestModelledVllm.to_string();
  if (!ok) {
    throw ConfigError(field + ": '" + text + "' is not a vLLM version; give one such as " +
                      kNewestModelledVllm.to_string() + " (servesim models " + range + ")");
  }
  if (!v.at_least(kOldestModelledVllm.major, kOldestModelledVllm.minor) ||
      v.at_least(kNewestModelledVllm.major, kNewestModelledVllm.minor + 1)) {
    throw ConfigError(field + ": vLLM " + v.to_string() + " is not modelled (servesim models " +
                      range + "); pass the nearest modelled version, e.g. " +
                      kNewestModelledVllm.to_string());
  }
  return v;
}

std::string VllmVersion::to_string() const {
  return std::to_string(major) + "." + std::to_string(minor);
}

EngineConfig EngineConfig::resolved_for(const ModelSpec& model, const HardwareSpec& gpu) const {
  EngineConfig r = *this;
  if (r.max_model_len == 0) r.max_model_len = model.max_position_embeddings;
  // V0 (before 0.8) had one default for every GPU: 256 sequences, 512 tokens per step with
  // chunked prefill (engine/arg_utils.py); V1 sizes them by GPU.
  const bool large = r.vllm_version.v1_engine() && is_large_non_a100(gpu);
  const bool v0 = !r.vllm_version.v1_engine();
  if (r.max_num_seqs == 0) r.max_num_seqs = large ? 1024 : 256;
  if (r.max_num_batched_tokens == 0) {
    r.max_num_batched_tokens = large ? 8192 : v0 ? (r.enable_chunked_prefill ? 512 : 2048) : 2048;
    // Without chunked prefill a whole prompt must fit one step.
    if (!r.enable_chunked_prefill && r.max_num_batched_tokens < r.max_model_len) {
      r.max_num_batched_tokens = r.max_model_len;
    }
  }
  return r;
}

CudaGraphMode EngineConfig::cuda_graph_mode() const {
  if (enforce_eager) return CudaGraphMode::kNone;
  if (cudagraph_mode) return *cudagraph_mode;
  if (!vllm_version.v1_engine()) return CudaGraphMode::kFullDecodeOnly;
  return vllm_version.at_least(0, 11) ? CudaGraphMode::kFullAndPiecewise
                                      : CudaGraphMode::kPiecewise;
}

void EngineConfig::validate(const ModelSpec& model) const {
  if (speculative) speculative->validate(model);
  // The compilation config's cudagraph_mode arrived in vLLM 0.10 (vllm-project/vllm#20059).
  if (cudagraph_mode && !vllm_version.at_least(0, 10)) {
    throw ConfigError("cudagraph_mode needs vLLM 0.10 or later (engine.vllm_version is " +
                      vllm_version.to_string() + "); drop it, or use enforce_eager for no graphs");
  }
  if (cudagraph_mode && enforce_eager && *cudagraph_mode != CudaGraphMode::kNone) {
    throw ConfigError("cudagraph_mode " + std::string(cuda_graph_mode_name(*cudagraph_mode)) +
                      " contradicts enforce_eager (no graphs); drop one of them");
  }
  // --async-scheduling arrived in vLLM 0.10 (vllm-project/vllm#19970).
  if (async_scheduling && !vllm_version.at_least(0, 10)) {
    throw ConfigError("--async-scheduling needs vLLM 0.10 or later (engine.vllm_version is " +
                      vllm_version.to_string() + "); drop it or raise the version");
  }
  if (kv_offloading_size_gib) {
    if (!(*kv_offloading_size_gib > 0 && *kv_offloading_size_gib <= 1e5)) {
      throw ConfigError("--kv-offloading-size must be in (0, 100000] GiB");
    }
    if (!enable_prefix_caching) {
      throw ConfigError(
          "--kv-offloading-size needs prefix caching: the host tier finds blocks by their "
          "prefix hash; drop --no-enable-prefix-caching");
    }
  }
  if (kv_offloading_bandwidth_Bps) {
    if (!kv_offloading_size_gib) {
      throw ConfigError("kv_offloading_bandwidth_GBps needs --kv-offloading-size");
    }
    if (!(*kv_offloading_bandwidth_Bps > 0 && *kv_offloading_bandwidth_Bps <= 1e13)) {
      throw ConfigError("kv_offloading_bandwidth_GBps must be in (0, 10000] GB/s");
    }
  }
  if (!(gpu_memory_utilization > 0 && gpu_memory_utilization <= 1) ||
      !std::isfinite(gpu_memory_utilization)) {
    char got[32];
    std::snprintf(got, sizeof got, "%g", gpu_memory_utilization);
    throw ConfigError("--gpu-memory-utilization must be in (0, 1], got " + std::string(got));
  }
  if (block_size <= 0 || block_size > 1024) {
    throw ConfigError("--block-size must be in [1, 1024], got " + std::to_string(block_size));
  }
  if (max_model_len <= 0) {
    throw ConfigError("--max-model-len must be > 0, got " + std::to_string(max_model_len));
  }
  if (max_model_len > model.max_position_embeddings && !allow_long_max_model_len) {
    throw ConfigError("--max-model-len " + std::to_string(max_model_len) + " exceeds " +
                      model.name + "'s max_position_embeddings (" +
                      std::to_string(model.max_position_embeddings) +
                      "); lower --max-model-len, or pass --allow-long-max-model-len if the "
                      "model's RoPE scaling supports it");
  }
  if (max_num_seqs <= 0 || max_num_seqs > 1'000'000) {
    throw ConfigError("--max-num-seqs must be in [1, 1000000], got " +
                      std::to_string(max_num_seqs));
  }
  if (max_num_batched_tokens <= 0 || max_num_batched_tokens > 10'000'000) {
    throw ConfigError("--max-num-batched-tokens must be in [1, 10000000], got " +
                      std::to_string(max_num_batched_tokens));
  }
  if (!enable_chunked_prefill && max_num_batched_tokens < max_model_len) {
    throw ConfigError("--max-num-batched-tokens (" + std::to_string(max_num_batched_tokens) +
                      ") is below --max-model-len (" + std::to_string(max_model_len) +
                      ") with chunked prefill off; raise it or enable chunked prefill");
  }
  if (kv_cache_dtype && !is_kv_cache_dtype(*kv_cache_dtype)) {
    throw ConfigError("--kv-cache-dtype must be bf16, fp16, fp32 or fp8, got " +
                      std::string(dtype_name(*kv_cache_dtype)));
  }
  if (non_torch_memory_bytes && *non_torch_memory_bytes < 0) {
    throw ConfigError("--non-torch-memory must be >= 0");
  }
  if (cuda_graph_memory_bytes && *cuda_graph_memory_bytes < 0) {
    throw ConfigError("--cuda-graph-memory must be >= 0");
  }
  if (activation_memory_bytes && *activation_memory_bytes < 0) {
    throw ConfigError("--activation-memory must be >= 0");
  }
  if (gpu_memory_bytes && *gpu_memory_bytes <= 0) {
    throw ConfigError("--gpu-memory-bytes must be > 0");
  }
  if (kv_cache_memory_bytes && *kv_cache_memory_bytes <= 0) {
    throw ConfigError("--kv-cache-memory must be > 0");
  }
  if (num_gpu_blocks_override && *num_gpu_blocks_override <= 0) {
    throw ConfigError("--num-gpu-blocks-override must be > 0");
  }
}

}  // namespace servesim
