#include "models/memory_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "models/config_error.h"

namespace servesim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// vLLM pads the vocabulary of its parallel embedding and LM head to a multiple of 64.
constexpr int64_t kVocabPadding = 64;

// fp32 tensors of one row per sampled sequence alive at the peak of the dummy sampler run
// (logits, probabilities, one sorted copy for top-k/top-p). An estimate: in the only
// logs at hand (KV02/KV03 in docs/memory-model.md) the forward pass dominates the peak.
constexpr double kSamplerFp32Copies = 3.0;

// Device memory one CUDA graph costs per model layer it replays (its kernel nodes and their
// parameter buffers). Fitted to the one capture at hand with a known model: V0 captured
// 35 decode graphs of Qwen2.5-1.5B (28 layers) in 0.17 GiB ("Graph capturing finished in
// 49 secs, took 0.17 GiB"); less the 16 MB pool of its 256-sequence batch, 170 KiB.
constexpr double kCudaGraphBytesPerLayer = 170.0 * 1024;

double format_gib(int64_t bytes) {
  return static_cast<double>(bytes) / kGiB;
}

std::string gib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", format_gib(bytes));
  return buf;
}

std::string utilization_text(double utilization) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", utilization);
  return buf;
}

std::string with_commas(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

double linear_bytes(const ModelSpec& model, const EngineConfig& engine) {
  return dtype_bytes(engine.dtype ? *engine.dtype : model.native_dtype);
}

double expert_bytes(const ModelSpec& model, const EngineConfig& engine) {
  if (engine.dtype) return dtype_bytes(*engine.dtype);
  return dtype_bytes(model.native_expert_dtype ? *model.native_expert_dtype : model.native_dtype);
}

// Embeddings, norms, biases and routers stay in the activation dtype when linear layers
// are quantised, as vLLM's quantisation methods leave them.
double unquantised_bytes(const EngineConfig& engine) {
  return engine.dtype && *engine.dtype == DType::kFp32 ? 4.0 : 2.0;
}

DType kv_dtype(const EngineConfig& engine) {
  return engine.kv_cache_dtype ? *engine.kv_cache_dtype : DType::kBf16;
}

double attention_bytes_per_gpu(const ModelSpec& m, int tp, double lin, double small) {
  const double h = m.hidden_size;
  double bytes = 0;
  if (m.mla) {
    const double qk = m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim;
    const double heads = static_cast<double>(m.num_heads) / tp;
    // Down-projections are replicated on every rank; per-head up-projections are split.
    if (m.mla->q_lora_rank > 0) {
      bytes += lin * (h * m.mla->q_lora_rank + m.mla->q_lora_rank * heads * qk);
      bytes += small * m.mla->q_lora_rank;
    } else {
      bytes += lin * h * heads * qk;
    }
    bytes += lin * h * (m.mla->kv_lora_rank + m.mla->qk_rope_head_dim);
    bytes += small * m.mla->kv_lora_rank;
    bytes += lin * m.mla->kv_lora_rank * heads * (m.mla->qk_nope_head_dim + m.mla->v_head_dim);
    bytes += lin * heads * m.mla->v_head_dim * h;
  } else {
    const double q = static_cast<double>(m.num_heads) / tp * m.head_dim;
    const double kv = static_cast<double>(m.kv_heads_per_rank(tp)) * m.head_dim;
    bytes += lin * (h * (q + 2 * kv) + q * h);
    if (m.qkv_bias) bytes += small * (q + 2 * kv);
    if (m.qk_norm) bytes += small * 2 * m.head_dim;
  }
  if (m.o_bias) bytes += small * h;
  if (m.attention_sinks) bytes += small * static_cast<double>(m.num_heads) / tp;
  return bytes;
}

double ffn_bytes_per_gpu(const ModelSpec& m, int layer, const ParallelConfig& p, double lin,
                         double expert, double small) {
  if (!m.layer_is_moe(layer)) return lin * 3.0 * m.hidden_size * m.intermediate_size / p.tp;
  const MoeSpec& e = *m.moe;
  const double router = static_cast<double>(m.hidden_size) * e.num_experts;
  const double per_expert =
      static_cast<double>(m.expert_params_per_layer()) / (e.num_experts + e.shared_experts);
  // Expert parallelism: num_experts / EP whole routed experts per GPU; shared experts stay
  // split over TP. Without it every expert is split over TP.
  const double experts = p.enable_expert_parallel
                             ? static_cast<double>(e.num_experts) / p.ep() +
                                   static_cast<double>(e.shared_experts) / p.tp
                             : static_cast<double>(e.num_experts + e.shared_experts) / p.tp;
  return expert * per_expert * experts + small * router;
}

double vocab_rows_per_gpu(const ModelSpec& m, int tp) {
  const int64_t padded = (m.vocab_size + kVocabPadding - 1) / kVocabPadding * kVocabPadding;
  return static_cast<double>((padded + tp - 1) / tp);
}

int64_t blocks_for_len(int64_t len, int block_size) {
  return (len + block_size - 1) / block_size;
}

// KV pages one request of `len` tokens needs across the layers of one GPU. Sliding-window
// layers keep only the window (plus the block being written), as vLLM's hybrid allocator does.
int64_t pages_per_request(const ModelSpec& m, int first_layer, int num_layers, int64_t len,
                          int block_size) {
  const int64_t full = blocks_for_len(len, block_size);
  const int64_t window = m.sliding_window > 0
                             ? std::min(full, blocks_for_len(m.sliding_window, block_size) + 1)
                             : full;
  int64_t pages = 0;
  for (int l = first_layer; l < first_layer + num_layers; ++l) {
    pages += m.layer_is_sliding(l) ? window : full;
  }
  return pages;
}

}  // namespace

