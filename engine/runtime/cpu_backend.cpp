// The CPU backend's BackendModule: fp32 Weights shared by ModelRunners, and the machine's
// ceilings from kernels/cpu_roofline.h.
#include <fstream>
#include <memory>
#include <string>
#include <utility>

#include "engine/runtime/backend_module.h"
#include "engine/runtime/model_runner.h"
#include "kernels/cpu_roofline.h"
#include "kernels/thread_pool.h"

namespace servesim {
namespace {

// A ModelRunner that keeps its weights alive: ModelRunner borrows them, this shares them.
class SharedWeightsRunner final : public Runner {
 public:
  SharedWeightsRunner(std::shared_ptr<const Weights> weights, const RunnerOptions& o)
      : weights_(std::move(weights)),
        runner_(*weights_, ModelRunnerOptions{.num_blocks = o.num_blocks,
                                              .block_size = o.block_size,
                                              .num_threads = o.num_threads,
                                              .profile = o.profile}) {}

  const ModelSpec& spec() const override { return runner_.spec(); }
  const RunnerOutput& execute(const SchedulerOutput& output,
                              std::span<const std::span<const int32_t>> tokens) override {
    return runner_.execute(output, tokens);
  }

 private:
  std::shared_ptr<const Weights> weights_;  // declared first: outlives runner_
  ModelRunner runner_;
};

class CpuWeights final : public BackendWeights {
 public:
  explicit CpuWeights(std::shared_ptr<const Weights> weights) : weights_(std::move(weights)) {}

  const ModelSpec& spec() const override { return weights_->spec; }
  int64_t num_params() const override { return weights_->num_params(); }
  int64_t bytes_read_per_step() const override { return weights_->bytes_read_per_step(); }
  std::unique_ptr<Runner> make_runner(const RunnerOptions& options) const override {
    return std::make_unique<SharedWeightsRunner>(weights_, options);
  }

 private:
  std::shared_ptr<const Weights> weights_;
};

class CpuBackend final : public BackendModule {
 public:
  void require_device() const override {}

  std::string device_name() const override {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("model name", 0) != 0) continue;
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const size_t start = line.find_first_not_of(' ', colon + 1);
      if (start != std::string::npos) return line.substr(start);
    }
    return "unknown CPU";
  }

  std::shared_ptr<const BackendWeights> random_weights(const ModelSpec& spec,
                                                       uint64_t seed) const override {
    return std::make_shared<CpuWeights>(
        std::make_shared<const Weights>(Weights::random(spec, seed)));
  }

  std::shared_ptr<const BackendWeights> upload_weights(
      std::shared_ptr<const Weights> host) const override {
    return std::make_shared<CpuWeights>(std::move(host));
  }

  DeviceCeilings measure_ceilings(const CeilingOptions& o) const override {
    ThreadPool pool(o.num_threads);
    return {.read_bandwidth_Bps = measure_read_bandwidth_Bps(pool, o.read_bytes, o.read_repeats),
            .gemm_flops =
                measure_gemm_flops(pool, o.gemm_size, o.gemm_size, o.gemm_size, o.gemm_repeats)};
  }
};

}  // namespace

const BackendModule& cpu_backend_module() {
  static const CpuBackend kCpu;
  return kCpu;
}

}  // namespace servesim
