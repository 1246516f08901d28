#include "kernels/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace servesim {
namespace {

TEST(SamplingRng, IsDeterministicAndUniform) {
  SamplingRng a(7), b(7), c(8);
  EXPECT_EQ(a.next(), b.next());
  EXPECT_NE(a.next(), c.next());
  SamplingRng r(1);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const float u = r.uniform();
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    sum += u;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.01);
}

TEST(Sampler, GreedyTakesTheLowestArgmax) {
  Sampler s(SamplingParams{});
  const std::vector<float> logits = {0.1f, 3.0f, -1.0f, 3.0f};
  EXPECT_EQ(s.sample(logits), 1);
}

TEST(Sampler, TemperatureFollowsTheSoftmax) {
  const std::vector<float> logits = {0.0f, std::log(2.0f), std::log(7.0f)};  // p = 0.1, 0.2, 0.7
  Sampler s(SamplingParams{1.0f, 1.0f, 42});
  std::vector<int> counts(3);
  const int n = 20000;
  for (int i = 0; i < n; ++i) counts[size_t(s.sample(logits))]++;
  EXPECT_NEAR(counts[0] / double(n), 0.1, 0.015);
  EXPECT_NEAR(counts[1] / double(n), 0.2, 0.015);
  EXPECT_NEAR(counts[2] / double(n), 0.7, 0.015);
}

TEST(Sampler, TopPKeepsOnlyTheNucleus) {
  const std::vector<float> logits = {0.0f, std::log(2.0f), std::log(7.0f)};
  Sampler s(SamplingParams{1.0f, 0.85f, 3});  // 0.7 + 0.2 reach 0.85: token 0 is cut
  std::vector<int> counts(3);
  for (int i = 0; i < 9000; ++i) counts[size_t(s.sample(logits))]++;
  EXPECT_EQ(counts[0], 0);
  EXPECT_NEAR(counts[2] / 9000.0, 0.7 / 0.9, 0.02);
  Sampler tiny(SamplingParams{1.0f, 0.01f, 3});
  for (int i = 0; i < 100; ++i) EXPECT_EQ(tiny.sample(logits), 2);
}

TEST(Sampler, SameSeedSameTokens) {
  std::vector<float> logits(50);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(float(i));
  Sampler a(SamplingParams{0.8f, 0.9f, 5}), b(SamplingParams{0.8f, 0.9f, 5});
  for (int i = 0; i < 200; ++i) EXPECT_EQ(a.sample(logits), b.sample(logits));
}

TEST(Sampler, RejectsBadParameters) {
  EXPECT_THROW(Sampler(SamplingParams{-1.0f, 1.0f, 0}), std::invalid_argument);
  EXPECT_THROW(Sampler(SamplingParams{1.0f, 0.0f, 0}), std::invalid_argument);
  EXPECT_THROW(Sampler(SamplingParams{1.0f, 1.5f, 0}), std::invalid_argument);
}

}  // namespace
}  // namespace servesim
