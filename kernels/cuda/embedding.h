// embedding (CUDA): gathers the bf16 table row of each token id into the fp32 residual stream;
// the CUDA counterpart of kernels/embedding.h. Stateless; thread-safe.
#pragma once

#include <cstdint>

#include "kernels/cuda/cuda_types.h"

namespace servesim::cuda {

// table: (vocab, dim) bf16; ids: (num_tokens) device int32; out: (num_tokens, dim) fp32.
// REQUIRES: every id in [0, vocab) — the runner checks ids on the host, a kernel cannot throw.
void embedding(const Bf16* table, int64_t dim, const int32_t* ids, int64_t num_tokens, float* out,
               Stream stream);

}  // namespace servesim::cuda
