// Station against queueing theory: an M/M/c station's mean wait matches Erlang C, a
// bounded queue refuses exactly when full, and the statistics integrate over time.
#include "sim/service/station.h"

#include <gtest/gtest.h>

#include <cmath>
#include <queue>

#include "sim/core/rng.h"

namespace servesim {
namespace {

// Erlang C: the probability an arrival waits at an M/M/c station with offered load a = λ/μ.
double erlang_c(int c, double a) {
  double term = 1;  // a^k / k!
  double sum = 0;
  for (int k = 0; k < c; ++k) {
    sum += term;
    term *= a / (k + 1);
  }
  const double top = term * c / (c - a);  // a^c / c! × c / (c − a)
  return top / (sum + top);
}

// Poisson arrivals at rate lambda, exponential service at rate mu per worker; returns the
// station's statistics after `jobs` arrivals and the mean wait measured per job.
StationStats run_mmc(int c, double lambda, double mu, int jobs, uint64_t seed) {
  Station station("mmc", c, 0);
  Rng rng(seed);
  std::priority_queue<double, std::vector<double>, std::greater<>> completions;
  double t = 0;
  for (int i = 0; i < jobs; ++i) {
    t += rng.exponential(lambda);
    while (!completions.empty() && completions.top() <= t) {
      const double done = completions.top();
      completions.pop();
      if (const auto next = station.finish(done)) completions.push(done + next->service_s);
    }
    const StationJob job{static_cast<uint64_t>(i), rng.exponential(mu), t};
    if (station.arrive(job, t) == Station::Arrival::kStarted) completions.push(t + job.service_s);
  }
  while (!completions.empty()) {
    const double done = completions.top();
    completions.pop();
    if (const auto next = station.finish(done)) completions.push(done + next->service_s);
    t = done;
  }
  return station.stats(t);
}

TEST(Station, MeanWaitMatchesErlangC) {
  struct Case {
    int c;
    double lambda, mu;
  };
  for (const Case k : {Case{1, 0.7, 1.0}, Case{2, 1.6, 1.0}, Case{4, 3.0, 1.0}}) {
    SCOPED_TRACE(k.c);
    const StationStats s = run_mmc(k.c, k.lambda, k.mu, 200'000, 11);
    const double a = k.lambda / k.mu;
    const double wq = erlang_c(k.c, a) / (k.c * k.mu - k.lambda);
    EXPECT_NEAR(s.mean_wait_s, wq, 0.05 * wq);
    EXPECT_NEAR(s.utilisation, a / k.c, 0.02);
    EXPECT_NEAR(s.mean_service_s, 1 / k.mu, 0.01);
    // Little's law for the queue: mean jobs waiting = λ × mean wait.
    EXPECT_NEAR(s.mean_queue, k.lambda * s.mean_wait_s, 0.05 * k.lambda * wq);
    EXPECT_EQ(s.jobs, 200'000u);
  }
}

TEST(Station, BoundedQueueRefusesWhenFullButNotOwedWork) {
  Station s("gateway", 1, 2);
  EXPECT_EQ(s.arrive({1, 1.0, 0}, 0), Station::Arrival::kStarted);
  EXPECT_EQ(s.arrive({2, 1.0, 0}, 0), Station::Arrival::kQueued);
  EXPECT_EQ(s.arrive({3, 1.0, 0}, 0), Station::Arrival::kQueued);
  EXPECT_EQ(s.arrive({4, 1.0, 0}, 0), Station::Arrival::kRejected);
  EXPECT_EQ(s.arrive({5, 1.0, 0}, 0, /*droppable=*/false), Station::Arrival::kQueued);
  const auto next = s.finish(1.0);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->id, 2u);
  EXPECT_EQ(s.stats(1.0).rejected, 1u);
  EXPECT_EQ(s.stats(1.0).max_queue, 3u);
  EXPECT_EQ(s.stats(1.0).utilisation, 1.0);
}

TEST(Station, FinishWithoutAJobIsAProgrammingError) {
  Station s("x", 1, 0);
  EXPECT_THROW(s.finish(0), std::logic_error);
  EXPECT_THROW(Station("x", 0, 0), std::invalid_argument);
}

}  // namespace
}  // namespace servesim
