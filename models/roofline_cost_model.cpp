#include "models/roofline_cost_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/config_error.h"
#include "models/engine_config.h"
#include "models/expert_load.h"
#include "models/hardware_spec.h"
#include "models/memory_plan.h"
#include "models/model_spec.h"
#include "models/parallel_config.h"

namespace servesim {
namespace {

// vLLM V1's default random sampler (vllm/v1/sample/sampler.py, FlashInfer off) passes over
// the logits of each sampled row: cast to fp32 (read 2 B, write 4 B), divide by temperature
// (4 + 4), softmax (4 + 4), draw exponential noise (write 4), divide probabilities by it
// (4 + 4 + 4) and argmax (4): 42 bytes per logit in 6 kernels.
constexpr double kSamplerBytesPerLogit = 42;
constexpr int kSamplerKernels = 6;

// Kernels vLLM launches per layer outside the GEMMs and attention: two fused residual-add +
// RMSNorms and one rotary embedding (q/k norms add one kernel each).
constexpr int kNormRopeKernels = 3;
// Dense MLP: merged gate/up GEMM, SiLU-and-mul, down GEMM.
constexpr int kDenseMlpKernels = 3;
// vLLM fused MoE: router GEMM, top-k softmax, align/sort by expert, w13 grouped GEMM,
// SiLU-and-mul, w2 grouped GEMM, weighted sum of the top-k outputs.
constexpr int kMoeKernels = 7;
// Attention: KV-cache write (reshape_and_cache) and the attention kernel, which serves
// prefill and decode rows of a mixed batch in one launch (FlashAttention varlen).
constexpr int kAttentionKernels = 2;
// vLLM captures graphs of at most 512 tokens (V0: 256; V1: max_cudagraph_capture_size <= 512).
constexpr int64_t kMostCapturedTokens = 512;
// A fused residual-add + RMSNorm reads the input and the residual and writes both.
constexpr double kNormPassesPerElement = 4;

double fraction_option(std::optional<double> value, double fallback, const char* name) {
  const double v = value.value_or(fallback);
  if (!(v > 0 && v <= 1)) {
    throw ConfigError(std::string("roofline option ") + name + " must be in (0, 1], got " +
                      std::to_string(v) + "; use a fraction of the peak such as 0.8");
  }
  return v;
}

double seconds_option(std::optional<double> value, double fallback, const char* name) {
  const double v = value.value_or(fallback);
  if (!(v >= 0) || !std::isfinite(v)) {
    throw ConfigError(std::string("roofline option ") + name +
                      " must be a finite number of seconds >= 0, got " + std::to_string(v));
  }
  return v;
}

// The deployment's own switch turns vLLM's custom all-reduce off whatever the options say.
CommOptions comm_options(CommOptions options, const EngineConfig& engine) {
  options.custom_all_reduce = options.custom_all_reduce && !engine.disable_custom_all_reduce;
  return options;
}

constexpr std::size_t idx(Op op) {
  return static_cast<std::size_t>(op);
}

}  // namespace

RooflineCostModel::RooflineCostModel(const ModelSpec& model, const HardwareSpec& gpu,
                                     const ParallelConfig& parallel, const EngineConfig& engine,
                                     RooflineOptions options)
    : comm_(CommModel::for_hardware(gpu, comm_options(options.comm, engine))) {
  parallel.validate(model);
  compute_efficiency_ =
      fraction_option(options.compute_efficiency, gpu.compute_efficiency, "compute_efficiency");
  memory_efficiency_ =
      fraction_option(options.memory_efficiency, gpu.memory_efficiency, "memory_efficiency");
  attention_compute_efficiency_ =
      fraction_option(options.attention_compute_efficiency, kAttentionComputeEfficiency,
                      "attention_compute_efficiency");
  attention_memory_efficiency_ =
      fraction_option(options.attention_memory_efficiency, kAttentionMemoryEfficiency,
                      "attention_memory_efficiency");
  kernel_launch_s_ =
      seconds_option(options.kernel_launch_s, gpu.kernel_launch_s, "kernel_launch_s");
  step_overhead_s_ = seconds_option(options.step_overhead_s, kStepOverheadS, "step_overhead_s");
  seq_overhead_s_ = seconds_option(options.seq_overhead_s, kSeqOverheadS, "seq_overhead_s");
  graph_mode_ = options.cuda_graphs ? engine.cuda_graph_mode() : CudaGraphMode::kNone;
  // An unresolved config (max_num_seqs 0) has no capture sizes yet: take the most any release
  // captures, 512 tokens.
  largest_graph_tokens_ = engine.max_num_seqs > 0 && engine.max_num_batched_tokens > 0
                              ? cuda_graph_plan(engine).largest
                              : kMostCapturedTokens;

  tp_ = parallel.tp;
  ep_ = parallel.ep();
  ep_dp_ = parallel.enable_expert_parallel ? parallel.dp : 1;
  num_stages_ = parallel.pp;
  for (int s = 0; s < parallel.pp; ++s) {
    const int first = parallel.first_layer_of_stage(model.num_layers, s);
    StageLayers stage;
    stage.layers = parallel.layers_in_stage(model.num_layers, s);
    for (int l = first; l < first + stage.layers; ++l) {
      stage.sliding_layers += model.layer_is_sliding(l) ? 1 : 0;
      stage.moe_layers += model.layer_is_moe(l) ? 1 : 0;
    }
    const bool seen = std::any_of(stage_layouts_.begin(), stage_layouts_.end(), [&](const auto& o) {
      return o.layers == stage.layers && o.sliding_layers == stage.sliding_layers &&
             o.moe_layers == stage.moe_layers;
    });
    if (!seen) stage_layouts_.push_back(stage);
  }

  const DType weight_dtype = engine.dtype.value_or(model.native_dtype);
  const DType expert_dtype =
      engine.dtype ? *engine.dtype : model.native_expert_dtype.value_or(model.native_dtype);
  const DType act_dtype = weight_dtype == DType::kFp32 ? DType::kFp32 : DType::kBf16;
  const DType kv_dtype = engine.kv_cache_dtype.value_or(act_dtype);
  act_bytes_ = dtype_bytes(act_dtype);
  weight_bytes_ = dtype_bytes(weight_dtype);
  expert_weight_bytes_ = dtype_bytes(expert_dtype);
  gemm_peak_flops_ = gpu.peak_flops(weight_dtype) * compute_efficiency_;
  expert_peak_flops_ = gpu.peak_flops(expert_dtype) *
                       fraction_option(options.expert_compute_efficiency, compute_efficiency_,
                                       "expert_compute_efficiency");
  expert_bandwidth_Bps_ =
      gpu.memory_bandwidth_Bps * fraction_option(options.expert_memory_efficiency,
                                                 memory_efficiency_, "expert_memory_efficiency");
  act_peak_flops_ = gpu.peak_flops(act_dtype) * compute_efficiency_;
  attn_peak_flops_ = gpu.peak_flops(act_dtype) * attention_compute_efficiency_;
  bandwidth_Bps_ = gpu.memory_bandwidth_Bps * memory_efficiency_;
  attn_bandwidth_Bps_ = gpu.memory_bandwidth_Bps * attention_memory_efficiency_;

  const double t = tp_;
  const double h = model.hidden_size;
  hidden_ = h;
  heads_ = model.num_heads / t;
  if (model.mla) {
    const MlaSpec& a = *model.mla;
    const double qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    const double latent = a.kv_lora_rank + a.qk_rope_head_dim;
    // q_a and kv_a are replicated on every rank (vLLM ReplicatedLinear); q_b and kv_b split.
    const double q_params =
        a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank * heads_ * qk : h * heads_ * qk;
    qkv_weight_params_ = q_params + h * latent;
    qkv_out_ = heads_ * qk + latent;
    mla_kv_up_params_ =
        static_cast<double>(a.kv_lora_rank) * heads_ * (a.qk_nope_head_dim + a.v_head_dim);
    o_in_ = heads_ * a.v_head_dim;
    rope_elements_ = (heads_ + 1) * a.qk_rope_head_dim;
    // Prefill decompresses K and V and runs multi-head attention over qk / v dims; decode
    // attends in the latent space (weights absorbed): MQA with latent-wide keys and
    // kv_lora-wide values.
    prefill_flops_per_pair_ = heads_ * (2 * qk + 2 * a.v_head_dim);
    decode_flops_per_pair_ = heads_ * (2 * latent + 2 * a.kv_lora_rank);
    attn_io_per_token_ = heads_ * (qk + a.v_head_dim);
  } else {
    const double hd = model.head_dim;
    const double kv_heads = model.kv_heads_per_rank(tp_);
    qkv_out_ = (heads_ + 2 * kv_heads) * hd;
    qkv_weight_params_ = h * qkv_out_;
    o_in_ = heads_ * hd;
    rope_elements_ = (heads_ + kv_heads) * hd;
    qk_norm_elements_ = model.qk_norm ? (heads_ + kv_heads) * hd : 0;
    prefill_flops_per_pair_ = 4 * hd * heads_;
    decode_flops_per_pair_ = prefill_flops_per_pair_;
    attn_io_per_token_ = 2 * heads_ * hd;
  }
  o_params_ = o_in_ * h;
  kv_bytes_per_token_ = model.kv_bytes_per_token_per_layer(kv_dtype, tp_);
  sliding_window_ = model.sliding_pattern == SlidingPattern::kNone ? 0 : model.sliding_window;

  dense_inter_ = model.intermediate_size / t;
  dense_mlp_params_ = 3 * h * dense_inter_;
  if (model.moe) {
    const MoeSpec& e = *model.moe;
    // Expert parallelism keeps each expert whole on its rank; shared experts stay split over
    // the replica's TP ranks like a dense MLP.
    expert_inter_ = ep_ > 1 ? e.expert_intermediate_size : e.expert_intermediate_size / t;
    shared_inter_ = static_cast<double>(e.expert_intermediate_size) * e.shared_experts / t;
    router_params_ = h * e.num_experts;
    num_experts_ = e.num_experts;
    local_experts_ = static_cast<double>(e.num_experts) / ep_;
    busiest_share_ =
        ExpertLoad(e.num_experts, e.experts_per_token, ep_, parallel.expert_zipf_exponent)
            .busiest_rank_share();
    experts_per_token_ = e.experts_per_token;
    shared_experts_ = e.shared_experts;
    log_expert_miss_ = std::log1p(-experts_per_token_ / num_experts_);
    moe_kernels_ = kMoeKernels + (e.shared_experts > 0 ? kDenseMlpKernels : 0);
  }
  vocab_ = model.vocab_size;
  vocab_per_rank_ = vocab_ / t;
  lm_head_params_ = vocab_per_rank_ * h;
  per_layer_kernels_ = kNormRopeKernels + (model.qk_norm ? 2 : 0);
  mlp_kernels_ = kDenseMlpKernels;
}

double RooflineCostModel::kernel_s(double flops, double bytes, double peak_flops) const {
  return kernel_s(flops, bytes, peak_flops, bandwidth_Bps_);
}

double RooflineCostModel::kernel_s(double flops, double bytes, double peak_flops,
                                   double bandwidth_Bps) const {
  return std::max(flops / peak_flops, bytes / bandwidth_Bps);
}

double RooflineCostModel::attention_kernel_s(double flops, double bytes) const {
  return kernel_s(flops, bytes, attn_peak_flops_, attn_bandwidth_Bps_);
}

StepTime RooflineCostModel::predict(const BatchShape& b) const {
  StepTime out;
  if (b.num_tokens <= 0) return out;
  const double n = static_cast<double>(b.num_tokens);
  const double h = hidden_;
  const double act = act_bytes_;
  // Launches the host makes for this step: every kernel without a graph; per layer one
  // graph replay and the attention kernels with piecewise graphs; none inside a whole-model
  // graph.
  const GraphReplay replay =
      graph_replay(graph_mode_, b.num_prefill_seqs == 0, b.num_tokens <= largest_graph_tokens_);
  const double launch = replay == GraphReplay::kNone ? kernel_launch_s_ : 0;
  const double attention_launch = replay == GraphReplay::kFull ? 0 : kernel_launch_s_;
  const double piece_launch = replay == GraphReplay::kPiecewise ? kernel_launch_s_ : 0;

  // --- one layer of each kind, seconds ---
  double qkv =
      kernel_s(2 * n * qkv_weight_params_,
               qkv_weight_params_ * weight_bytes_ + n * (h + qkv_out_) * act, gemm_peak_flops_) +
      launch;
  if (mla_kv_up_params_ > 0) {
    // kv_b: absorbed into each decode query, applied to every key of a prefill.
    const double rows = static_cast<double>(b.decode_tokens + b.prefill_kv_tokens);
    qkv += kernel_s(2 * rows * mla_kv_up_params_, mla_kv_up_params_ * weight_bytes_,
                    gemm_peak_flops_) +
           launch;
  }
  const double o_proj =
      kernel_s(2 * n * o_params_, o_params_ * weight_bytes_ + n * (o_in_ + h) * act,
               gemm_peak_flops_) +
      launch;
  // The piecewise graph each layer replays is booked with its norms.
  const double norms =
      (n * h * kNormPassesPerElement * 2 + 2 * n * (rope_elements_ + qk_norm_elements_)) * act /
          bandwidth_Bps_ +
      per_layer_kernels_ * launch + piece_launch;
  const double comm = 2 * comm_.all_reduce_s(static_cast<int64_t>(n * h * act), tp_);

  auto mlp_s = [&](double inter, double rows, double weight_rows, double bytes_per_weight,
                   double peak, double bandwidth) {
    // weight_rows: how many experts' weights are read (1 for a dense MLP).
    const double gate_up =
        kernel_s(2 * rows * 2 * h * inter,
                 weight_rows * 2 * h * inter * bytes_per_weight + rows * (h + 2 * inter) * act,
                 peak, bandwidth);
    const double activation = 3 * rows * inter * act / bandwidth_Bps_;
    const double down = kernel_s(
        2 * rows * inter * h, weight_rows * inter * h * bytes_per_weight + rows * (inter + h) * act,
        peak, bandwidth);
    return gate_up + activation + down;
  };
  const double dense_mlp = dense_inter_ > 0 ? mlp_s(dense_inter_, n, 1, weight_bytes_,
                                                    gemm_peak_flops_, bandwidth_Bps_) +
                                                  mlp_kernels_ * launch
                                            : 0;
  double moe_mlp = 0;
  double moe_comm = comm;
  if (num_experts_ > 0) {
    // With expert parallelism the layer also serves the other data-parallel replicas of the
    // group, each taken to run as many sequences as this one, decoding: a prompt chunk is on
    // one replica at a time, and lock-step lets the replica holding it set the pace.
    const double tokens = n + (ep_dp_ - 1) * static_cast<double>(b.num_seqs);
    // Expected distinct experts of this rank the tokens route to (uniform routing), and the
    // token-expert rows the busiest rank computes.
    const double distinct = local_experts_ * (1 - std::exp(tokens * log_expert_miss_));
    const double rows = busiest_share_ * tokens * experts_per_token_;
    const double router =
        kernel_s(2 * n * router_params_, router_params_ * act + n * (h + num_experts_) * act,
                 act_peak_flops_);
    moe_mlp = router +
              mlp_s(expert_inter_, rows, distinct, expert_weight_bytes_, expert_peak_flops_,
                    expert_bandwidth_Bps_) +
              moe_kernels_ * launch;
    if (shared_experts_ > 0) {
      moe_mlp += mlp_s(shared_inter_, n, 1, expert_weight_bytes_, expert_peak_flops_,
                       expert_bandwidth_Bps_);
    }
    if (ep_ > 1) moe_comm = expert_parallel_comm_s(n, rows);
  }

  auto attention = [&](double pairs, double kv_tokens, double ctx_tokens, double& prefill,
                       double& decode) {
    prefill = 0;
    decode = 0;
    double launches = kAttentionKernels * attention_launch;
    if (b.num_prefill_seqs > 0) {
      const double bytes =
          (kv_tokens + static_cast<double>(b.prefill_tokens)) * kv_bytes_per_token_ +
          static_cast<double>(b.prefill_tokens) * attn_io_per_token_ * act;
      prefill = attention_kernel_s(prefill_flops_per_pair_ * pairs, bytes) + launches;
      launches = 0;  // mixed batches run prefill and decode rows in one launch
    }
    if (b.num_decode_seqs > 0) {
      const double bytes =
          (ctx_tokens + static_cast<double>(b.decode_tokens)) * kv_bytes_per_token_ +
          static_cast<double>(b.decode_tokens) * attn_io_per_token_ * act;
      decode = attention_kernel_s(decode_flops_per_pair_ * ctx_tokens, bytes) + launches;
    }
  };
  double full_prefill = 0;
  double full_decode = 0;
  attention(b.prefill_attention_pairs, static_cast<double>(b.prefill_kv_tokens),
            static_cast<double>(b.decode_context_tokens), full_prefill, full_decode);
  double slide_prefill = 0;
  double slide_decode = 0;
  if (sliding_window_ > 0) {
    if (b.sliding_window == sliding_window_) {
      attention(b.windowed_prefill_attention_pairs,
                static_cast<double>(b.windowed_prefill_kv_tokens),
                static_cast<double>(b.windowed_decode_context_tokens), slide_prefill, slide_decode);
    } else {
      // No per-sequence windowed sums: cap each sum at window * sequences, an upper bound.
      const double w = sliding_window_;
      attention(std::min(b.prefill_attention_pairs, static_cast<double>(b.prefill_tokens) * w),
                std::min(static_cast<double>(b.prefill_kv_tokens), b.num_prefill_seqs * w),
                std::min(static_cast<double>(b.decode_context_tokens), b.num_decode_seqs * w),
                slide_prefill, slide_decode);
    }
  }

  // --- the slowest pipeline stage ---
  const StageLayers* slowest = nullptr;
  double slowest_s = -1;
  for (const StageLayers& s : stage_layouts_) {
    const int full = s.layers - s.sliding_layers;
    const int dense = s.layers - s.moe_layers;
    const double stage_s = s.layers * (qkv + o_proj + norms) + full * (full_prefill + full_decode) +
                           s.sliding_layers * (slide_prefill + slide_decode) +
                           dense * (dense_mlp + comm) + s.moe_layers * (moe_mlp + moe_comm);
    if (stage_s > slowest_s) {
      slowest_s = stage_s;
      slowest = &s;
    }
  }
  const double layers = slowest->layers;
  const double full = slowest->layers - slowest->sliding_layers;
  const double sliding = slowest->sliding_layers;
  out.op_s[idx(Op::kQkv)] = layers * qkv;
  out.op_s[idx(Op::kOProj)] = layers * o_proj;
  out.op_s[idx(Op::kAttentionPrefill)] = full * full_prefill + sliding * slide_prefill;
  out.op_s[idx(Op::kAttentionDecode)] = full * full_decode + sliding * slide_decode;
  out.op_s[idx(Op::kMlp)] =
      (layers - slowest->moe_layers) * dense_mlp + slowest->moe_layers * moe_mlp;
  out.op_s[idx(Op::kComm)] = (layers - slowest->moe_layers) * comm + slowest->moe_layers * moe_comm;
  // Embedding lookup (first stage): read and write one row per token.
  out.op_s[idx(Op::kNormRopeEmbed)] = layers * norms + 2 * n * h * act / bandwidth_Bps_ + launch;

  // --- once per step, on the last stage ---
  const double sampled = b.num_sampled;
  double lm_head = 3 * n * h * act / bandwidth_Bps_ + launch;  // final norm over every token
  if (sampled > 0) {
    // The LM head stays in the activation dtype when the body is quantised (vLLM).
    lm_head +=
        kernel_s(2 * sampled * lm_head_params_,
                 lm_head_params_ * act + sampled * (h + vocab_per_rank_) * act, act_peak_flops_) +
        launch;
    out.op_s[idx(Op::kComm)] +=
        comm_.all_gather_s(static_cast<int64_t>(sampled * vocab_ * act), tp_);
    out.op_s[idx(Op::kSampling)] =
        sampled * vocab_ * kSamplerBytesPerLogit / bandwidth_Bps_ + kSamplerKernels * launch;
  }
  out.op_s[idx(Op::kLmHead)] = lm_head;
  out.op_s[idx(Op::kOverhead)] = step_overhead_s_ + seq_overhead_s_ * b.num_seqs;
  for (double s : out.op_s) out.total_s += s;
  return out;
}

double RooflineCostModel::expert_parallel_comm_s(double n, double rows) const {
  const double act = act_bytes_;
  // Each rank dispatches its 1/tp of the replica's routed tokens and receives its experts'
  // rows; the busiest rank waits for whichever is larger, and the combine sends them back.
  const double sent = n * experts_per_token_ / tp_;
  const auto exchanged = static_cast<int64_t>(std::max(sent, rows) * hidden_ * act);
  const auto hidden_states = static_cast<int64_t>(n * hidden_ * act);
  // The attention output is still reduced over TP, and so are shared experts' partial sums.
  double s = comm_.all_reduce_s(hidden_states, tp_) + 2 * comm_.all_to_all_s(exchanged, ep_);
  if (shared_experts_ > 0) s += comm_.all_reduce_s(hidden_states, tp_);
  return s;
}

double RooflineCostModel::stage_transfer_s(int64_t num_tokens) const {
  if (num_stages_ <= 1) return 0;
  return comm_.send_recv_s(
      static_cast<int64_t>(static_cast<double>(num_tokens) * hidden_ * act_bytes_));
}

}  // namespace servesim
