// Each pointwise CUDA kernel against its fp32 CPU reference on random inputs. Inputs the GPU
// stores as bf16 are rounded to bf16 before the CPU sees them, so the comparison measures the
// kernel, not the storage format. Bounds, relative to the reference's largest magnitude:
// fp32 outputs 1e-5 (fp32 arithmetic in a different order, fast exp); bf16 outputs 1e-2
// (one rounding to 8 significant bits is at most 2^-8 = 3.9e-3 of a value).
#include <gtest/gtest.h>

#include "kernels/cuda/embedding.h"
#include "kernels/cuda/rms_norm.h"
#include "kernels/cuda/rope.h"
#include "kernels/cuda/silu_mul.h"
#include "kernels/embedding.h"
#include "kernels/rms_norm.h"
#include "kernels/rope.h"
#include "kernels/silu_mul.h"
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
using testing::to_device_raw;

constexpr double kFp32Bound = 1e-5;
constexpr double kBf16Bound = 1e-2;

TEST(CudaRmsNorm, MatchesCpuWithAndWithoutGather) {
  SERVESIM_REQUIRE_CUDA_DEVICE();
  const int rows = 7, dim = 4096 + 24;  // more than one pass of the block over a row
  const std::vector<float> x = random_vector(size_t(rows) * dim, 1, 3.0f);
  const std::vector<float> w = random_vector(dim, 2);
  std::vector<float> ref(x.size());
  rms_norm(x.data(), w.data(), ref.data(), rows, dim, 1e-5f);

  cuda::DeviceBuffer dx = to_device(x), dw = to_device(w), dy(int64_t(x.size()) * 2);
  cuda::rms_norm(dx.data<float>(), dw.data<float>(), dy.data<cuda::Bf16>(), rows, dim, 1e-5f,
                 nullptr, nullptr);
  EXPECT_LT(relative_error(from_device_bf16(dy, x.size()), ref), kBf16Bound);

  // Gathering rows 5 and 2 normalises those rows, in that order.
  const std::vector<int64_t> gather = {5, 2};
  cuda::DeviceBuffer dg = to_device_raw(gather);
  cuda::rms_norm(dx.data<float>(), dw.data<float>(), dy.data<cuda::Bf16>(), 2, dim, 1e-5f,
                 dg.data<int64_t>(), nullptr);
  const std::vector<float> got = from_device_bf16(dy, size_t(2) * dim);
  const std::vector<float> ref5(ref.begin() + 5 * dim, ref.begin() + 6 * dim);
  const std::vector<float> ref2(ref.begin() + 2 * dim, ref.begin() + 3 * dim);
  EXPECT_LT(relative_error(std::vector<float>(got.begin(), got.begin() + dim), ref5), kBf16Bound);
  EXPECT_LT(relative_error(std::vector<float>(got.begin() + dim, got.end()), ref2), kBf16Bound);
}

TEST(CudaRope, MatchesCpuOnQueryAndKeyHeadsOfAFusedRow) {
  SERVESIM_REQUIRE_CUDA_DEVICE();
  const int head_dim = 128, q_heads = 4, kv_heads = 2, tokens = 5;
  const int stride = (q_heads + 2 * kv_heads) * head_dim;  // fused q | k | v row
  servesim::RopeTable host(head_dim, 4096, 500000.0);
  cuda::RopeTable device(host);
  std::vector<float> x = random_vector(size_t(tokens) * stride, 3);
  const std::vector<int32_t> positions = {0, 1, 17, 999, 4095};
  cuda::DeviceBuffer dx = to_device(x), dp = to_device_raw(positions);
  device.apply(dx.data<float>(), tokens, stride, q_heads, dp.data<int32_t>(), nullptr);
  device.apply(dx.data<float>() + q_heads * head_dim, tokens, stride, kv_heads, dp.data<int32_t>(),
               nullptr);
  host.apply(x.data(), tokens, stride, q_heads, positions.data());
  host.apply(x.data() + q_heads * head_dim, tokens, stride, kv_heads, positions.data());
  EXPECT_LT(relative_error(from_device(dx, x.size()), x), kFp32Bound);
}

TEST(CudaSiluMul, MatchesCpuOnTheFusedGateUpLayout) {
  SERVESIM_REQUIRE_CUDA_DEVICE();
  const int rows = 3, ffn = 1000;
  const std::vector<float> gate_up =
      cuda::round_to_bf16(random_vector(size_t(rows) * 2 * ffn, 4, 4.0f));
  std::vector<float> ref(size_t(rows) * ffn);
  for (int r = 0; r < rows; ++r) {
    silu_mul(gate_up.data() + size_t(r) * 2 * ffn, gate_up.data() + size_t(r) * 2 * ffn + ffn,
             ref.data() + size_t(r) * ffn, ffn);
  }
  cuda::DeviceBuffer din = to_device_bf16(gate_up), dout(int64_t(ref.size()) * 2);
  cuda::silu_mul(din.data<cuda::Bf16>(), dout.data<cuda::Bf16>(), rows, ffn, nullptr);
  EXPECT_LT(relative_error(from_device_bf16(dout, ref.size()), ref), kBf16Bound);
}

TEST(CudaEmbedding, CopiesTheRowsOfTheIds) {
  SERVESIM_REQUIRE_CUDA_DEVICE();
  const int vocab = 50, dim = 72;
  const std::vector<float> table = cuda::round_to_bf16(random_vector(size_t(vocab) * dim, 5));
  const std::vector<int32_t> ids = {3, 0, 49, 3};
  std::vector<float> ref(ids.size() * dim);
  embedding(table.data(), vocab, dim, ids.data(), int64_t(ids.size()), ref.data());
  cuda::DeviceBuffer dt = to_device_bf16(table), di = to_device_raw(ids),
                     dout(int64_t(ref.size()) * 4);
  cuda::embedding(dt.data<cuda::Bf16>(), dim, di.data<int32_t>(), int64_t(ids.size()),
                  dout.data<float>(), nullptr);
  EXPECT_EQ(from_device(dout, ref.size()), ref);  // bf16 -> fp32 is exact
}

}  // namespace
}  // namespace servesim
