// silu_mul (CUDA): the SwiGLU activation over the fused gate/up projection, in fp32 from bf16
// inputs; the CUDA counterpart of kernels/silu_mul.h. Stateless; thread-safe.
#pragma once

#include <cstdint>

#include "kernels/cuda/cuda_types.h"

namespace servesim::cuda {

// gate_up: (rows, 2 * ffn) bf16, each row [gate (ffn) | up (ffn)] as the fused projection
// writes it; out: (rows, ffn) bf16 = silu(gate) * up.
void silu_mul(const Bf16* gate_up, Bf16* out, int64_t rows, int64_t ffn, Stream stream);

}  // namespace servesim::cuda
