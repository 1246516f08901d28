#include "kernels/cuda/cuda_device.h"

#include "kernels/cuda/cuda_check.h"

namespace servesim::cuda {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error so later calls start clean
    return 0;
  }
  return n;
}

DeviceInfo current_device_info() {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  return DeviceInfo{prop.name, prop.multiProcessorCount, static_cast<int64_t>(prop.totalGlobalMem),
                    prop.major * 10 + prop.minor};
}

void synchronize(Stream stream) {
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

}  // namespace servesim::cuda
