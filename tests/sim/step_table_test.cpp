// The per-step table of a stepped run as simulate and loadtest print it: one row per step,
// a note for each step too short for a stable percentile, and the knee line.
#include "sim/metrics/step_table.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace servesim {
namespace {

MetricsSummary step(uint64_t samples, double ttft_p99_s) {
  MetricsSummary s;
  s.requests = samples;
  s.request_throughput = 2.5;
  s.error_rate = 0.0;
  for (LatencyStats* l : {&s.ttft, &s.tpot, &s.e2e}) {
    l->count = samples;
    l->p50_s = 0.010;
    l->p95_s = 0.020;
    l->p99_s = 0.030;
  }
  s.ttft.p99_s = ttft_p99_s;
  return s;
}

// What `print` wrote to a FILE*.
template <typename Print>
std::string printed(Print print) {
  std::FILE* f = std::tmpfile();
  print(f);
  std::rewind(f);
  std::string text;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, f)) text.append(buf, n);
  std::fclose(f);
  return text;
}

TEST(StepTable, OneRowPerStepWithItsClientsCountsAndPercentiles) {
  const std::string text = printed([](std::FILE* f) {
    print_step_table(f, {step(400, 0.030), step(500, 0.812)}, {{1, 4}, 60, 10});
  });
  EXPECT_NE(text.find("2 steps of 60 s, the first 10 s of each left out (warm-up)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("TTFT p50"), std::string::npos) << text;
  EXPECT_NE(text.find("     1       1      400     2.50      10.0      20.0      30.0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("     2       4      500     2.50      10.0      20.0     812.0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("0.00%"), std::string::npos) << text;
  EXPECT_EQ(text.find("note:"), std::string::npos) << text;
}

TEST(StepTable, AShortStepGetsANoteNamingTheRule) {
  const std::string text = printed([](std::FILE* f) {
    print_step_table(f, {step(50, 0.03), step(1000, 0.03)}, {{1, 2}, 5, 0});
  });
  EXPECT_NE(text.find("note: step 1 (1 clients) has 50 latency samples, too few for a stable p95 "
                      "and p99 (p95 needs 72, p99 368); hold the step longer"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("note: step 2"), std::string::npos) << text;
}

TEST(StepTable, AStepWithoutRequestsPrintsDashes) {
  const std::string text = printed([](std::FILE* f) {
    print_step_table(f, {MetricsSummary{}}, {{8}, 5, 0});
  });
  EXPECT_NE(text.find("     1       8        0        -         -"), std::string::npos) << text;
  EXPECT_EQ(text.find("note:"), std::string::npos) << text;
}

TEST(StepTable, KneeLineNamesTheStepAndItsReason) {
  EXPECT_EQ(printed([](std::FILE* f) {
              print_knee(f, Knee{1, "TTFT p99 812.0 ms > SLO 500.0 ms"}, {1, 4});
            }),
            "  knee: step 2 (4 clients): TTFT p99 812.0 ms > SLO 500.0 ms\n");
  EXPECT_NE(printed([](std::FILE* f) {
              print_knee(f, Knee{}, {1, 4});
            }).find("knee: none"),
            std::string::npos);
}

}  // namespace
}  // namespace servesim
