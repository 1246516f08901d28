#include "models/speculative_cost_model.h"

#include "models/config_error.h"
#include "models/op.h"

namespace servesim {
namespace {

ModelSpec draft_spec(const SpeculativeConfig& spec, const ModelSpec& target) {
  if (spec.method == SpeculativeMethod::kDraftModel) {
    if (!spec.draft_model) {
      throw ConfigError("speculative.model \"" + spec.draft_model_name +
                        "\" was not resolved; name a catalog model");
    }
    return *spec.draft_model;
  }
  ModelSpec head = target;  // MTP / EAGLE: one decoder layer of the target's shape
  head.name = target.name + " draft head";
  head.num_layers = 1;
  if (head.moe) head.moe->dense_layers = 0;  // DeepSeek-V3's MTP layer is an MoE layer
  return head;
}

}  // namespace

SpeculativeCostModel::SpeculativeCostModel(const SpeculativeConfig& spec, const ModelSpec& target,
                                           const HardwareSpec& gpu, const ParallelConfig& parallel,
                                           const EngineConfig& engine,
                                           const RooflineOptions& roofline)
    : spec_(spec) {
  if (static_cast<int>(spec.acceptance.size()) != spec.num_speculative_tokens) {
    throw ConfigError(
        "speculative: acceptance_rate or acceptance_per_position is required to simulate; the "
        "simulator does not predict acceptance (e.g. \"acceptance_rate\": 0.7, measured on "
        "your traffic or with servesim engine run)");
  }
  if (parallel.pp > 1) {
    throw ConfigError(
        "speculative decoding with pipeline_parallel_size > 1 is not modelled; use tensor "
        "parallelism or drop engine.speculative");
  }
  if (spec.method == SpeculativeMethod::kNgram) return;
  ParallelConfig one_replica = parallel;
  one_replica.dp = 1;
  draft_ = std::make_unique<RooflineCostModel>(draft_spec(spec, target), gpu, one_replica, engine,
                                               roofline);
}

double SpeculativeCostModel::draft_s(const BatchShape& proposers) const {
  if (proposers.num_seqs == 0) return 0;
  if (!draft_) {
    const int lengths = spec_.prompt_lookup_max - spec_.prompt_lookup_min + 1;
    return kNgramScanSPerToken * lengths * static_cast<double>(proposers.decode_context_tokens);
  }
  const StepTime pass = draft_->predict(proposers);
  return spec_.num_speculative_tokens * (pass.total_s - pass[Op::kOverhead]);
}

std::shared_ptr<const SpeculativeCostModel> make_speculative_cost_model(
    const ModelSpec& target, const HardwareSpec& gpu, const ParallelConfig& parallel,
    const EngineConfig& engine, const RooflineOptions& roofline) {
  if (!engine.speculative) return nullptr;
  return std::make_shared<const SpeculativeCostModel>(*engine.speculative, target, gpu, parallel,
                                                      engine, roofline);
}

}  // namespace servesim
