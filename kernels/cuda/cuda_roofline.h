// Measurements of the two ceilings the CUDA engine is held to, as kernels/cpu_roofline.h does
// for the CPU: how fast the device streams HBM into its multiprocessors (decode reads every
// weight once per step), and the rate cuBLAS reaches on a bf16 GEMM with fp32 accumulation
// (prefill is GEMMs). Each returns the median of `repeats` runs timed with CUDA events after
// one warm-up. Stateless; uses the current device and its own stream.
#pragma once

#include <cstdint>

namespace servesim::cuda {

// Bytes per second read by a kernel that sums a `bytes`-sized buffer with 16-byte loads
// (choose it well beyond the L2 cache: 50 MB on H100, 60 MB on H200).
double measure_hbm_read_bandwidth_Bps(int64_t bytes, int repeats);

// FLOP/s of CublasLinear::forward on an (m, k) x (n, k)^T bf16 product with a bf16 output,
// counting 2*m*n*k per call.
double measure_cublas_gemm_flops(int64_t m, int64_t n, int64_t k, int repeats);

}  // namespace servesim::cuda