int64_t weights_bytes_per_gpu(const ModelSpec& m, const ParallelConfig& p, const EngineConfig& e,
                              int stage) {
  const double lin = linear_bytes(m, e);
  const double expert = expert_bytes(m, e);
  const double small = unquantised_bytes(e);
  const int first = p.first_layer_of_stage(m.num_layers, stage);
  const int count = p.layers_in_stage(m.num_layers, stage);
  double bytes = 0;
  for (int l = first; l < first + count; ++l) {
    bytes += attention_bytes_per_gpu(m, p.tp, lin, small);
    bytes += ffn_bytes_per_gpu(m, l, p, lin, expert, small);
    bytes += small * static_cast<double>(m.norm_params_per_layer());
  }
  const double table = small * vocab_rows_per_gpu(m, p.tp) * m.hidden_size;
  const bool first_stage = stage == 0;
  const bool last_stage = stage == p.pp - 1;
  if (first_stage) bytes += table;
  if (last_stage) {
    bytes += small * m.hidden_size;  // final norm
    // A tied LM head shares the embedding table only when both sit on the same stage.
    if (!m.tie_word_embeddings || !first_stage) bytes += table;
  }
  return static_cast<int64_t>(std::llround(bytes));
}

double forward_bytes_per_token(const ModelSpec& m, const ParallelConfig& p, const EngineConfig& e) {
  const double a = unquantised_bytes(e);
  const double heads = static_cast<double>(m.num_heads) / p.tp;
  double attention;
  if (m.mla) {
    const double qk = m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim;
    attention =
        heads * (2 * qk + m.mla->v_head_dim) + m.mla->kv_lora_rank + m.mla->qk_rope_head_dim;
  } else {
    attention = (2 * heads + 2 * m.kv_heads_per_rank(p.tp)) * m.head_dim;
  }
  // The largest per-token working set of one layer: gate/up output plus the activated
  // product for a dense MLP; for MoE the same per routed expert, the per-expert outputs
  // before the weighted sum, and fp32 router logits.
  double mlp = 3.0 * m.intermediate_size / p.tp;
  if (m.is_moe()) {
    const double ie = m.moe->expert_intermediate_size;
    const double moe_mlp = (m.moe->experts_per_token + m.moe->shared_experts) * 3.0 * ie / p.tp +
                           m.moe->experts_per_token * static_cast<double>(m.hidden_size) +
                           2.0 * m.moe->num_experts;
    mlp = m.moe->dense_layers > 0 ? std::max(mlp, moe_mlp) : moe_mlp;
  }
  // Residual, normed input and layer output (3 x hidden) stay alive beside the layer's
  // working set. vLLM logged a peak growing by 109.8 KB per profiling token for
  // Llama-3.1-8B (vllm-project/vllm#10517: 17.06 -> 17.98 GiB from 20,000 to 29,000
  // tokens); this gives 110.6 KB.
  return a * (3.0 * m.hidden_size + std::max(attention, mlp));
}

