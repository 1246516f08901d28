#include "kernels/cuda/device_buffer.h"

#include <utility>

#include "kernels/cuda/cuda_check.h"

namespace servesim::cuda {

DeviceBuffer::DeviceBuffer(int64_t bytes) {
  reserve(bytes);
}

DeviceBuffer::~DeviceBuffer() {
  // A failed free at destruction has no one to report to; the context is being torn down.
  if (data_ != nullptr) cudaFree(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::reserve(int64_t bytes) {
  if (bytes <= bytes_) return;
  if (data_ != nullptr) check_cuda(cudaFree(data_), "cudaFree");
  data_ = nullptr;
  bytes_ = 0;
  check_cuda(cudaMalloc(&data_, static_cast<size_t>(bytes)), "cudaMalloc");
  bytes_ = bytes;
}

void DeviceBuffer::upload(const void* host, int64_t bytes, Stream stream, int64_t offset) {
  if (bytes == 0) return;
  check_cuda(cudaMemcpyAsync(static_cast<char*>(data_) + offset, host, static_cast<size_t>(bytes),
                             cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync (upload)");
}

void DeviceBuffer::download(void* host, int64_t bytes, Stream stream, int64_t offset) const {
  if (bytes == 0) return;
  check_cuda(cudaMemcpyAsync(host, static_cast<const char*>(data_) + offset,
                             static_cast<size_t>(bytes), cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync (download)");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

}  // namespace servesim::cuda
