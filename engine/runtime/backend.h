// Backend: where the engine runs a model — the CPU (fp32 weights and KV cache, ModelRunner) or
// a CUDA device (bf16, CudaModelRunner) — and the one place that dispatches between them.
// Everything above engine/runtime names a backend, builds weights and runners on it, asks
// what the device is and measures its ceilings through this header; none of it includes
// kernels/ or a CUDA header.
//
//   const Backend b = parse_backend(name);                 // "cpu" | "cuda"
//   require_backend(b);                                    // one-line ConfigError if not here
//   auto weights = load_weights(b, spec, checkpoint, seed);
//   std::unique_ptr<Runner> runner = weights->make_runner({.num_blocks = n});
//   const DeviceCeilings c = measure_ceilings(b, {.read_bytes = 1 << 30});
//
// The CUDA backend lives in a shared module (servesim_cuda_backend.so, built with
// SERVESIM_CUDA) that is opened with dlopen() the first time a CUDA function here is called,
// so a process that never uses it maps no CUDA library and runs where none is installed. The
// module is looked for where the build put it, or at $SERVESIM_CUDA_BACKEND when that is set
// (a CPU-only build has no module and ignores it); once opened it stays loaded for the life of
// the process (runners and weights point into it).
//
// Thread-safety: opening the module is thread-safe (once); BackendWeights are immutable and
// may be shared across threads; a Runner is driven by one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/runtime/runner.h"
#include "engine/runtime/weights.h"
#include "kernels/cuda/cuda_error.h"
#include "models/dtype.h"
#include "models/model_spec.h"

namespace servesim {

enum class Backend {
  kCpu,   // ModelRunner: fp32 on the CPU
  kCuda,  // CudaModelRunner: bf16 weights and KV cache on the current CUDA device
};

// What a device call that failed mid-run throws (out of device memory, a kernel fault): the
// CUDA kernels' CudaError, named here so callers can catch it without including kernels/.
using DeviceError = cuda::CudaError;

// "cpu" or "cuda". Throws ConfigError "--backend 'NAME': expected cpu or cuda" otherwise.
Backend parse_backend(std::string_view name);
const char* backend_name(Backend backend);

// Whether this build has the CUDA backend module (configured with SERVESIM_CUDA).
bool cuda_backend_built();

// Returns when `backend` can run here. Otherwise throws ConfigError with one line starting
// "--backend cuda: ": the build has no CUDA backend, the module cannot be opened (its path and
// the loader's reason, e.g. a missing libcublas), or the CUDA runtime sees no device.
void require_backend(Backend backend);

// The CPU's model name (/proc/cpuinfo) or the current CUDA device's name.
std::string device_name(Backend backend);

// Element type of the weights and of the KV cache a backend's runners use: fp32 on the CPU,
// bf16 on CUDA (its GEMMs accumulate in fp32).
DType backend_dtype(Backend backend);

// The runner options every backend takes; num_threads only matters on the CPU.
struct RunnerOptions {
  int64_t num_blocks = 0;  // KV blocks including the null block 0. REQUIRES: >= 2
  int block_size = 16;     // tokens per KV block; the scheduler's block_size. REQUIRES: >= 1
  int num_threads = 1;     // CPU threads for GEMMs and attention, the caller included
  bool profile = false;    // per-op times in RunnerOutput::op_s (clock reads or CUDA events)
};

// A model's parameters as one backend stores them, shared by every runner built over them
// (the bench builds one engine per repeat over one copy). Immutable; thread-safe for reads.
class BackendWeights {
 public:
  virtual ~BackendWeights() = default;

  virtual const ModelSpec& spec() const = 0;
  virtual int64_t num_params() const = 0;           // elements stored (a tied LM head once)
  virtual int64_t bytes_read_per_step() const = 0;  // weight bytes a decode step streams

  // A runner over these weights; it shares them, so they live as long as it does. Throws
  // ConfigError for bad options, DeviceError when the KV cache does not fit the device.
  virtual std::unique_ptr<Runner> make_runner(const RunnerOptions& options) const = 0;
};

// The weights of `spec` on `backend`: read from `checkpoint` (Hugging Face .safetensors
// shards) or, when it is empty, drawn from `seed` — on the CUDA device itself, since an 8B
// model's fp32 host copy would need 32 GB. Throws ConfigError for a model the backend cannot
// run, a bad checkpoint, or a backend that cannot run here (as require_backend).
std::shared_ptr<const BackendWeights> load_weights(Backend backend, const ModelSpec& spec,
                                                   const std::vector<std::string>& checkpoint,
                                                   uint64_t seed);

// Host fp32 weights on `backend`: the CPU shares `host` (an owner-less pointer borrows it), the
// CUDA backend uploads a bf16 copy and lets `host` go. Throws as load_weights.
std::shared_ptr<const BackendWeights> upload_weights(Backend backend,
                                                     std::shared_ptr<const Weights> host);

// What measure_ceilings times; each figure is the median of its repeats after one warm-up.
struct CeilingOptions {
  int num_threads = 1;                      // CPU threads sharing the work (CPU only)
  int64_t read_bytes = int64_t{512} << 20;  // buffer summed: choose it beyond any cache
  int read_repeats = 5;
  int gemm_size = 1024;  // a gemm_size^3 product: Eigen fp32 on the CPU, cuBLAS bf16 on CUDA
  int gemm_repeats = 3;
};

// The two ceilings the engine is held to: decode streams every weight once per step, prefill
// is GEMMs.
struct DeviceCeilings {
  double read_bandwidth_Bps = 0;  // memory (CPU) or HBM (CUDA) read bandwidth
  double gemm_flops = 0;          // 2 m n k per product
};

// Measures `backend`'s ceilings (seconds of work). Throws as require_backend, DeviceError for a
// failing device call.
DeviceCeilings measure_ceilings(Backend backend, const CeilingOptions& options);

// The instruction set the CPU kernels run with ("x86-64-v3"). Throws std::runtime_error when
// SERVESIM_CPU_ISA names a level this CPU or build lacks.
const char* cpu_kernels_isa();
// "x86-64-v3 (built: x86-64, x86-64-v3, x86-64-v4)": what --version prints.
std::string cpu_kernels_summary();

}  // namespace servesim
