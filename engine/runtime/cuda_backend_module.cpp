// The CUDA backend's BackendModule and the factory the servesim_cuda_backend module exports
// (backend_module.h): bf16 CudaWeights shared by CudaModelRunners, and the device's ceilings
// from kernels/cuda/cuda_roofline.h. Compiled only into that module, with hidden visibility:
// the factory is its one exported symbol.
#include <memory>
#include <string>
#include <utility>

#include "engine/runtime/backend_module.h"
#include "engine/runtime/cuda_model_runner.h"
#include "engine/runtime/cuda_weights.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_roofline.h"

namespace servesim {
namespace {

class CudaBackendWeights final : public BackendWeights {
 public:
  explicit CudaBackendWeights(std::shared_ptr<const CudaWeights> weights)
      : weights_(std::move(weights)) {}

  const ModelSpec& spec() const override { return weights_->spec; }
  int64_t num_params() const override { return weights_->num_params(); }
  int64_t bytes_read_per_step() const override { return weights_->bytes_read_per_step(); }
  std::unique_ptr<Runner> make_runner(const RunnerOptions& o) const override {
    return std::make_unique<CudaModelRunner>(
        weights_,
        CudaModelRunnerOptions{
            .num_blocks = o.num_blocks, .block_size = o.block_size, .profile = o.profile});
  }

 private:
  std::shared_ptr<const CudaWeights> weights_;
};

class CudaBackend final : public BackendModule {
 public:
  void require_device() const override { require_cuda_device(); }

  std::string device_name() const override { return cuda::current_device_info().name; }

  std::shared_ptr<const BackendWeights> random_weights(const ModelSpec& spec,
                                                       uint64_t seed) const override {
    return std::make_shared<CudaBackendWeights>(CudaWeights::random(spec, seed));
  }

  // The host copy is released as soon as the bf16 one is on the device.
  std::shared_ptr<const BackendWeights> upload_weights(
      std::shared_ptr<const Weights> host) const override {
    return std::make_shared<CudaBackendWeights>(CudaWeights::upload(*host));
  }

  DeviceCeilings measure_ceilings(const CeilingOptions& o) const override {
    return {
        .read_bandwidth_Bps = cuda::measure_hbm_read_bandwidth_Bps(o.read_bytes, o.read_repeats),
        .gemm_flops =
            cuda::measure_cublas_gemm_flops(o.gemm_size, o.gemm_size, o.gemm_size, o.gemm_repeats)};
  }
};

}  // namespace
}  // namespace servesim

extern "C" __attribute__((visibility("default"))) const servesim::BackendModule*
servesim_backend_module(int interface_version) {
  static const servesim::CudaBackend kCuda;
  return interface_version == servesim::kBackendModuleVersion ? &kCuda : nullptr;
}
