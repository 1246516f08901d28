// Host-side bfloat16 conversions: the engine keeps fp32 weights on the host and uploads them
// rounded to bf16, and the tests round their inputs the same way to compare a CUDA kernel
// with its fp32 CPU reference on identical values. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "kernels/cuda/cuda_types.h"

namespace servesim::cuda {

// Round to nearest, ties to even, as __float2bfloat16 does; NaN stays a (quiet) NaN.
inline Bf16 to_bf16(float x) {
  uint32_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return Bf16{static_cast<uint16_t>((u >> 16) | 0x40u)};
  u += 0x7fffu + ((u >> 16) & 1u);
  return Bf16{static_cast<uint16_t>(u >> 16)};
}

inline float from_bf16(Bf16 x) {
  const uint32_t u = static_cast<uint32_t>(x.bits) << 16;
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline std::vector<Bf16> to_bf16(std::span<const float> x) {
  std::vector<Bf16> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = to_bf16(x[i]);
  return out;
}

// x rounded to bf16 and back: the value a CUDA kernel sees for an fp32 input stored as bf16.
inline std::vector<float> round_to_bf16(std::span<const float> x) {
  std::vector<float> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = from_bf16(to_bf16(x[i]));
  return out;
}

}  // namespace servesim::cuda
