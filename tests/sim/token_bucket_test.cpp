// TokenBucket conformance: starting full, no interval of length T passes more than
// capacity + rate × T credits, and a steady stream below the rate always passes.
#include "sim/service/token_bucket.h"

#include <gtest/gtest.h>

#include <vector>

#include "sim/core/rng.h"

namespace servesim {
namespace {

TEST(TokenBucket, BurstThenRate) {
  TokenBucket b(10.0, 5.0);
  int passed = 0;
  for (int i = 0; i < 20; ++i) passed += b.try_take(0.0, 1.0);
  EXPECT_EQ(passed, 5);  // the burst
  EXPECT_FALSE(b.try_take(0.05, 1.0));
  EXPECT_TRUE(b.try_take(0.1, 1.0));       // one credit refilled after 100 ms at 10/s
  EXPECT_NEAR(b.level(10.0), 5.0, 1e-12);  // never above capacity
}

TEST(TokenBucket, NoIntervalPassesMoreThanCapacityPlusRateTimesLength) {
  const double rate = 20, capacity = 8;
  TokenBucket b(rate, capacity);
  Rng rng(5);
  std::vector<double> passed;
  double t = 0;
  for (int i = 0; i < 20'000; ++i) {
    t += rng.exponential(60.0);  // offered at 3× the rate
    if (b.try_take(t, 1.0)) passed.push_back(t);
  }
  // Every window [passed[i], passed[j]] holds j − i + 1 passes.
  for (size_t i = 0; i < passed.size(); i += 97) {
    for (size_t j = i; j < passed.size() && j < i + 400; ++j) {
      EXPECT_LE(static_cast<double>(j - i + 1), capacity + rate * (passed[j] - passed[i]) + 1e-9);
    }
  }
  // Long-run throughput is the rate.
  EXPECT_NEAR(static_cast<double>(passed.size()) / t, rate, 0.02 * rate);
}

TEST(TokenBucket, TokensPerMinuteChargeTheRequestsSize) {
  TokenBucket b(1000.0 / 60.0, 1000.0);  // 1,000 tokens per minute
  EXPECT_TRUE(b.try_take(0, 600));
  EXPECT_FALSE(b.try_take(0, 600));   // nothing is taken on refusal...
  EXPECT_TRUE(b.try_take(0, 400));    // ...so the rest still passes
  EXPECT_FALSE(b.try_take(30, 600));  // 500 refilled in 30 s
  EXPECT_TRUE(b.try_take(36, 600));
}

}  // namespace
}  // namespace servesim
