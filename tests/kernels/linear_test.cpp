#include "kernels/linear.h"

#include <gtest/gtest.h>

#include <atomic>

#include "kernels/isa_kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace servesim {
namespace {

using testing::max_relative_error;
using testing::random_vector;

TEST(ThreadPool, CoversTheRangeOnceInGrainAlignedPieces) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int64_t n : {1, 5, 16, 17, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      pool.parallel_for(
          n,
          [&](int64_t b, int64_t e) {
            EXPECT_EQ(b % 16, 0);
            for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
          },
          16);
      for (auto& h : hits) EXPECT_EQ(h.load(), 1);
    }
  }
}

void check_linear(int64_t m, int64_t n, int64_t k, bool with_bias, int threads,
                  LinearKernel* kernel = &linear) {
  const std::vector<float> x = random_vector(size_t(m * k), 11);
  const std::vector<float> w = random_vector(size_t(n * k), 12);
  const std::vector<float> b = random_vector(size_t(n), 13);
  std::vector<float> y(size_t(m * n), -1.0f);
  ThreadPool pool(threads);
  kernel(x.data(), w.data(), with_bias ? b.data() : nullptr, y.data(), m, n, k, pool);
  std::vector<double> ref(y.size());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = with_bias ? b[j] : 0.0;
      for (int64_t l = 0; l < k; ++l) s += double(x[i * k + l]) * w[j * k + l];
      ref[i * n + j] = s;
    }
  }
  EXPECT_LT(max_relative_error(y, ref), 1e-5) << m << "x" << n << "x" << k;
}

TEST(Linear, GemvMatchesDoubleReference) {
  for (int threads : {1, 2, 3}) check_linear(1, 77, 64, false, threads);
}

TEST(Linear, GemmWithBiasMatchesDoubleReference) {
  for (int threads : {1, 2}) {
    check_linear(37, 50, 96, true, threads);
    check_linear(3, 16, 8, true, threads);
    check_linear(16, 70, 40, true, threads);  // the widest decode batch of dot products
    check_linear(17, 70, 40, false, threads);
  }
}

// Every instruction-set copy this CPU can run, not only the one dispatch picks here: the
// copies other CPUs pick must compute the same products.
TEST(Linear, EveryIsaCopyThisCpuRunsMatchesDoubleReference) {
  int ran = 0;
  for (const IsaKernels& copy : built_isa_kernels()) {
    if (!cpu_supports(copy.isa)) continue;
    SCOPED_TRACE(cpu_isa_name(copy.isa));
    ++ran;
    check_linear(1, 77, 64, false, 2, copy.linear);
    check_linear(16, 70, 40, true, 2, copy.linear);
    check_linear(37, 50, 96, true, 2, copy.linear);
  }
  EXPECT_GE(ran, 1);  // the lowest level runs everywhere
}

}  // namespace
}  // namespace servesim
