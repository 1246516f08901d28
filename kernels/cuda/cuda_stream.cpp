#include "kernels/cuda/cuda_stream.h"

#include "kernels/cuda/cuda_check.h"

namespace servesim::cuda {

CudaStream::CudaStream() {
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}

CudaStream::~CudaStream() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

}  // namespace servesim::cuda
