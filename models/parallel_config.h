// ParallelConfig: how one deployment splits a model over GPUs.
// tp: tensor parallel (each layer split over tp GPUs); pp: pipeline parallel (layers split
// into pp stages); dp: data parallel (replicas, each with its own scheduler and KV cache).
// One replica uses tp * pp GPUs.
//
// Expert parallelism (vLLM --enable-expert-parallel; vLLM 0.12's expert-parallel deployment
// guide: EP_SIZE = TP_SIZE x DP_SIZE): the MoE layers of the dp replicas form one group of
// EP = tp x dp ranks, each holding num_experts / EP whole experts; attention and dense layers
// stay tensor parallel within a replica (attention data parallel across replicas when
// dp > 1). Because every MoE layer exchanges tokens over the whole group, the dp replicas
// then step in lock-step.
//
// Plain value; validate() against a model throws ConfigError naming the flag.
#pragma once

#include <string>

namespace servesim {

struct ModelSpec;

struct ParallelConfig {
  int tp = 1;                           // --tensor-parallel-size
  int pp = 1;                           // --pipeline-parallel-size
  int dp = 1;                           // --data-parallel-size (replicas)
  bool enable_expert_parallel = false;  // --enable-expert-parallel
  // Popularity skew of routed experts: expert i (by popularity) gets a share proportional to
  // 1 / i^s. 0 = uniform routing. REQUIRES: in [0, kMaxExpertZipfExponent].
  double expert_zipf_exponent = 0;

  // Independent copies of the whole deployment (all dp replicas) behind one router: the
  // planner's copies of one expert-parallel server. Not a vLLM flag.
  int servers = 1;

  int gpus_per_replica() const { return tp * pp; }
  int replicas() const { return dp * servers; }
  int total_gpus() const { return tp * pp * dp * servers; }
  // Ranks of the expert-parallel group: tp x dp with expert parallelism, else 1 (experts are
  // tensor-parallel then, split over tp like every other layer).
  int ep() const { return enable_expert_parallel ? tp * dp : 1; }
  // The dp replicas run each step together, the slowest setting the pace (vLLM runs dummy
  // batches on idle data-parallel ranks so the MoE collectives line up).
  bool lockstep() const { return enable_expert_parallel && dp > 1; }

  // vLLM's rules: tp divides the attention heads, pp does not exceed the layers; expert
  // parallelism needs a MoE model whose routed experts EP divides.
  void validate(const ModelSpec& model) const;

  // Layers pipeline stage `stage` holds (vLLM's partition: the remainder goes to the
  // last stages).
  int layers_in_stage(int num_layers, int stage) const;
  int first_layer_of_stage(int num_layers, int stage) const;
};

inline constexpr double kMaxExpertZipfExponent = 4;

}  // namespace servesim
