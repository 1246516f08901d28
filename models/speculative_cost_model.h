// SpeculativeCostModel: what drafting costs per step under speculative decoding, on top of the
// verify step the replica's CostModel prices (each verified sequence's 1 + k tokens are in its
// BatchShape). docs/speculative-decoding.md derives each term:
//  - ngram: prompt lookup on the host, kNgramScanSPerToken per context token and n-gram
//    length tried, per proposing sequence (the GPU waits: vLLM 0.11 proposes synchronously).
//  - draft_model: k decode passes of the draft model over the proposing sequences, priced by a
//    RooflineCostModel of the draft on the target's GPUs and tensor parallelism.
//  - mtp / eagle: k passes of one extra decoder layer of the target's shape plus its LM head.
// Host step overhead is paid once per engine step, so the draft passes leave it out.
//
// Immutable after construction; draft_s() is O(1), allocation-free and thread-safe.
#pragma once

#include <memory>

#include "models/batch_shape.h"
#include "models/engine_config.h"
#include "models/hardware_spec.h"
#include "models/model_spec.h"
#include "models/parallel_config.h"
#include "models/roofline_cost_model.h"
#include "models/speculative_config.h"

namespace servesim {

// servesim's NgramProposer (engine/sched/ngram_proposer.h) scanning random tokens, no match,
// n-gram lengths 1-4: 43-45 ns per context token on the build machine (x86-64, 2 loaded
// cores, contexts 512-8192), i.e. 11 ns per token and length tried.
inline constexpr double kNgramScanSPerToken = 11e-9;

class SpeculativeCostModel {
 public:
  // Throws ConfigError: pipeline parallelism (not modelled), a draft model without its spec
  // or one that does not split over the tensor-parallel size.
  SpeculativeCostModel(const SpeculativeConfig& spec, const ModelSpec& target,
                       const HardwareSpec& gpu, const ParallelConfig& parallel,
                       const EngineConfig& engine, const RooflineOptions& roofline);

  const SpeculativeConfig& config() const { return spec_; }

  // Seconds of drafting after a step: `proposers` holds one decode row per sequence that
  // sampled, at its context after the step.
  double draft_s(const BatchShape& proposers) const;

 private:
  SpeculativeConfig spec_;
  std::unique_ptr<RooflineCostModel> draft_;  // the draft model or the one-layer head
};

// nullptr when the engine has no speculative config; else the model (ConfigError as above).
std::shared_ptr<const SpeculativeCostModel> make_speculative_cost_model(
    const ModelSpec& target, const HardwareSpec& gpu, const ParallelConfig& parallel,
    const EngineConfig& engine, const RooflineOptions& roofline);

}  // namespace servesim
