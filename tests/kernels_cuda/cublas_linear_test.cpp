// CublasLinear against the CPU linear() on bf16-rounded operands: both accumulate in fp32, so
// the fp32 output differs only by summation order (bound 1e-4 of the largest output, for
// k = 1536); the bf16 output adds one rounding (bound 1e-2).
#include "kernels/cuda/cublas_linear.h"

#include <gtest/gtest.h>

#include "kernels/linear.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels_cuda/cuda_test_util.h"

namespace servesim {
namespace {

using testing::from_device;
using testing::from_device_bf16;
using testing::random_vector;
using testing::relative_error;
using testing::to_device;
using testing::to_device_bf16;

TEST(CublasLinear, MatchesCpuLinearForGemvAndGemm) {
  SERVESIM_REQUIRE_CUDA_DEVICE();
  const int n = 384, k = 1536;
  const std::vector<float> w = cuda::round_to_bf16(random_vector(size_t(n) * k, 1, 0.05f));
  const std::vector<float> bias = random_vector(n, 2);
  cuda::CublasLinear gemm(nullptr);
  ThreadPool pool(1);
  for (int m : {1, 5, 300}) {
    SCOPED_TRACE(m);
    const std::vector<float> x = cuda::round_to_bf16(random_vector(size_t(m) * k, 3 + m));
    std::vector<float> ref(size_t(m) * n);
    linear(x.data(), w.data(), bias.data(), ref.data(), m, n, k, pool);
    cuda::DeviceBuffer dx = to_device_bf16(x), dw = to_device_bf16(w), db = to_device(bias),
                       dy(int64_t(ref.size()) * 4), dy16(int64_t(ref.size()) * 2);
    gemm.forward(dx.data<cuda::Bf16>(), dw.data<cuda::Bf16>(), db.data<float>(), dy.data<float>(),
                 m, n, k, false);
    EXPECT_LT(relative_error(from_device(dy, ref.size()), ref), 1e-4);

    // Accumulating adds the product (with its bias) to what y holds.
    gemm.forward(dx.data<cuda::Bf16>(), dw.data<cuda::Bf16>(), db.data<float>(), dy.data<float>(),
                 m, n, k, true);
    std::vector<float> twice = ref;
    for (float& v : twice) v *= 2.0f;
    EXPECT_LT(relative_error(from_device(dy, ref.size()), twice), 1e-4);

    gemm.forward(dx.data<cuda::Bf16>(), dw.data<cuda::Bf16>(), dy16.data<cuda::Bf16>(), m, n, k);
    std::vector<float> no_bias(size_t(m) * n);
    linear(x.data(), w.data(), nullptr, no_bias.data(), m, n, k, pool);
    EXPECT_LT(relative_error(from_device_bf16(dy16, ref.size()), no_bias), 1e-2);
  }
}

}  // namespace
}  // namespace servesim