int64_t activation_peak_bytes(const ModelSpec& m, const ParallelConfig& p, const EngineConfig& e) {
  const double a = unquantised_bytes(e);
  const double tokens = e.max_num_batched_tokens;
  const double seqs = std::min(e.max_num_batched_tokens, e.max_num_seqs);
  const double forward = tokens * forward_bytes_per_token(m, p, e);
  // The sampler runs after the forward pass has released its intermediates, so the peak is
  // the larger of the two: final hidden states of every token plus the LM head output for
  // sampled rows and the fp32 sampler tensors.
  const double sampler =
      tokens * a * m.hidden_size + seqs * m.vocab_size * (a + 4.0 * kSamplerFp32Copies);
  return static_cast<int64_t>(std::llround(std::max(forward, sampler)));
}

CudaGraphPlan cuda_graph_plan(const EngineConfig& e) {
  CudaGraphPlan plan;
  const CudaGraphMode mode = e.cuda_graph_mode();
  if (mode == CudaGraphMode::kNone) return plan;
  const VllmVersion& v = e.vllm_version;
  std::vector<int> sizes;
  if (!v.at_least(0, 11)) {
    // V0 (worker/model_runner.py, full decode graphs, at most 256) and 0.8-0.10
    // (config.py, at most 512): 1, 2, 4, 8.. by 8, up to the first size >= max_num_seqs.
    const int most = v.v1_engine() ? 512 : 256;
    const int cap = std::min(most, std::max(8, (e.max_num_seqs + 7) / 8 * 8));
    for (int s : {1, 2, 4}) sizes.push_back(s);
    for (int s = 8; s <= cap; s += 8) sizes.push_back(s);
  } else {
    // 0.11+ (config/vllm.py): 1, 2, 4, 8..248 by 8, 256.. by 16 up to
    // max_cudagraph_capture_size = min(2 x max_num_seqs, 512, max_num_batched_tokens).
    const int cap = std::min({2 * e.max_num_seqs, 512, e.max_num_batched_tokens});
    for (int s : {1, 2, 4}) sizes.push_back(s);
    for (int s = 8; s < 256; s += 8) sizes.push_back(s);
    for (int s = 256; s <= 512; s += 16) sizes.push_back(s);
    std::erase_if(sizes, [&](int s) { return s > std::max(cap, 1) && s > 1; });
  }
  const int all = static_cast<int>(sizes.size());
  // Whole-model decode graphs serve batches of decode sequences: the sizes up to max_num_seqs.
  const int decode = static_cast<int>(
      std::count_if(sizes.begin(), sizes.end(), [&](int s) { return s <= e.max_num_seqs; }));
  switch (mode) {
    case CudaGraphMode::kPiecewise:
      plan.piecewise = all;
      break;
    case CudaGraphMode::kFull:
      plan.full = all;
      break;
    case CudaGraphMode::kFullDecodeOnly:
      // V0 captured every size of its list as a decode graph.
      plan.full = v.v1_engine() ? decode : all;
      break;
    case CudaGraphMode::kFullAndPiecewise:
      plan.piecewise = all;
      plan.full = decode;
      break;
    case CudaGraphMode::kNone:
      break;
  }
  plan.largest = sizes.empty() ? 0 : sizes.back();
  return plan;
}

