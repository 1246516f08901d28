// ParallelConfig: how one deployment splits a model over GPUs.
// tp: tensor parallel (each layer split over tp GPUs); pp: pipeline parallel (layers split
// into pp stages); dp: data parallel (independent replicas). One replica uses tp * pp GPUs.
// Plain value; validate() against a model throws ConfigError naming the flag.
#pragma once

#include <string>

namespace servesim {

struct ModelSpec;

struct ParallelConfig {
  int tp = 1;  // --tensor-parallel-size
  int pp = 1;  // --pipeline-parallel-size
  int dp = 1;  // --data-parallel-size (replicas)

  int gpus_per_replica() const { return tp * pp; }
  int total_gpus() const { return tp * pp * dp; }

  // vLLM's rules: tp divides the attention heads, pp does not exceed the layers.
  void validate(const ModelSpec& model) const;

  // Layers pipeline stage `stage` holds (vLLM's partition: the remainder goes to the
  // last stages).
  int layers_in_stage(int num_layers, int stage) const;
  int first_layer_of_stage(int num_layers, int stage) const;
};

}  // namespace servesim
