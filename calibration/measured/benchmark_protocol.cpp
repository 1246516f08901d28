#include "calibration/measured/benchmark_protocol.h"

#include "models/config_error.h"

namespace servesim {

BenchmarkProtocol BenchmarkProtocol::steady() {
  return BenchmarkProtocol{};
}

BenchmarkProtocol BenchmarkProtocol::inferencex() {
  return BenchmarkProtocol{.name = "inferencex",
                           .requests_per_client = 10,
                           .min_requests = 0,
                           .warmup_per_client = 0,
                           .range_ratio = 0.8};
}

BenchmarkProtocol BenchmarkProtocol::aiconfigurator() {
  return BenchmarkProtocol{.name = "aiconfigurator",
                           .requests_per_client = 20,
                           .min_requests = 0,
                           .warmup_per_client = 0,
                           .range_ratio = 1.0,
                           .engine_launch = EngineLaunch::kAiconfiguratorGenerated};
}

BenchmarkProtocol BenchmarkProtocol::inferencemax() {
  BenchmarkProtocol p = inferencex();
  p.name = "inferencemax";
  p.engine_launch = EngineLaunch::kInferenceMaxRecipe;
  return p;
}

BenchmarkProtocol BenchmarkProtocol::named(const std::string& name, const std::string& field) {
  if (name == "steady") return steady();
  if (name == "inferencex") return inferencex();
  if (name == "aiconfigurator") return aiconfigurator();
  if (name == "inferencemax") return inferencemax();
  throw ConfigError(field +
                    ": expected steady, inferencex, aiconfigurator or inferencemax (how the "
                    "published runs were benchmarked; docs/calibrate-serving.md), got '" +
                    name + "'");
}

}  // namespace servesim
