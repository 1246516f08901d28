#include "models/parallel_config.h"

#include "models/config_error.h"
#include "models/model_spec.h"

namespace servesim {

void ParallelConfig::validate(const ModelSpec& model) const {
  if (tp < 1) throw ConfigError("--tensor-parallel-size must be >= 1, got " + std::to_string(tp));
  if (pp < 1) throw ConfigError("--pipeline-parallel-size must be >= 1, got " + std::to_string(pp));
  if (dp < 1) throw ConfigError("--data-parallel-size must be >= 1, got " + std::to_string(dp));
  if (model.num_heads % tp != 0) {
    std::string fits;
    for (int t = 1; t <= 64; t *= 2) {
      if (model.num_heads % t == 0) fits += (fits.empty() ? "" : ", ") + std::to_string(t);
    }
    throw ConfigError("--tensor-parallel-size " + std::to_string(tp) + " does not divide the " +
                      std::to_string(model.num_heads) + " attention heads of " + model.name +
                      "; use one of " + fits);
  }
  if (pp > model.num_layers) {
    throw ConfigError("--pipeline-parallel-size " + std::to_string(pp) + " exceeds the " +
                      std::to_string(model.num_layers) + " layers of " + model.name);
  }
}

int ParallelConfig::layers_in_stage(int num_layers, int stage) const {
  const int base = num_layers / pp;
  const int remainder = num_layers % pp;
  return base + (stage >= pp - remainder ? 1 : 0);
}

int ParallelConfig::first_layer_of_stage(int num_layers, int stage) const {
  int first = 0;
  for (int s = 0; s < stage; ++s) first += layers_in_stage(num_layers, s);
  return first;
}

}  // namespace servesim
