#include <cuda_bf16.h>

#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/silu_mul.h"

namespace servesim::cuda {
namespace {

__global__ void silu_mul_kernel(const __nv_bfloat16* gate_up, __nv_bfloat16* out, int64_t total,
                                int64_t ffn) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / ffn, col = i % ffn;
    const float g = __bfloat162float(gate_up[row * 2 * ffn + col]);
    const float u = __bfloat162float(gate_up[row * 2 * ffn + ffn + col]);
    out[i] = __float2bfloat16(g / (1.0f + __expf(-g)) * u);
  }
}

}  // namespace

void silu_mul(const Bf16* gate_up, Bf16* out, int64_t rows, int64_t ffn, Stream stream) {
  const int64_t total = rows * ffn;
  if (total == 0) return;
  constexpr int kThreads = 256;
  // A grid-stride loop over at most 64k blocks: enough to fill any GPU, bounded launch size.
  const auto blocks =
      static_cast<unsigned>(std::min<int64_t>((total + kThreads - 1) / kThreads, 65535));
  silu_mul_kernel<<<blocks, kThreads, 0, stream>>>(reinterpret_cast<const __nv_bfloat16*>(gate_up),
                                                   reinterpret_cast<__nv_bfloat16*>(out), total,
                                                   ffn);
  check_launch("silu_mul_kernel");
}

}  // namespace servesim::cuda
