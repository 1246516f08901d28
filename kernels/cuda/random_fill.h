// Device-side initialisation of large tensors: a model the size of Llama-3-8B has 16 GB of
// bf16 weights, 32 GB as the host's fp32 Weights, so the CUDA backend can draw its random
// weights on the device instead. The values are a counter-based hash of (seed, stream, index),
// so a tensor's contents depend only on those three, not on the launch shape. They are not
// the values Weights::random draws on the host. Stateless; thread-safe.
#pragma once

#include <cstdint>

#include "kernels/cuda/cuda_types.h"

namespace servesim::cuda {

// dst[i] = uniform in [-amplitude, amplitude), rounded to bf16, for i < n. `stream_id` keeps
// tensors drawn from one seed apart.
void fill_uniform_bf16(Bf16* dst, int64_t n, uint64_t seed, uint64_t stream_id, float amplitude,
                       Stream stream);

// dst[i] = value for i < n.
void fill_constant(float* dst, int64_t n, float value, Stream stream);

}  // namespace servesim::cuda
