#include <cuda_bf16.h>

#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/random_fill.h"

namespace servesim::cuda {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65535));
}

// splitmix64's finaliser: a bijective mix whose outputs pass as independent uniform draws.
__device__ uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__global__ void fill_uniform_kernel(__nv_bfloat16* dst, int64_t n, uint64_t key, float amplitude) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const uint64_t bits = mix64(key + static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ull);
    const float u = static_cast<float>(bits >> 40) * 0x1.0p-24f;  // [0, 1) with 24 bits
    dst[i] = __float2bfloat16((2.0f * u - 1.0f) * amplitude);
  }
}

__global__ void fill_constant_kernel(float* dst, int64_t n, float value) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    dst[i] = value;
  }
}

}  // namespace

void fill_uniform_bf16(Bf16* dst, int64_t n, uint64_t seed, uint64_t stream_id, float amplitude,
                       Stream stream) {
  if (n == 0) return;
  const uint64_t key = seed * 0xd1b54a32d192ed03ull ^ (stream_id + 1) * 0x8cb92ba72f3d8dd7ull;
  fill_uniform_kernel<<<grid_for(n), kThreads, 0, stream>>>(reinterpret_cast<__nv_bfloat16*>(dst),
                                                            n, key, amplitude);
  check_launch("fill_uniform_kernel");
}

void fill_constant(float* dst, int64_t n, float value, Stream stream) {
  if (n == 0) return;
  fill_constant_kernel<<<grid_for(n), kThreads, 0, stream>>>(dst, n, value);
  check_launch("fill_constant_kernel");
}

}  // namespace servesim::cuda
