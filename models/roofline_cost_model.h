// RooflineCostModel: step time from first principles. Every kernel of a transformer forward
// pass (QKV, attention, output projection, MLP or MoE experts, norms, RoPE, embedding, LM head,
// sampler) costs max(FLOPs / (peak * compute efficiency), bytes / (bandwidth * memory
// efficiency)) plus a launch overhead; tensor parallelism divides FLOPs and weight bytes by tp
// and adds two ring all-reduces per layer; every step pays a host overhead. With expert
// parallelism a MoE layer instead dispatches and combines its routed tokens with all-to-alls
// over EP ranks, and the busiest rank's expert GEMMs (ExpertLoad) set its time
// (docs/expert-parallelism.md). The formulas, the assumptions (MLA, MoE routing, sliding
// windows, CUDA graphs) and the measurements behind the defaults are in docs/cost-model.md.
//
// Construction does all the per-model arithmetic; predict() is O(1) in the batch (O(distinct
// pipeline-stage layouts), which is 1 or 2) and allocates nothing. Immutable after
// construction; predict() is safe to call from several threads.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/comm_model.h"
#include "models/cost_model.h"
#include "models/cuda_graph_mode.h"
#include "models/dtype.h"

namespace servesim {

struct EngineConfig;
struct HardwareSpec;
struct ModelSpec;
struct ParallelConfig;

// Host-side time of one vLLM engine step that no GPU kernel accounts for (scheduling, input
// preparation, output processing), and host time per scheduled sequence per step (vLLM V1's
// engine core schedules, prepares inputs and books outputs request by request in Python between
// GPU steps; async scheduling is off by default in 0.12). Fitted together on the 15 rows with
// input and output 1024 of the published vLLM 0.12 Qwen3-32B / H100-SXM runs (TP 2/4/8,
// concurrency 8-128; reference/measured/published-vllm-h100-qwen3-32b.csv), steady-state TPOT:
// a grid over both puts the minimum at 4.0 ms and 35 us (mean |error| 1.2%). They are large
// because the decode steps' all-reduces are small: vLLM runs them on its custom all-reduce at
// ~5 us each (kCustomAllReduceLatencyS), not NCCL's 32 us, and the 3.5 ms a 64-layer model's
// 128 all-reduces were charged before at 32 us is host time. Held out: docs/validation.md.
inline constexpr double kStepOverheadS = 4.0e-3;
inline constexpr double kSeqOverheadS = 35e-6;

// FlashAttention kernels reach a different fraction of peak than GEMMs. Fitted to the 1,097
// rows of reference/measured/vidur-profiling/compute/a100-llama-2-7b-attention-sample.csv
// (A100, FlashAttention-2, Llama-2-7B) by minimising the mean relative error of this model:
// prefill (short chunks, small grids) reaches 21% of dense peak; decode streams the KV cache
// at 86% of memory bandwidth.
inline constexpr double kAttentionComputeEfficiency = 0.21;
inline constexpr double kAttentionMemoryEfficiency = 0.86;

struct RooflineOptions {
  // Unset: the GPU's catalog value (HardwareSpec). REQUIRES: in (0, 1].
  std::optional<double> compute_efficiency;  // fraction of dense peak FLOP/s GEMMs reach
  std::optional<double> memory_efficiency;   // fraction of memory bandwidth kernels reach
  // Unset: kAttentionComputeEfficiency / kAttentionMemoryEfficiency. REQUIRES: in (0, 1].
  std::optional<double> attention_compute_efficiency;  // fraction of peak attention reaches
  std::optional<double> attention_memory_efficiency;   // fraction of bandwidth for KV reads
  // MoE layers' expert GEMMs (vLLM's fused-MoE kernels). Unset: compute_efficiency and
  // memory_efficiency. REQUIRES: in (0, 1].
  std::optional<double> expert_compute_efficiency;  // fraction of peak FLOP/s
  std::optional<double> expert_memory_efficiency;   // fraction of bandwidth for expert weights
  // Unset: HardwareSpec::kernel_launch_s. Seconds per kernel. REQUIRES: >= 0.
  std::optional<double> kernel_launch_s;
  // Unset: kStepOverheadS. Seconds per step. REQUIRES: >= 0.
  std::optional<double> step_overhead_s;
  // Unset: kSeqOverheadS. Seconds per scheduled sequence per step. REQUIRES: >= 0.
  std::optional<double> seq_overhead_s;
  // false: price every step as launched without CUDA graphs, whatever the engine's
  // cudagraph_mode (a what-if; engine.enforce_eager is the deployment's own switch).
  bool cuda_graphs = true;
  CommOptions comm;  // all-reduce and send/recv latency and efficiency
};

class RooflineCostModel : public CostModel {
 public:
  // Throws ConfigError naming the option when an efficiency is outside (0, 1] or a time is
  // negative, and when parallel does not fit the model (ParallelConfig::validate).
  RooflineCostModel(const ModelSpec& model, const HardwareSpec& gpu, const ParallelConfig& parallel,
                    const EngineConfig& engine, RooflineOptions options = {});

  StepTime predict(const BatchShape& shape) const override;
  int num_stages() const override { return num_stages_; }
  // Sends num_tokens activations (hidden_size each) to the next stage; 0 with one stage.
  double stage_transfer_s(int64_t num_tokens) const override;

