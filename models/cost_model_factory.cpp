#include "models/cost_model_factory.h"

namespace servesim {

std::unique_ptr<CostModel> make_cost_model(const CostModelChoice& choice, const ModelSpec& model,
                                           const HardwareSpec& gpu, const ParallelConfig& parallel,
                                           const EngineConfig& engine) {
  if (choice.profile != nullptr) {
    return std::make_unique<CalibratedCostModel>(*choice.profile, model, parallel,
                                                 choice.calibrated);
  }
  return std::make_unique<RooflineCostModel>(model, gpu, parallel, engine, choice.roofline);
}

}  // namespace servesim
