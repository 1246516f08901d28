// DeviceBuffer: one allocation of device memory, freed with the buffer, plus the host<->device
// copies the runtime and the tests need. Typed views (data<T>()) keep call sites short; the
// buffer itself is untyped because the engine stores bf16, fp32 and int32 arrays alike.
//
// Ownership: owns its allocation (move-only). Thread-safety: none; copies run on the given
// stream and are ordered with kernels on it. Invariants: data() is nullptr iff bytes() == 0.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/cuda/cuda_types.h"

namespace servesim::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Throws CudaError when the device is out of memory.
  explicit DeviceBuffer(int64_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  int64_t bytes() const { return bytes_; }
  template <typename T>
  T* data() const {
    return static_cast<T*>(data_);
  }

  // Grows to at least `bytes` (contents are not kept); no-op when already large enough.
  void reserve(int64_t bytes);

  // Host -> device of `bytes` at byte `offset`, enqueued on `stream`. The host memory must stay
  // valid until the copy ran (pageable memory: the runtime stages it before returning).
  void upload(const void* host, int64_t bytes, Stream stream, int64_t offset = 0);
  // Device -> host, waits for the copy (and everything before it on `stream`).
  void download(void* host, int64_t bytes, Stream stream, int64_t offset = 0) const;

  template <typename T>
  void upload(std::span<const T> host, Stream stream) {
    upload(host.data(), static_cast<int64_t>(host.size_bytes()), stream);
  }
  template <typename T>
  std::vector<T> download_all(Stream stream) const {
    std::vector<T> out(static_cast<size_t>(bytes_) / sizeof(T));
    download(out.data(), static_cast<int64_t>(out.size() * sizeof(T)), stream);
    return out;
  }

 private:
  void* data_ = nullptr;
  int64_t bytes_ = 0;
};

}  // namespace servesim::cuda