  // The resolved parameters, for reports.
  double compute_efficiency() const { return compute_efficiency_; }
  double memory_efficiency() const { return memory_efficiency_; }
  double attention_compute_efficiency() const { return attention_compute_efficiency_; }
  double attention_memory_efficiency() const { return attention_memory_efficiency_; }
  double kernel_launch_s() const { return kernel_launch_s_; }
  double step_overhead_s() const { return step_overhead_s_; }
  double seq_overhead_s() const { return seq_overhead_s_; }
  const CommModel& comm() const { return comm_; }

 private:
  // Layers of one pipeline stage by kind; stages with the same counts share one entry.
  struct StageLayers {
    int layers = 0;
    int sliding_layers = 0;  // attention capped at the window
    int moe_layers = 0;      // expert FFN instead of the dense MLP
  };

  // One kernel: seconds at the compute and at the memory roofline, whichever is slower; at the
  // dense kernels' bandwidth unless one is given (expert GEMMs, attention).
  double kernel_s(double flops, double bytes, double peak_flops) const;
  double kernel_s(double flops, double bytes, double peak_flops, double bandwidth_Bps) const;
  // Attention kernel: the same roofline with the attention efficiencies.
  double attention_kernel_s(double flops, double bytes) const;
  // One expert-parallel MoE layer's communication for n tokens of this replica of which the
  // busiest rank computes `rows` token-expert rows: dispatch and combine all-to-alls plus
  // the TP all-reduces that remain.
  double expert_parallel_comm_s(double n, double rows) const;

  int tp_ = 1;
  int ep_ = 1;     // expert-parallel ranks; 1 = experts tensor-parallel
  int ep_dp_ = 1;  // data-parallel replicas whose tokens meet in the expert layers
  int num_stages_ = 1;
  std::vector<StageLayers> stage_layouts_;  // distinct layouts, for the slowest-stage search

  double compute_efficiency_ = 0;
  double memory_efficiency_ = 0;
  double attention_compute_efficiency_ = 0;
  double attention_memory_efficiency_ = 0;
  double kernel_launch_s_ = 0;  // seconds per kernel
  double step_overhead_s_ = 0;  // seconds per step
  double seq_overhead_s_ = 0;   // seconds per scheduled sequence per step
  // The engine's graphs: which steps replay them, and the most tokens a captured graph
  // holds (steps with more run without one).
  CudaGraphMode graph_mode_ = CudaGraphMode::kFullAndPiecewise;
  int64_t largest_graph_tokens_ = 0;

  double gemm_peak_flops_ = 0;       // FLOP/s, dense weights' dtype, efficiency applied
  double expert_peak_flops_ = 0;     // FLOP/s, expert weights' dtype, efficiency applied
  double act_peak_flops_ = 0;        // FLOP/s, activation-dtype GEMMs, efficiency applied
  double attn_peak_flops_ = 0;       // FLOP/s, attention kernels, attention efficiency applied
  double bandwidth_Bps_ = 0;         // bytes/s, efficiency applied
  double attn_bandwidth_Bps_ = 0;    // bytes/s, attention kernels, attention efficiency applied
  double expert_bandwidth_Bps_ = 0;  // bytes/s, expert GEMMs, expert efficiency applied

  // Per layer and rank; FLOP counts per token unless named otherwise, bytes as stored.
  double hidden_ = 0;             // hidden size
  double act_bytes_ = 0;          // bytes per activation element
  double qkv_weight_params_ = 0;  // QKV (MLA: q path and kv_a) weights applied per new token
  double qkv_out_ = 0;            // QKV output elements per token
  double mla_kv_up_params_ = 0;   // MLA kv_b: applied per decode token and per prefill key
  double o_in_ = 0;               // output projection input elements per token
  double o_params_ = 0;
  double dense_mlp_params_ = 0;     // gate, up and down
  double dense_inter_ = 0;          // intermediate width per rank
  double weight_bytes_ = 0;         // bytes per dense weight
  double expert_weight_bytes_ = 0;  // bytes per expert weight
  double expert_inter_ = 0;         // expert intermediate width per rank
  double shared_inter_ = 0;         // shared experts' total intermediate width per rank
  double router_params_ = 0;        // hidden * num_experts, replicated
  double num_experts_ = 0;
  double local_experts_ = 0;  // routed experts one rank holds
  double busiest_share_ = 1;  // fraction of routed rows on the busiest rank (ExpertLoad)
  double experts_per_token_ = 0;
  double shared_experts_ = 0;
  double log_expert_miss_ = 0;         // log(1 - k / E): P(one token skips a given expert)
  double heads_ = 0;                   // query heads per rank
  double rope_elements_ = 0;           // elements RoPE rotates per token (q and k)
  double qk_norm_elements_ = 0;        // elements the q/k norms touch per token; 0 without
  double prefill_flops_per_pair_ = 0;  // attention FLOPs per query-key pair, all heads of a rank
  double decode_flops_per_pair_ = 0;
  double kv_bytes_per_token_ = 0;  // cache bytes per token and layer on one rank
  double attn_io_per_token_ = 0;   // query in + attention out elements per token
  int sliding_window_ = 0;         // tokens; 0 = none
  double lm_head_params_ = 0;      // vocab / tp * hidden
  double vocab_per_rank_ = 0;
  double vocab_ = 0;
  int per_layer_kernels_ = 0;  // norms, RoPE, q/k norms per layer
  int mlp_kernels_ = 0;
  int moe_kernels_ = 0;

  CommModel comm_;
};

}  // namespace servesim
