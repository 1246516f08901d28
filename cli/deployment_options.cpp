#include "cli/deployment_options.h"

#include "cli/size_parse.h"
#include "models/config_error.h"
#include "models/cuda_graph_mode.h"

namespace servesim {

void DeploymentOptions::add_to(CLI::App& app, bool model_required) {
  app.add_option("--model", model, "Catalog name (see 'servesim models') or a config.json path")
      ->required(model_required);
  app.add_option("--gpu", gpu, "Catalog name (see 'servesim gpus') or a GPU JSON file")->required();
  app.add_option("--tensor-parallel-size,--tp,-t", tp, "GPUs each layer is split over")
      ->capture_default_str();
  app.add_option("--pipeline-parallel-size,--pp", pp, "Pipeline stages")->capture_default_str();
  app.add_option("--data-parallel-size,--dp", dp,
                 "Data-parallel replicas (with --enable-expert-parallel: EP = TP x DP)")
      ->capture_default_str();
  app.add_flag("--enable-expert-parallel", enable_expert_parallel,
               "MoE experts split over TP x DP ranks instead of tensor parallel (vLLM's flag)");
  app.add_option("--gpu-memory-utilization", gpu_memory_utilization,
                 "Fraction of GPU memory the engine may use")
      ->capture_default_str();
  app.add_option("--max-model-len", max_model_len,
                 "Longest request in tokens (default: the model's max_position_embeddings)");
  app.add_option("--max-num-seqs", max_num_seqs,
                 "Most sequences per step (default: 1024 on >= 70 GiB non-A100 GPUs, else 256)");
  app.add_option("--max-num-batched-tokens", max_num_batched_tokens,
                 "Token budget per step (default: 8192 on >= 70 GiB non-A100 GPUs, else 2048)");
  app.add_option("--block-size", block_size, "Tokens per KV block")->capture_default_str();
  app.add_option("--dtype", dtype,
                 "Weight dtype: auto (the model's own), bf16, fp16, fp32, fp8, int8, int4")
      ->capture_default_str();
  app.add_option("--kv-cache-dtype", kv_cache_dtype, "auto (16-bit), bf16, fp16, fp8")
      ->capture_default_str();
  app.add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", enable_prefix_caching,
               "Prefix caching (on by default, as in vLLM V1)");
  app.add_flag("--enable-chunked-prefill,!--no-enable-chunked-prefill", enable_chunked_prefill,
               "Chunked prefill (on by default, as in vLLM V1)");
  app.add_option("--non-torch-memory", non_torch_memory,
                 "Override the non-torch overhead per GPU (e.g. 0.5GiB)");
  app.add_option("--cuda-graph-memory", cuda_graph_memory,
                 "CUDA-graph memory to subtract per GPU (e.g. 1GiB; default: modelled, "
                 "subtracted from vLLM 0.21)");
  app.add_option("--activation-memory", activation_memory,
                 "Override the profiling run's activation peak per GPU (e.g. 1.2GiB)");
  app.add_option("--gpu-memory-bytes", gpu_memory_bytes,
                 "GPU memory as torch.cuda.mem_get_info reports it (bytes, or e.g. 23.58GiB)");
  app.add_option("--vllm-version", vllm_version,
                 "vLLM release whose memory rules apply (default: " +
                     kNewestModelledVllm.to_string() + ", the newest modelled)");
  app.add_flag("--enforce-eager", enforce_eager, "No CUDA graphs (vLLM --enforce-eager)");
  app.add_option("--cudagraph-mode", cudagraph_mode,
                 "CUDA graphs as vLLM's compilation config names them: NONE, PIECEWISE, FULL, "
                 "FULL_DECODE_ONLY or FULL_AND_PIECEWISE (default: the release's)");
  app.add_option("--kv-cache-memory", kv_cache_memory,
                 "KV cache size per GPU, bypassing --gpu-memory-utilization (e.g. 20GiB)");
  app.add_option("--num-gpu-blocks-override", num_gpu_blocks_override,
                 "Use this many KV blocks instead of the computed number");
  app.add_flag("--allow-long-max-model-len", allow_long_max_model_len,
               "Allow --max-model-len above the model's max_position_embeddings "
               "(vLLM: VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)");
  app.add_option("--speculative-config", speculative_config,
                 "Speculative decoding in vLLM's JSON form, e.g. "
                 "'{\"model\":\"Llama-3.1-8B\",\"num_speculative_tokens\":4}' (a draft "
                 "model's weights and KV share the GPU)");
  app.add_option("--kv-offloading-size", kv_offloading_size,
                 "GiB of host memory for offloaded KV blocks, summed over the TP x PP ranks "
                 "(vLLM 0.12+ --kv-offloading-size; docs/kv-offload.md)");
  app.add_option("--kv-offloading-backend", kv_offloading_backend,
                 "native (vLLM's OffloadingConnector), the only one modelled")
      ->capture_default_str();
}