int64_t cuda_graph_memory_bytes(const ModelSpec& m, const ParallelConfig& p, const EngineConfig& e,
                                int layers) {
  const CudaGraphPlan plan = cuda_graph_plan(e);
  if (plan.piecewise + plan.full == 0) return 0;
  // Graphs share one memory pool captured largest batch first, so the pool holds the
  // largest batch's activations once; every graph adds its own kernel nodes, which scale
  // with the layers it replays.
  const double pool = plan.largest * forward_bytes_per_token(m, p, e);
  const double nodes =
      static_cast<double>(plan.piecewise + plan.full) * layers * kCudaGraphBytesPerLayer;
  double bytes = pool + nodes;
  // 0.21's estimate captures two graphs per mode and extrapolates the second's cost to
  // the rest, which are smaller: it exceeds what the capture then takes.
  if (e.vllm_version.subtracts_cuda_graphs()) bytes *= kCudaGraphEstimateOverCapture;
  return static_cast<int64_t>(std::llround(bytes));
}

namespace {

// Speculative decoding's share of one GPU: vLLM loads the drafter in the same worker (its
// weights count in "Model loading took") and gives its layers pages in the same KV pool.
// MTP / EAGLE heads: one decoder layer of the target's shape (embedding and LM head shared).
struct DraftMemory {
  int64_t weights_bytes = 0;  // per GPU
  int64_t block_bytes = 0;    // KV bytes one block index takes over the draft's layers
};

DraftMemory draft_memory(const ModelSpec& target, const ParallelConfig& parallel,
                         const EngineConfig& e, DType kv) {
  DraftMemory d;
  if (!e.speculative || e.speculative->method == SpeculativeMethod::kNgram) return d;
  ParallelConfig one_stage = parallel;
  one_stage.pp = 1;
  if (e.speculative->method == SpeculativeMethod::kDraftModel) {
    if (!e.speculative->draft_model) return d;
    const ModelSpec& m = *e.speculative->draft_model;
    d.weights_bytes = weights_bytes_per_gpu(m, one_stage, e, 0);
    d.block_bytes = static_cast<int64_t>(
        std::llround(m.kv_bytes_per_token_per_layer(kv, parallel.tp) * e.block_size) *
        m.num_layers);
    return d;
  }
  ModelSpec shorter = target;
  shorter.num_layers = std::max(1, target.num_layers - 1);
  if (shorter.moe)
    shorter.moe->dense_layers = std::min(shorter.moe->dense_layers, shorter.num_layers);
  d.weights_bytes = std::max<int64_t>(0, weights_bytes_per_gpu(target, one_stage, e, 0) -
                                             weights_bytes_per_gpu(shorter, one_stage, e, 0));
  d.block_bytes = static_cast<int64_t>(
      std::llround(target.kv_bytes_per_token_per_layer(kv, parallel.tp) * e.block_size));
  return d;
}

}  // namespace

