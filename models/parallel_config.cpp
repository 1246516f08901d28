#include "models/parallel_config.h"

#include "models/config_error.h"
#include "models/model_spec.h"

namespace servesim {
namespace {

void validate_expert_parallel(const ParallelConfig& p, const ModelSpec& model) {
  if (!(p.expert_zipf_exponent >= 0 && p.expert_zipf_exponent <= kMaxExpertZipfExponent)) {
    throw ConfigError("expert_zipf_exponent must be in [0, 4], got " +
                      std::to_string(p.expert_zipf_exponent) + "; use 0 for uniform routing");
  }
  if (!p.enable_expert_parallel) return;
  if (!model.is_moe()) {
    throw ConfigError("--enable-expert-parallel needs a mixture-of-experts model; " + model.name +
                      " is dense: drop the flag and use --tensor-parallel-size or "
                      "--data-parallel-size");
  }
  const int experts = model.moe->num_experts;
  if (experts % p.ep() != 0) {
    std::string fits;
    for (int ep = 2; ep <= experts; ep *= 2) {
      if (experts % ep == 0) fits += (fits.empty() ? "" : ", ") + std::to_string(ep);
    }
    throw ConfigError("--enable-expert-parallel: EP = TP " + std::to_string(p.tp) + " x DP " +
                      std::to_string(p.dp) + " = " + std::to_string(p.ep()) +
                      " does not divide the " + std::to_string(experts) + " experts of " +
                      model.name + "; choose TP x DP among " + fits);
  }
}

}  // namespace

void ParallelConfig::validate(const ModelSpec& model) const {
  if (tp < 1) throw ConfigError("--tensor-parallel-size must be >= 1, got " + std::to_string(tp));
  if (pp < 1) throw ConfigError("--pipeline-parallel-size must be >= 1, got " + std::to_string(pp));
  if (dp < 1) throw ConfigError("--data-parallel-size must be >= 1, got " + std::to_string(dp));
  if (servers < 1) throw ConfigError("servers must be >= 1, got " + std::to_string(servers));
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
  validate_expert_parallel(*this, model);
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
