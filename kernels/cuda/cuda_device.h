// The CUDA device the engine runs on: whether there is one, what it is, and waiting for its
// work. Free functions over the runtime's current device; thread-safe as the runtime is.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/cuda/cuda_types.h"

namespace servesim::cuda {

// Devices the runtime sees; 0 when there is none or no driver (never throws).
int device_count();

// The properties of the current device the engine and its roofline report.
struct DeviceInfo {
  std::string name;
  int num_sms = 0;             // streaming multiprocessors
  int64_t memory_bytes = 0;    // global memory
  int compute_capability = 0;  // e.g. 90 for sm_90
};
// Throws CudaError when no device is usable.
DeviceInfo current_device_info();

// Waits for everything enqueued on `stream`; throws CudaError for a failed kernel.
void synchronize(Stream stream);

}  // namespace servesim::cuda