MemoryPlan MemoryPlan::compute_unchecked(const ModelSpec& model, const HardwareSpec& gpu,
                                         const ParallelConfig& parallel,
                                         const EngineConfig& engine_in) {
  MemoryPlan plan;
  plan.model_name = model.name;
  plan.gpu_name = gpu.name;
  plan.parallel = parallel;
  plan.engine = engine_in.resolved_for(model, gpu);
  const EngineConfig& e = plan.engine;
  plan.total_bytes = e.gpu_memory_bytes.value_or(gpu.memory_total_bytes);
  plan.requested_bytes =
      e.kv_cache_memory_bytes
          ? 0
          : static_cast<int64_t>(
                std::ceil(static_cast<double>(plan.total_bytes) * e.gpu_memory_utilization));
  plan.activation_bytes =
      e.activation_memory_bytes.value_or(activation_peak_bytes(model, parallel, e));
  // NCCL's buffers come with any group: TP/PP within a replica or EP across replicas.
  const bool multi_gpu = parallel.gpus_per_replica() > 1 || parallel.ep() > 1;
  plan.non_torch_bytes = e.non_torch_memory_bytes ? *e.non_torch_memory_bytes
                         : multi_gpu              ? kNonTorchMultiGpuBytes
                                                  : kNonTorchSingleGpuBytes;
  plan.cuda_graphs = cuda_graph_plan(e);
  int most_layers = 0;
  for (int stage = 0; stage < parallel.pp; ++stage) {
    most_layers = std::max(most_layers, parallel.layers_in_stage(model.num_layers, stage));
  }
  plan.cuda_graph_bytes =
      e.cuda_graph_memory_bytes.value_or(cuda_graph_memory_bytes(model, parallel, e, most_layers));
  plan.cuda_graph_subtracted =
      e.cuda_graph_memory_bytes.has_value() || e.vllm_version.subtracts_cuda_graphs();
  const int64_t graphs_subtracted = plan.cuda_graph_subtracted_bytes();
  plan.params_total = model.total_params();
  plan.params_active = model.active_params();

  const DType kv = kv_dtype(e);
  plan.page_bytes = static_cast<int64_t>(
      std::llround(model.kv_bytes_per_token_per_layer(kv, parallel.tp) * e.block_size));
  int64_t min_blocks = -1;
  int64_t min_kv_bytes = 0;
  double total_weights = 0;
  const DraftMemory draft = draft_memory(model, parallel, e, kv);
  for (int stage = 0; stage < parallel.pp; ++stage) {
    const int64_t weights = weights_bytes_per_gpu(model, parallel, e, stage) + draft.weights_bytes;
    // With expert parallelism one copy of the model spans all dp replicas' GPUs.
    total_weights += static_cast<double>(weights) * parallel.tp *
                     (parallel.enable_expert_parallel ? parallel.dp : 1);
    const int layers = parallel.layers_in_stage(model.num_layers, stage);
    const int64_t available = e.kv_cache_memory_bytes
                                  ? *e.kv_cache_memory_bytes
                                  : plan.requested_bytes - weights - plan.activation_bytes -
                                        plan.non_torch_bytes - graphs_subtracted;
    const int64_t per_block = plan.page_bytes * layers + draft.block_bytes;
    const int64_t blocks = available > 0 ? available / per_block : 0;
    if (min_blocks < 0 || blocks < min_blocks) {
      min_blocks = blocks;
      min_kv_bytes = available;
    }
    plan.stages.push_back({layers, weights, available});
    if (weights > plan.weights_bytes) plan.weights_bytes = weights;
    plan.layers_per_gpu = std::max(plan.layers_per_gpu, layers);
  }
  plan.weights_total_bytes = static_cast<int64_t>(std::llround(total_weights));
  plan.kv_cache_bytes = min_kv_bytes;
  plan.num_gpu_blocks = e.num_gpu_blocks_override ? *e.num_gpu_blocks_override : min_blocks;
  plan.kv_cache_tokens = plan.num_gpu_blocks * e.block_size;
  plan.kv_bytes_per_token =
      model.kv_bytes_per_token_per_layer(kv, parallel.tp) * plan.layers_per_gpu;
  if (e.kv_offloading_size_gib) {
    // vLLM 0.12 CPUOffloadingSpec: each rank's share over the bytes of one offloaded block.
    plan.host_kv_bytes_per_gpu =
        static_cast<int64_t>(*e.kv_offloading_size_gib * kGiB / (parallel.tp * parallel.pp));
    const int64_t block_bytes = plan.page_bytes * plan.layers_per_gpu + draft.block_bytes;
    plan.num_host_kv_blocks = block_bytes > 0 ? plan.host_kv_bytes_per_gpu / block_bytes : 0;
  }

  // Concurrency is counted in pages over the stage with the most layers: each block
  // index holds one page per layer, so the pool has num_blocks x layers pages.
  int busiest = 0;
  for (int s = 0; s < parallel.pp; ++s) {
    if (parallel.layers_in_stage(model.num_layers, s) == plan.layers_per_gpu) busiest = s;
  }
  const int first = parallel.first_layer_of_stage(model.num_layers, busiest);
  const int64_t pages_needed =
      pages_per_request(model, first, plan.layers_per_gpu, e.max_model_len, e.block_size);
  const double pool_pages = static_cast<double>(plan.num_gpu_blocks) * plan.layers_per_gpu;
  plan.max_concurrency = pages_needed > 0 ? pool_pages / static_cast<double>(pages_needed) : 0;
  return plan;
}

