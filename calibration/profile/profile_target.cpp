#include "calibration/profile/profile_target.h"

#include "engine/runtime/backend.h"
#include "engine/runtime/weights.h"
#include "models/config_error.h"

namespace servesim {
namespace {

// The ceilings' sizes: a buffer far beyond any last-level cache (256 MiB) or L2 (1 GiB), and
// the GEMM a CPU (512^3) or a GPU (8192^3, the rate large prefills reach) is measured on.
CeilingOptions ceiling_options(Backend backend, int threads) {
  if (backend == Backend::kCpu) {
    return {.num_threads = threads,
            .read_bytes = int64_t{256} << 20,
            .read_repeats = 5,
            .gemm_size = 512,
            .gemm_repeats = 3};
  }
  return {.read_bytes = int64_t{1} << 30, .read_repeats = 5, .gemm_size = 8192, .gemm_repeats = 3};
}

Backend checked_backend(const std::string& name) {
  try {
    const Backend backend = parse_backend(name);
    require_backend(backend);
    return backend;
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("calibrate profile: ") + e.what());
  }
}

}  // namespace

ProfileTarget make_profile_target(const ModelSpec& spec, const ProfileTargetOptions& o) {
  Weights::check_supported(spec);
  const Backend backend = checked_backend(o.backend);
  ProfileTarget t;
  t.runner = load_weights(backend, spec, {}, o.seed)
                 ->make_runner({.num_blocks = o.num_blocks,
                                .block_size = o.block_size,
                                .num_threads = o.threads,
                                .profile = true});
  t.device = device_name(backend);
  t.weight_dtype = backend_dtype(backend);
  t.kv_dtype = backend_dtype(backend);
  if (o.measure_device) {
    const DeviceCeilings c = measure_ceilings(backend, ceiling_options(backend, o.threads));
    t.measured = {{"read_bandwidth_Bps", c.read_bandwidth_Bps}, {"gemm_flops", c.gemm_flops}};
  }
  return t;
}

}  // namespace servesim
