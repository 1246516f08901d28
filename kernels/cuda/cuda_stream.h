// CudaStream: a non-blocking CUDA stream on the current device, destroyed with the object. The
// engine's runner enqueues every copy and kernel of a step on one stream and waits once per
// step, when it reads the logits back.
//
// Ownership: owns the stream (move-only by deletion of copies). Thread-safety: as the CUDA
// runtime's streams.
#pragma once

#include "kernels/cuda/cuda_types.h"

namespace servesim::cuda {

class CudaStream {
 public:
  // Throws CudaError when no device is usable.
  CudaStream();
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  Stream get() const { return stream_; }

 private:
  Stream stream_ = nullptr;
};

}  // namespace servesim::cuda