MemoryPlan MemoryPlan::compute(const ModelSpec& model, const HardwareSpec& gpu,
                               const ParallelConfig& parallel, const EngineConfig& engine,
                               const std::vector<HardwareSpec>* alternatives) {
  parallel.validate(model);
  const EngineConfig resolved = engine.resolved_for(model, gpu);
  resolved.validate(model);
  MemoryPlan plan = compute_unchecked(model, gpu, parallel, engine);
  const std::string where = std::to_string(parallel.gpus_per_replica()) + " x " + gpu.name +
                            " (TP " + std::to_string(parallel.tp) + ", PP " +
                            std::to_string(parallel.pp) + ")";
  if (resolved.kv_offloading_size_gib && plan.num_host_kv_blocks < 1) {
    throw ConfigError("--kv-offloading-size " + std::to_string(*resolved.kv_offloading_size_gib) +
                      " GiB holds no KV block of " + model.name + " on " + where +
                      " (a block takes " + std::to_string(plan.page_bytes * plan.layers_per_gpu) +
                      " bytes per GPU); raise it");
  }

  // The smallest power-of-two TP above the current one that makes `ok` true.
  auto tp_that_fits = [&](auto ok) -> int {
    for (int tp = parallel.tp * 2; tp <= 64; tp *= 2) {
      if (model.num_heads % tp != 0) continue;
      ParallelConfig p = parallel;
      p.tp = tp;
      if (ok(compute_unchecked(model, gpu, p, engine))) return tp;
    }
    return 0;
  };

  if (plan.num_gpu_blocks <= 0) {
    const int64_t non_kv = plan.weights_bytes + plan.activation_bytes + plan.non_torch_bytes +
                           plan.cuda_graph_subtracted_bytes();
    std::string fix;
    const int tp = tp_that_fits([](const MemoryPlan& p) { return p.num_gpu_blocks > 0; });
    if (tp > 0) fix = "try --tensor-parallel-size " + std::to_string(tp);
    if (!resolved.dtype || *resolved.dtype != DType::kFp8) {
      fix += std::string(fix.empty() ? "try" : ",") + " --dtype fp8 to halve bf16 weights";
    }
    std::string gpus;
    if (alternatives != nullptr) {
      // Cheapest first: the GPU a user would try next.
      std::vector<const HardwareSpec*> fitting;
      for (const HardwareSpec& other : *alternatives) {
        if (other.name == gpu.name) continue;
        if (compute_unchecked(model, other, parallel, engine).num_gpu_blocks > 0) {
          fitting.push_back(&other);
        }
      }
      std::sort(fitting.begin(), fitting.end(), [](const HardwareSpec* a, const HardwareSpec* b) {
        return a->price_per_hour_usd < b->price_per_hour_usd;
      });
      for (size_t i = 0; i < fitting.size() && i < 3; ++i) {
        gpus += (i == 0 ? "" : ", ") + fitting[i]->name;
      }
    }
    fix += gpus.empty() ? ", or a GPU with more memory"
                        : ", or a GPU it fits at this parallelism (" + gpus + ")";
    throw ConfigError(
        model.name + " does not fit on " + where + ": weights " + gib(plan.weights_bytes) +
        " + activations " + gib(plan.activation_bytes) + " + non-torch " +
        gib(plan.non_torch_bytes) +
        (plan.cuda_graph_subtracted_bytes() > 0 ? " + CUDA graphs " + gib(plan.cuda_graph_bytes)
                                                : "") +
        " per GPU exceed the " + gib(plan.requested_bytes) + " requested (" +
        gib(plan.total_bytes) + " x " + utilization_text(resolved.gpu_memory_utilization) +
        ") by " + gib(non_kv - plan.requested_bytes + plan.page_bytes * plan.layers_per_gpu) +
        "; " + fix);
  }
  if (plan.max_concurrency < 1.0) {
    // Largest length whose pages fit in the pool.
    int64_t lo = 0;
    int64_t hi = resolved.max_model_len;
    const double pool = static_cast<double>(plan.num_gpu_blocks) * plan.layers_per_gpu;
    while (lo < hi) {
      const int64_t mid = (lo + hi + 1) / 2;
      const int64_t pages =
          pages_per_request(model, 0, plan.layers_per_gpu, mid, resolved.block_size);
      if (static_cast<double>(pages) <= pool)
        lo = mid;
      else
        hi = mid - 1;
    }
    const int64_t pages = pages_per_request(model, 0, plan.layers_per_gpu, resolved.max_model_len,
                                            resolved.block_size);
    const double needed_kv = static_cast<double>(pages) * static_cast<double>(plan.page_bytes);
    const double non_kv = static_cast<double>(plan.requested_bytes - plan.kv_cache_bytes);
    const double util_needed = (non_kv + needed_kv) / static_cast<double>(plan.total_bytes);
    std::string fix = "lower --max-model-len to at most " + std::to_string(lo);
    if (util_needed <= 0.98 && !resolved.kv_cache_memory_bytes) {
      char buf[64];
      std::snprintf(buf, sizeof buf, ", raise --gpu-memory-utilization to %.2f",
                    std::ceil(util_needed * 100) / 100);
      fix += buf;
    }
    const int tp = tp_that_fits([](const MemoryPlan& p) { return p.max_concurrency >= 1.0; });
    if (tp > 0) fix += ", or use --tensor-parallel-size " + std::to_string(tp);
    throw ConfigError("--max-model-len " + std::to_string(resolved.max_model_len) + " needs " +
                      gib(static_cast<int64_t>(needed_kv)) + " of KV cache per GPU but " + where +
                      " has " + gib(plan.kv_cache_bytes) + " (" +
                      with_commas(plan.kv_cache_tokens) + " tokens); " + fix);
  }
  return plan;
}

