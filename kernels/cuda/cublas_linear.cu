#include <cuda_bf16.h>

#include <algorithm>

#include "kernels/cuda/cublas_linear.h"
#include "kernels/cuda/cuda_check.h"

namespace servesim::cuda {
namespace {

__global__ void add_bias_kernel(float* y, const float* bias, int64_t total, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    y[i] += bias[i % n];
  }
}

}  // namespace

CublasLinear::CublasLinear(Stream stream) : stream_(stream) {
  cublasHandle_t handle = nullptr;
  check_cublas(cublasCreate(&handle), "cublasCreate");
  handle_ = handle;
  check_cublas(cublasSetStream(handle_, stream_), "cublasSetStream");
}

CublasLinear::~CublasLinear() {
  if (handle_ != nullptr) cublasDestroy(handle_);
}

void CublasLinear::gemm(const Bf16* x, const Bf16* w, void* y, bool y_is_fp32, int64_t m, int64_t n,
                        int64_t k, float beta) {
  if (m == 0 || n == 0) return;
  const float alpha = 1.0f;
  // Row-major y (m, n) is column-major y^T (n, m) = W (n, k) * x^T (k, m): W row-major (n, k) is
  // column-major (k, n) with leading dimension k, hence the transpose; x row-major (m, k) is
  // column-major (k, m), used as is.
  check_cublas(
      cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                   static_cast<int>(k), &alpha, w, CUDA_R_16BF, static_cast<int>(k), x, CUDA_R_16BF,
                   static_cast<int>(k), &beta, y, y_is_fp32 ? CUDA_R_32F : CUDA_R_16BF,
                   static_cast<int>(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      "cublasGemmEx");
}

void CublasLinear::forward(const Bf16* x, const Bf16* w, const float* bias, float* y, int64_t m,
                           int64_t n, int64_t k, bool accumulate) {
  gemm(x, w, y, true, m, n, k, accumulate ? 1.0f : 0.0f);
  if (bias != nullptr) add_bias(y, bias, m, n, stream_);
}

void CublasLinear::forward(const Bf16* x, const Bf16* w, Bf16* y, int64_t m, int64_t n, int64_t k) {
  gemm(x, w, y, false, m, n, k, 0.0f);
}

void add_bias(float* y, const float* bias, int64_t rows, int64_t n, Stream stream) {
  const int64_t total = rows * n;
  if (total == 0) return;
  constexpr int kThreads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((total + kThreads - 1) / kThreads, 65535));
  add_bias_kernel<<<blocks, kThreads, 0, stream>>>(y, bias, total, n);
  check_launch("add_bias_kernel");
}

}  // namespace servesim::cuda
