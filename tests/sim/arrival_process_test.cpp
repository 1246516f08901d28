#include "sim/workload/arrival_process.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "models/config_error.h"

namespace servesim {
namespace {

struct GapStats {
  double mean;
  double cv;
};

GapStats gap_stats(ArrivalProcess p, int n, uint64_t seed) {
  Rng rng(seed);
  double last = 0.0;
  double sum = 0.0;
  double sum2 = 0.0;
  for (int i = 0; i < n; ++i) {
    const double t = p.next_arrival_s(rng);
    EXPECT_GE(t, last);
    const double gap = t - last;
    last = t;
    sum += gap;
    sum2 += gap * gap;
  }
  const double mean = sum / n;
  return {mean, std::sqrt(sum2 / n - mean * mean) / mean};
}

TEST(ArrivalProcessTest, PoissonHasMeanGapOneOverRateAndCvOne) {
  const GapStats s = gap_stats(ArrivalProcess::poisson(2.0), 200000, 1);
  EXPECT_NEAR(s.mean, 0.5, 0.005);
  EXPECT_NEAR(s.cv, 1.0, 0.015);
}

TEST(ArrivalProcessTest, GammaHitsRequestedRateAndCv) {
  for (double cv : {0.5, 1.0, 2.0, 4.0}) {
    const GapStats s = gap_stats(ArrivalProcess::gamma(10.0, cv), 400000, 2);
    EXPECT_NEAR(s.mean, 0.1, 0.1 * 0.02) << "cv " << cv;
    EXPECT_NEAR(s.cv, cv, cv * 0.04) << "cv " << cv;
  }
}

TEST(ArrivalProcessTest, ConstantStartsAtZeroWithExactGaps) {
  ArrivalProcess p = ArrivalProcess::constant(4.0);
  Rng rng(0);
  EXPECT_DOUBLE_EQ(p.next_arrival_s(rng), 0.0);
  EXPECT_DOUBLE_EQ(p.next_arrival_s(rng), 0.25);
  EXPECT_DOUBLE_EQ(p.next_arrival_s(rng), 0.5);
}

TEST(ArrivalProcessTest, OnOffArrivesOnlyDuringOnPeriodsAtTheOnRate) {
  ArrivalProcess p = ArrivalProcess::on_off(20.0, 2.0, 8.0);
  EXPECT_DOUBLE_EQ(p.mean_rate_qps(), 4.0);
  Rng rng(3);
  int n = 0;
  double t = 0.0;
  while ((t = p.next_arrival_s(rng)) < 10000.0) {
    ASSERT_LT(std::fmod(t, 10.0), 2.0) << t;
    ++n;
  }
  EXPECT_NEAR(n / 10000.0, 4.0, 0.1);
}

TEST(ArrivalProcessTest, FromJsonReadsEachKind) {
  EXPECT_EQ(ArrivalProcess::from_json({{"type", "poisson"}, {"rate_qps", 2}}, "a").kind(),
            ArrivalProcess::Kind::kPoisson);
  EXPECT_EQ(ArrivalProcess::from_json({{"type", "gamma"}, {"rate_qps", 2}, {"cv", 3}}, "a").kind(),
            ArrivalProcess::Kind::kGamma);
  EXPECT_EQ(ArrivalProcess::from_json({{"type", "constant"}, {"rate_qps", 2}}, "a").kind(),
            ArrivalProcess::Kind::kConstant);
  const ArrivalProcess onoff = ArrivalProcess::from_json(
      {{"type", "onoff"}, {"rate_qps", 10}, {"on_s", 1}, {"off_s", 3}}, "a");
  EXPECT_DOUBLE_EQ(onoff.mean_rate_qps(), 2.5);
}

std::string error_of(const nlohmann::json& j) {
  try {
    ArrivalProcess::from_json(j, "w: arrival");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ArrivalProcessTest, BadJsonNamesTheFieldAndTheFix) {
  EXPECT_EQ(error_of({{"type", "poisson"}, {"rate_qps", -1}}),
            "w: arrival.rate_qps: must be a positive number, got -1");
  EXPECT_EQ(error_of({{"type", "poisson"}}), "w: arrival: rate_qps is required");
  EXPECT_EQ(error_of({{"type", "poisson"}, {"rate_qsp", 2}}), "w: arrival: rate_qps is required");
  EXPECT_EQ(error_of({{"type", "poisson"}, {"rate_qps", 2}, {"rate_qsp", 2}}),
            "w: arrival: unknown key 'rate_qsp' (did you mean 'rate_qps'?)");
  EXPECT_EQ(error_of({{"type", "poison"}, {"rate_qps", 2}}),
            "w: arrival.type: unknown arrival process 'poison' (did you mean 'poisson'?)");
  EXPECT_EQ(error_of({{"type", "gamma"}, {"rate_qps", 2}}), "w: arrival: cv is required");
}

}  // namespace
}  // namespace servesim