nlohmann::json MemoryPlan::to_json() const {
  nlohmann::json j;
  j["model"] = model_name;
  j["gpu"] = gpu_name;
  j["tensor_parallel_size"] = parallel.tp;
  j["pipeline_parallel_size"] = parallel.pp;
  j["gpus_per_replica"] = parallel.gpus_per_replica();
  if (parallel.enable_expert_parallel) {
    j["data_parallel_size"] = parallel.dp;
    j["expert_parallel_size"] = parallel.ep();
  }
  j["gpu_memory_utilization"] = engine.gpu_memory_utilization;
  j["max_model_len"] = engine.max_model_len;
  j["max_num_seqs"] = engine.max_num_seqs;
  j["max_num_batched_tokens"] = engine.max_num_batched_tokens;
  j["block_size"] = engine.block_size;
  j["dtype"] = engine.dtype ? std::string(dtype_name(*engine.dtype)) : "auto";
  j["kv_cache_dtype"] =
      engine.kv_cache_dtype ? std::string(dtype_name(*engine.kv_cache_dtype)) : "auto";
  j["vllm_version"] = engine.vllm_version.to_string();
  j["enforce_eager"] = engine.enforce_eager;
  j["cuda_graphs"] = {{"mode", std::string(cuda_graph_mode_name(engine.cuda_graph_mode()))},
                      {"piecewise", cuda_graphs.piecewise},
                      {"full", cuda_graphs.full},
                      {"largest", cuda_graphs.largest},
                      {"subtracted", cuda_graph_subtracted}};
  j["params_total"] = params_total;
  j["params_active"] = params_active;
  j["per_gpu"] = {{"total_bytes", total_bytes},         {"requested_bytes", requested_bytes},
                  {"weights_bytes", weights_bytes},     {"activation_bytes", activation_bytes},
                  {"non_torch_bytes", non_torch_bytes}, {"cuda_graph_bytes", cuda_graph_bytes},
                  {"kv_cache_bytes", kv_cache_bytes},   {"layers", layers_per_gpu},
                  {"page_bytes", page_bytes},           {"kv_bytes_per_token", kv_bytes_per_token}};
  j["weights_total_bytes"] = weights_total_bytes;
  j["num_gpu_blocks"] = num_gpu_blocks;
  j["kv_cache_tokens"] = kv_cache_tokens;
  j["max_concurrency"] = max_concurrency;
  if (engine.kv_offloading_size_gib) {
    j["kv_offloading_size_gib"] = *engine.kv_offloading_size_gib;
    j["host_kv_bytes_per_gpu"] = host_kv_bytes_per_gpu;
    j["num_host_kv_blocks"] = num_host_kv_blocks;
    j["host_kv_tokens"] = num_host_kv_blocks * engine.block_size;
  }
  return j;
}

