// Helpers shared by the CUDA kernel tests: skipping without a device, and moving fp32 host
// vectors to and from the device as fp32 or bf16.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "kernels/cuda/bf16.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/device_buffer.h"

// Every test of this suite starts with it: on a machine without a GPU (CI) the suite reports
// its tests as skipped, not failed.
#define SERVESIM_REQUIRE_CUDA_DEVICE()                                           \
  do {                                                                           \
    if (::servesim::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

namespace servesim::testing {

inline cuda::DeviceBuffer to_device(std::span<const float> host) {
  cuda::DeviceBuffer d(static_cast<int64_t>(host.size_bytes()));
  d.upload(host, nullptr);
  return d;
}

inline cuda::DeviceBuffer to_device_bf16(std::span<const float> host) {
  const std::vector<cuda::Bf16> bits = cuda::to_bf16(host);
  cuda::DeviceBuffer d(static_cast<int64_t>(bits.size() * sizeof(cuda::Bf16)));
  d.upload(std::span<const cuda::Bf16>(bits), nullptr);
  return d;
}

template <typename T>
cuda::DeviceBuffer to_device_raw(const std::vector<T>& host) {
  cuda::DeviceBuffer d(static_cast<int64_t>(host.size() * sizeof(T)));
  d.upload(std::span<const T>(host), nullptr);
  return d;
}

inline std::vector<float> from_device(const cuda::DeviceBuffer& d, size_t n) {
  std::vector<float> out(n);
  d.download(out.data(), static_cast<int64_t>(n * sizeof(float)), nullptr);
  return out;
}

inline std::vector<float> from_device_bf16(const cuda::DeviceBuffer& d, size_t n) {
  std::vector<cuda::Bf16> bits(n);
  d.download(bits.data(), static_cast<int64_t>(n * sizeof(cuda::Bf16)), nullptr);
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = cuda::from_bf16(bits[i]);
  return out;
}

// max |a - b| / max |b|: the error relative to the reference's magnitude.
inline double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0, mag = 1e-30;
  for (size_t i = 0; i < b.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
    mag = std::max(mag, std::abs(static_cast<double>(b[i])));
  }
  return worst / mag;
}

}  // namespace servesim::testing