DeploymentOptions::Resolved DeploymentOptions::resolve(const Catalog& catalog) const {
  Resolved r{catalog.resolve_model(model), catalog.resolve_gpu(gpu), {}, {}};
  r.parallel.tp = tp;
  r.parallel.pp = pp;
  r.parallel.dp = dp;
  r.parallel.enable_expert_parallel = enable_expert_parallel;
  EngineConfig& e = r.engine;
  e.gpu_memory_utilization = gpu_memory_utilization;
  e.max_model_len = max_model_len;
  e.max_num_seqs = max_num_seqs;
  e.max_num_batched_tokens = max_num_batched_tokens;
  e.block_size = block_size;
  if (max_model_len < 0) throw ConfigError("--max-model-len must be > 0");
  if (max_num_seqs < 0) throw ConfigError("--max-num-seqs must be > 0");
  if (max_num_batched_tokens < 0) throw ConfigError("--max-num-batched-tokens must be > 0");
  if (dtype != "auto") e.dtype = parse_dtype(dtype, "--dtype");
  if (kv_cache_dtype != "auto") e.kv_cache_dtype = parse_dtype(kv_cache_dtype, "--kv-cache-dtype");
  e.enable_prefix_caching = enable_prefix_caching;
  e.enable_chunked_prefill = enable_chunked_prefill;
  if (!non_torch_memory.empty()) {
    e.non_torch_memory_bytes = parse_size_bytes(non_torch_memory, "--non-torch-memory");
  }
  if (!cuda_graph_memory.empty()) {
    e.cuda_graph_memory_bytes = parse_size_bytes(cuda_graph_memory, "--cuda-graph-memory");
  }
  if (!kv_cache_memory.empty()) {
    e.kv_cache_memory_bytes = parse_size_bytes(kv_cache_memory, "--kv-cache-memory");
  }
  if (!activation_memory.empty()) {
    e.activation_memory_bytes = parse_size_bytes(activation_memory, "--activation-memory");
  }
  if (!gpu_memory_bytes.empty()) {
    e.gpu_memory_bytes = parse_size_bytes(gpu_memory_bytes, "--gpu-memory-bytes");
  }
  if (!vllm_version.empty()) e.vllm_version = VllmVersion::parse(vllm_version, "--vllm-version");
  e.enforce_eager = enforce_eager;
  if (!cudagraph_mode.empty()) {
    e.cudagraph_mode = parse_cuda_graph_mode(cudagraph_mode, "--cudagraph-mode");
  }
  if (num_gpu_blocks_override != 0) e.num_gpu_blocks_override = num_gpu_blocks_override;
  e.allow_long_max_model_len = allow_long_max_model_len;
  if (!speculative_config.empty()) {
    e.speculative =
        SpeculativeConfig::from_text(speculative_config, "--speculative-config", &catalog);
  }
  if (kv_offloading_backend != "native") {
    throw ConfigError(
        "--kv-offloading-backend: only \"native\" (vLLM's OffloadingConnector) is "
        "modelled, got \"" +
        kv_offloading_backend + "\"");
  }
  if (kv_offloading_size != 0) e.kv_offloading_size_gib = kv_offloading_size;
  return r;
}

}  // namespace servesim
