// CublasLinear: y = x W^T (+ b) on the GPU with bf16 operands and fp32 accumulation
// (cublasGemmEx, CUBLAS_COMPUTE_32F), the CUDA counterpart of kernels/linear.h. W is stored as
// PyTorch's nn.Linear stores it, (out_features, in_features) row-major, so the call maps to a
// column-major GEMM with W transposed; decode (m = 1) becomes cuBLAS's GEMV path.
//
// Ownership: owns a cuBLAS handle bound to one stream. Thread-safety: none (one handle per
// runner). Invariants: every call runs on stream().
#pragma once

#include <cstdint>

#include "kernels/cuda/cuda_types.h"

struct cublasContext;

namespace servesim::cuda {

class CublasLinear {
 public:
  // Throws CudaError when cuBLAS cannot be initialised (no device).
  explicit CublasLinear(Stream stream);
  ~CublasLinear();
  CublasLinear(const CublasLinear&) = delete;
  CublasLinear& operator=(const CublasLinear&) = delete;

  Stream stream() const { return stream_; }

  // x: (m, k) bf16; w: (n, k) bf16; y: (m, n) fp32. accumulate: y += x W^T (the residual
  // stream), else y = x W^T. bias: (n) fp32 added to every row, or nullptr.
  // REQUIRES: y does not alias x or w.
  void forward(const Bf16* x, const Bf16* w, const float* bias, float* y, int64_t m, int64_t n,
               int64_t k, bool accumulate);
  // As above with a bf16 output (rounded once from the fp32 accumulator), no bias.
  void forward(const Bf16* x, const Bf16* w, Bf16* y, int64_t m, int64_t n, int64_t k);

 private:
  void gemm(const Bf16* x, const Bf16* w, void* y, bool y_is_fp32, int64_t m, int64_t n, int64_t k,
            float beta);

  Stream stream_;
  cublasContext* handle_ = nullptr;  // a cublasHandle_t
};

// y[r, :] += bias for r < rows. y: (rows, n) fp32; bias: (n) fp32.
void add_bias(float* y, const float* bias, int64_t rows, int64_t n, Stream stream);

}  // namespace servesim::cuda