std::string MemoryPlan::to_table() const {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "%s on %d x %s (TP %d, PP %d)\n", model_name.c_str(),
                parallel.gpus_per_replica(), gpu_name.c_str(), parallel.tp, parallel.pp);
  out << line;
  if (parallel.enable_expert_parallel) {
    std::snprintf(line, sizeof line,
                  "  expert parallel: EP %d = TP %d x DP %d over %d GPUs; each GPU holds 1/%d of "
                  "the routed experts; figures below are per data-parallel replica\n",
                  parallel.ep(), parallel.tp, parallel.dp, parallel.total_gpus(), parallel.ep());
    out << line;
  }
  std::snprintf(line, sizeof line,
                "  parameters %.2fB total, %.2fB active; weights %.2f GiB over all GPUs\n",
                static_cast<double>(params_total) / 1e9, static_cast<double>(params_active) / 1e9,
                format_gib(weights_total_bytes));
  out << line;
  std::string graphs;
  if (engine.enforce_eager) {
    graphs = " (eager)";
  } else if (engine.cudagraph_mode) {
    graphs = " (cudagraph_mode " + std::string(cuda_graph_mode_name(*engine.cudagraph_mode)) + ")";
  }
  std::snprintf(line, sizeof line,
                "  max_model_len %d, max_num_seqs %d, max_num_batched_tokens %d, block_size %d, "
                "vLLM %s%s\n\n",
                engine.max_model_len, engine.max_num_seqs, engine.max_num_batched_tokens,
                engine.block_size, engine.vllm_version.to_string().c_str(), graphs.c_str());
  out << line;
  out << "  per GPU                              GiB\n";
  auto row = [&](const char* label, int64_t bytes) {
    std::snprintf(line, sizeof line, "  %-32s %8.2f\n", label, format_gib(bytes));
    out << line;
  };
  row("total memory", total_bytes);
  if (!engine.kv_cache_memory_bytes) {
    char label[64];
    std::snprintf(label, sizeof label, "requested (x %.2f)", engine.gpu_memory_utilization);
    row(label, requested_bytes);
  }
  row("- model weights", weights_bytes);
  row("- activation peak (profile run)", activation_bytes);
  row("- non-torch (CUDA, NCCL, cuBLAS)", non_torch_bytes);
  if (cuda_graph_subtracted) {
    row("- CUDA graphs", cuda_graph_bytes);
  } else if (cuda_graph_bytes > 0) {
    // Captured after the KV cache is allocated: out of what utilization leaves.
    std::snprintf(line, sizeof line, "  %-32s %8.2f  (vLLM %s: not subtracted)\n",
                  "  CUDA graphs, captured after", format_gib(cuda_graph_bytes),
                  engine.vllm_version.to_string().c_str());
    out << line;
  }
  row("= available KV cache memory", kv_cache_bytes);
  out << "\n";
  std::snprintf(
      line, sizeof line,
      "  KV cache: %.0f bytes/token on this GPU (%d layers), %s bytes per block-layer page\n",
      kv_bytes_per_token, layers_per_gpu, with_commas(page_bytes).c_str());
  out << line;
  out << "  # GPU blocks: " << with_commas(num_gpu_blocks) << "\n";
  out << "  GPU KV cache size: " << with_commas(kv_cache_tokens) << " tokens\n";
  std::snprintf(line, sizeof line, "  Maximum concurrency for %s tokens per request: %.2fx\n",
                with_commas(engine.max_model_len).c_str(), max_concurrency);
  out << line;
  if (engine.kv_offloading_size_gib) {
    std::snprintf(line, sizeof line,
                  "  KV offload (--kv-offloading-size %g GiB over %d GPUs): %.2f GiB pinned host "
                  "memory per GPU, %s host blocks, %s tokens\n",
                  *engine.kv_offloading_size_gib, parallel.gpus_per_replica(),
                  format_gib(host_kv_bytes_per_gpu), with_commas(num_host_kv_blocks).c_str(),
                  with_commas(num_host_kv_blocks * engine.block_size).c_str());
    out << line;
  }
  return out.str();
}

}  // namespace servesim
