#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/rope.h"

namespace servesim::cuda {
namespace {

// One thread per (token, head, pair): pairs of a head are contiguous in threadIdx, so
// neighbouring threads touch neighbouring floats.
__global__ void rope_kernel(float* x, int64_t num_tokens, int64_t row_stride, int num_heads,
                            int head_dim, const int32_t* positions, const float* cos_table,
                            const float* sin_table) {
  const int half = head_dim / 2;
  const int64_t total = num_tokens * num_heads * half;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int pair = static_cast<int>(i % half);
    const int head = static_cast<int>((i / half) % num_heads);
    const int64_t token = i / (static_cast<int64_t>(half) * num_heads);
    const int64_t table = static_cast<int64_t>(positions[token]) * half + pair;
    const float c = cos_table[table], s = sin_table[table];
    float* v = x + token * row_stride + static_cast<int64_t>(head) * head_dim;
    const float a = v[pair], b = v[pair + half];
    v[pair] = a * c - b * s;
    v[pair + half] = b * c + a * s;
  }
}

}  // namespace

RopeTable::RopeTable(const servesim::RopeTable& host)
    : head_dim_(host.head_dim()),
      max_positions_(host.max_positions()),
      cos_(static_cast<int64_t>(host.cos_table().size_bytes())),
      sin_(static_cast<int64_t>(host.sin_table().size_bytes())) {
  cos_.upload(host.cos_table(), nullptr);
  sin_.upload(host.sin_table(), nullptr);
  synchronize(nullptr);
}

void RopeTable::apply(float* x, int64_t num_tokens, int64_t row_stride, int num_heads,
                      const int32_t* positions, Stream stream) const {
  const int64_t total = num_tokens * num_heads * (head_dim_ / 2);
  if (total == 0) return;
  constexpr int kThreads = 256;
  const auto blocks =
      static_cast<unsigned>(std::min<int64_t>((total + kThreads - 1) / kThreads, 65535));
  rope_kernel<<<blocks, kThreads, 0, stream>>>(x, num_tokens, row_stride, num_heads, head_dim_,
                                               positions, cos_.data<float>(), sin_.data<float>());
  check_launch("rope_kernel");
}

}  // namespace servesim::cuda
