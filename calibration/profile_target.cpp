#include "calibration/profile_target.h"

#include <fstream>

#include "engine/runtime/model_runner.h"
#include "kernels/cpu_roofline.h"
#include "kernels/thread_pool.h"
#include "models/config_error.h"
#ifdef SERVESIM_WITH_CUDA
#include "engine/runtime/cuda_model_runner.h"
#include "engine/runtime/cuda_weights.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_roofline.h"
#endif

namespace servesim {
namespace {

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      const size_t start = line.find_first_not_of(' ', colon + 1);
      if (colon != std::string::npos && start != std::string::npos) return line.substr(start);
    }
  }
  return "unknown CPU";
}

ProfileTarget cpu_target(const ModelSpec& spec, const ProfileTargetOptions& o) {
  ProfileTarget t;
  t.cpu_weights = std::make_unique<Weights>(Weights::random(spec, o.seed));
  t.runner =
      std::make_unique<ModelRunner>(*t.cpu_weights, ModelRunnerOptions{.num_blocks = o.num_blocks,
                                                                       .block_size = o.block_size,
                                                                       .num_threads = o.threads,
                                                                       .profile = true});
  t.device = cpu_name();
  if (o.measure_device) {
    ThreadPool pool(o.threads);
    t.measured = {{"read_bandwidth_Bps", measure_read_bandwidth_Bps(pool, int64_t{256} << 20, 5)},
                  {"gemm_flops", measure_gemm_flops(pool, 512, 512, 512, 3)}};
  }
  return t;
}

ProfileTarget cuda_target([[maybe_unused]] const ModelSpec& spec,
                          [[maybe_unused]] const ProfileTargetOptions& o) {
#ifdef SERVESIM_WITH_CUDA
  try {
    require_cuda_device();
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("calibrate profile: --backend cuda: ") + e.what());
  }
  ProfileTarget t;
  t.runner = std::make_unique<CudaModelRunner>(
      CudaWeights::random(spec, o.seed),
      CudaModelRunnerOptions{
          .num_blocks = o.num_blocks, .block_size = o.block_size, .profile = true});
  t.device = cuda::current_device_info().name;
  t.weight_dtype = DType::kBf16;
  t.kv_dtype = DType::kBf16;
  if (o.measure_device) {
    // 1 GiB: far beyond any L2; an 8192-cube GEMM: the rate large prefills reach.
    t.measured = {{"read_bandwidth_Bps", cuda::measure_hbm_read_bandwidth_Bps(int64_t{1} << 30, 5)},
                  {"gemm_flops", cuda::measure_cublas_gemm_flops(8192, 8192, 8192, 3)}};
  }
  return t;
#else
  throw ConfigError(
      "calibrate profile: --backend cuda: this build has no CUDA backend (rebuild with "
      "-DSERVESIM_CUDA=ON on a machine with nvcc)");
#endif
}

}  // namespace

ProfileTarget make_profile_target(const ModelSpec& spec, const ProfileTargetOptions& o) {
  Weights::check_supported(spec);
  if (o.backend == "cpu") return cpu_target(spec, o);
  if (o.backend == "cuda") return cuda_target(spec, o);
  throw ConfigError("calibrate profile: --backend must be cpu or cuda, got \"" + o.backend + "\"");
}

}  // namespace servesim
