#include <cuda_bf16.h>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/rms_norm.h"

namespace servesim::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void rms_norm_kernel(const float* x, const float* weight, __nv_bfloat16* y, int64_t dim,
                                float eps, const int64_t* gather) {
  const int64_t out_row = blockIdx.x;
  const int64_t in_row = gather != nullptr ? gather[out_row] : out_row;
  const float* xr = x + in_row * dim;
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < dim; i += kThreads) sum += xr[i] * xr[i];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  __shared__ float warp_sums[kThreads / 32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < kThreads / 32; ++w) total += warp_sums[w];
  const float inv = rsqrtf(total / static_cast<float>(dim) + eps);
  __nv_bfloat16* yr = y + out_row * dim;
  for (int64_t i = threadIdx.x; i < dim; i += kThreads) {
    yr[i] = __float2bfloat16(xr[i] * inv * weight[i]);
  }
}

}  // namespace

void rms_norm(const float* x, const float* weight, Bf16* y, int64_t rows, int64_t dim, float eps,
              const int64_t* gather, Stream stream) {
  if (rows == 0) return;
  rms_norm_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      x, weight, reinterpret_cast<__nv_bfloat16*>(y), dim, eps, gather);
  check_launch("rms_norm_kernel");
}

}  // namespace servesim::cuda
