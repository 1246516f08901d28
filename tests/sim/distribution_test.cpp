#include "sim/workload/distribution.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "models/config_error.h"
#include "sim/workload/length_distribution.h"

namespace servesim {
namespace {

using nlohmann::json;

struct Moments {
  double mean;
  double std;
  double min;
  double max;
};

Moments sample_moments(const LengthDistribution& d, int n) {
  Rng rng(11);
  double sum = 0.0, sum2 = 0.0, lo = 1e300, hi = -1e300;
  for (int i = 0; i < n; ++i) {
    const double x = d.sample(rng);
    sum += x;
    sum2 += x * x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  const double mean = sum / n;
  return {mean, std::sqrt(sum2 / n - mean * mean), lo, hi};
}

LengthDistribution length(const json& j) {
  return LengthDistribution::from_json(j, "len", "");
}

TEST(LengthDistributionTest, FixedFromNumberOrObject) {
  Rng rng(1);
  EXPECT_EQ(length(512).sample(rng), 512);
  EXPECT_EQ(length({{"type", "fixed"}, {"value", 128}}).sample(rng), 128);
}

TEST(LengthDistributionTest, UniformIsInclusiveIntegers) {
  const Moments m = sample_moments(length({{"type", "uniform"}, {"min", 10}, {"max", 20}}), 50000);
  EXPECT_EQ(m.min, 10);
  EXPECT_EQ(m.max, 20);
  EXPECT_NEAR(m.mean, 15.0, 0.1);
}

TEST(LengthDistributionTest, NormalIsClippedToItsBounds) {
  const Moments m = sample_moments(
      length({{"type", "normal"}, {"mean", 100}, {"std", 50}, {"min", 60}, {"max", 200}}), 50000);
  EXPECT_EQ(m.min, 60);
  EXPECT_EQ(m.max, 200);
  const Moments wide =
      sample_moments(length({{"type", "normal"}, {"mean", 1000}, {"std", 100}}), 50000);
  EXPECT_NEAR(wide.mean, 1000, 2);
  EXPECT_NEAR(wide.std, 100, 2);
}

TEST(LengthDistributionTest, LognormalMeanAndStdAreThoseOfTheLengths) {
  const LengthDistribution d = length({{"type", "lognormal"}, {"mean", 800}, {"std", 400}});
  EXPECT_NEAR(d.mean(), 800, 1e-9);
  const Moments m = sample_moments(d, 200000);
  EXPECT_NEAR(m.mean, 800, 8);
  EXPECT_NEAR(m.std, 400, 10);
  const LengthDistribution by_params =
      length({{"type", "lognormal"}, {"mu", 5.0}, {"sigma", 0.5}, {"max", 300}});
  EXPECT_LE(sample_moments(by_params, 10000).max, 300);
}

TEST(LengthDistributionTest, EmpiricalSamplesTheCsvColumn) {
  const std::string csv =
      std::string(SERVESIM_SOURCE_DIR) + "/configs/workloads/traces/splitwise_code.csv";
  const LengthDistribution d = LengthDistribution::from_json(
      {{"type", "empirical"}, {"csv", csv}, {"column", "num_decode_tokens"}}, "len", "");
  // Brute-force mean of the column.
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  double sum = 0.0;
  int n = 0;
  while (std::getline(in, line)) {
    sum += std::stod(line.substr(line.rfind(',') + 1));
    ++n;
  }
  EXPECT_NEAR(d.mean(), sum / n, 1e-6);
  EXPECT_NEAR(sample_moments(d, 100000).mean, sum / n, 0.03 * sum / n);
}

TEST(LengthDistributionTest, EmpiricalRelativePathResolvesAgainstBaseDir) {
  const std::string dir = std::string(SERVESIM_SOURCE_DIR) + "/configs/workloads/traces";
  const LengthDistribution d = LengthDistribution::from_json(
      {{"type", "empirical"}, {"csv", "splitwise_conv.csv"}, {"column", "num_prefill_tokens"}},
      "len", dir);
  EXPECT_GT(d.mean(), 1.0);
  Rng rng(0);
  EXPECT_EQ(length({{"type", "empirical"}, {"values", {7}}}).sample(rng), 7);
}

TEST(DistributionTest, ThinkTimesAreRealAndMayBeZero) {
  const Distribution d =
      Distribution::from_json({{"type", "exponential"}, {"mean", 2.5}}, "t", "", 0.0, false);
  Rng rng(4);
  double sum = 0.0;
  for (int i = 0; i < 100000; ++i) sum += d.sample(rng);
  EXPECT_NEAR(sum / 100000, 2.5, 0.04);
  EXPECT_EQ(Distribution::from_json(0.0, "t", "", 0.0, false).sample(rng), 0.0);
  EXPECT_DOUBLE_EQ(Distribution::from_json(1.5, "t", "", 0.0, false).sample(rng), 1.5);
}

std::string error_of(const json& j) {
  try {
    LengthDistribution::from_json(j, "w: prompt_tokens", SERVESIM_SOURCE_DIR "/configs/workloads");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(LengthDistributionTest, BadJsonNamesTheFieldAndTheFix) {
  EXPECT_EQ(error_of({{"type", "lognormel"}, {"mean", 3}, {"std", 1}}),
            "w: prompt_tokens.type: unknown distribution 'lognormel' (did you mean "
            "'lognormal', 'normal'?)");
  EXPECT_EQ(error_of({{"type", "normal"}, {"mean", 3}}), "w: prompt_tokens: std is required");
  EXPECT_EQ(error_of({{"type", "normal"}, {"mean", 3}, {"std", 1}, {"maximum", 9}}),
            "w: prompt_tokens: unknown key 'maximum' (did you mean 'max'?)");
  EXPECT_EQ(error_of({{"type", "uniform"}, {"min", 30}, {"max", 20}}),
            "w: prompt_tokens.max: must be >= min (30), got 20");
  EXPECT_EQ(error_of({{"type", "normal"}, {"mean", 30}, {"std", 1}, {"min", 0}}),
            "w: prompt_tokens.min: must be >= 1, got 0");
  EXPECT_EQ(error_of(0), "w: prompt_tokens: must be a whole number >= 1, got 0");
  EXPECT_EQ(error_of(2.5), "w: prompt_tokens: must be a whole number >= 1, got 2.5");
  EXPECT_EQ(error_of("512"),
            "w: prompt_tokens: expected a number or an object with \"type\", got \"512\"");
  EXPECT_EQ(error_of({{"type", "lognormal"}, {"mean", 3}, {"sigma", 1}}),
            "w: prompt_tokens: give either mean and std (of the lengths) or mu and sigma (of "
            "the underlying normal), not both");
  EXPECT_EQ(error_of({{"type", "empirical"},
                      {"csv", "traces/splitwise_code.csv"},
                      {"column", "num_decode_token"}}),
            "w: prompt_tokens.column: 'num_decode_token' is not a column of " +
                std::string(SERVESIM_SOURCE_DIR) +
                "/configs/workloads/traces/splitwise_code.csv (did you mean 'num_decode_tokens', "
                "'num_prefill_tokens'?)");
  EXPECT_EQ(error_of({{"type", "empirical"}, {"csv", "nope.csv"}, {"column", "x"}}),
            "w: prompt_tokens.csv: cannot open '" +
                std::string(SERVESIM_SOURCE_DIR "/configs/workloads") + "/nope.csv'");
}

// A fuzz finding (fuzz_workload's long run): a lognormal of mean 8e-318 and std 60 has an
// infinite sigma and a mu of -inf, so every draw was NaN (UBSan: -nan cast to int). Both forms
// of the parameters must leave them finite.
TEST(DistributionTest, ALognormalWhoseSigmaIsInfiniteIsRefused) {
  const auto error = [](const json& j) {
    try {
      Distribution::from_json(j, "d", "", 0.0, false);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error({{"type", "lognormal"}, {"mean", 801e-320}, {"std", 60}}),
            "d.std: 60 is too large for a mean of 8.01e-318 (the lognormal's sigma would be "
            "infinite); give a std at most 1e150 times the mean");
  EXPECT_EQ(error({{"type", "lognormal"}, {"mu", 1}, {"sigma", 1e308 * 10.0}}),
            "d.sigma: must be >= 0 and finite, got inf");
  const Distribution tiny = Distribution::from_json(
      {{"type", "lognormal"}, {"mean", 1e-300}, {"std", 1e-150}}, "d", "", 0.0, false);
  Rng rng(3);
  EXPECT_TRUE(std::isfinite(tiny.sample(rng)));
}

// A fuzz finding (CI, fuzz_workload): a length of 2147483000 after a 4000-token shared prefix
// overflowed the prompt's int. Lengths stop at kMaxLengthTokens, at parse time where a bound
// says so and in sampling where the tail is unbounded.
TEST(LengthDistributionTest, LengthsBeyondTheLongestAreRefusedAndTailsStopThere) {
  const std::string limit = std::to_string(kMaxLengthTokens);
  EXPECT_EQ(error_of(2147483000),
            "w: prompt_tokens: lengths must be at most " + limit +
                " tokens (beyond any model's context), got a bound of 2147483000");
  EXPECT_EQ(error_of({{"type", "uniform"}, {"min", 1}, {"max", 1e9}}),
            "w: prompt_tokens: lengths must be at most " + limit +
                " tokens (beyond any model's context), got a bound of 1e+09");
  EXPECT_EQ(error_of({{"type", "exponential"}, {"mean", 5e8}}),
            "w: prompt_tokens: lengths must be at most " + limit +
                " tokens (beyond any model's context), got a mean of 5e+08");
  EXPECT_EQ(error_of({{"type", "empirical"}, {"values", {10, 3e9}}}),
            "w: prompt_tokens: lengths must be at most " + limit +
                " tokens (beyond any model's context), got a bound of 3e+09");
  Rng rng(1);
  EXPECT_EQ(length(kMaxLengthTokens).sample(rng), kMaxLengthTokens);
  // Mean 2.7e7 tokens, but about 4% of the draws lie beyond 1e8.
  const LengthDistribution tail = length({{"type", "lognormal"}, {"mu", 14.0}, {"sigma", 2.5}});
  const Moments m = sample_moments(tail, 2000);
  EXPECT_EQ(m.max, kMaxLengthTokens);
  EXPECT_GE(m.min, 1);
}

TEST(LengthDistributionTest, EmpiricalCsvWithBadValueNamesTheLine) {
  const std::string path = ::testing::TempDir() + "/bad_lengths.csv";
  std::ofstream(path) << "n\n12\n13\nabc\n";
  EXPECT_THROW(
      {
        try {
          LengthDistribution::from_json({{"type", "empirical"}, {"csv", path}, {"column", "n"}},
                                        "len", "");
        } catch (const ConfigError& e) {
          EXPECT_EQ(std::string(e.what()), path + ":4: n: expected a number, got 'abc'");
          throw;
        }
      },
      ConfigError);
}

}  // namespace
}  // namespace servesim

namespace servesim {
namespace {

// Scaling a time by a factor scales every sample by it: the same draws, each times the factor.
TEST(DistributionTest, ScaledMultipliesEverySampleOfEveryKind) {
  const std::vector<nlohmann::json> forms = {
      0.25,
      {{"type", "uniform"}, {"min", 0.1}, {"max", 0.3}},
      {{"type", "normal"}, {"mean", 1.0}, {"std", 0.5}, {"min", 0.2}, {"max", 1.5}},
      {{"type", "lognormal"}, {"mean", 1.0}, {"std", 0.5}, {"max", 2.0}},
      {{"type", "exponential"}, {"mean", 0.5}, {"max", 3.0}},
      {{"type", "empirical"}, {"values", {0.1, 0.2, 0.7}}},
  };
  for (const nlohmann::json& form : forms) {
    const Distribution d = Distribution::from_json(form, "t", "", 0.0, false);
    const Distribution s = d.scaled(3.0);
    Rng a(5), b(5);
    for (int i = 0; i < 200; ++i) EXPECT_NEAR(s.sample(b), 3.0 * d.sample(a), 1e-9) << form;
    EXPECT_NEAR(s.mean(), 3.0 * d.mean(), 1e-9) << form;
    EXPECT_NEAR(s.max(), 3.0 * d.max(), 1e-9) << form;
  }
}

}  // namespace
}  // namespace servesim
