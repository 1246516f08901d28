// CudaError: what the CUDA kernels library throws when a CUDA runtime or cuBLAS call fails
// (out of device memory, a kernel fault, no usable device). Declared apart from cuda_check.h
// so that host-compiled callers can catch it without CUDA headers.
#pragma once

#include <stdexcept>

namespace servesim::cuda {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace servesim::cuda
