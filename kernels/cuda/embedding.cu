#include <cuda_bf16.h>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/embedding.h"

namespace servesim::cuda {
namespace {

__global__ void embedding_kernel(const __nv_bfloat16* table, int64_t dim, const int32_t* ids,
                                 float* out) {
  const int64_t token = blockIdx.x;
  const __nv_bfloat16* row = table + static_cast<int64_t>(ids[token]) * dim;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    out[token * dim + i] = __bfloat162float(row[i]);
  }
}

}  // namespace

void embedding(const Bf16* table, int64_t dim, const int32_t* ids, int64_t num_tokens, float* out,
               Stream stream) {
  if (num_tokens == 0) return;
  embedding_kernel<<<static_cast<unsigned>(num_tokens), 256, 0, stream>>>(
      reinterpret_cast<const __nv_bfloat16*>(table), dim, ids, out);
  check_launch("embedding_kernel");
}

}  // namespace servesim::cuda
