// Error checks for CUDA runtime and cuBLAS calls inside the CUDA kernels library (internal:
// includes CUDA headers, so only .cu files and sources of servesim_kernels_cuda include it).
// A failing call throws CudaError naming the call and the runtime's reason; the engine reports
// it as a one-line error rather than crashing.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "kernels/cuda/cuda_error.h"

namespace servesim::cuda {

inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw CudaError(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(status));
  }
}

inline void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw CudaError(std::string("cuBLAS error in ") + what + ": " + cublasGetStatusString(status));
  }
}

// After a kernel launch: reports a bad launch configuration at once (execution errors surface
// at the next synchronising call).
inline void check_launch(const char* kernel) {
  check_cuda(cudaGetLastError(), kernel);
}

}  // namespace servesim::cuda
