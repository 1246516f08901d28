// ClientMonitor: the load tester's verdict on itself. Late event-loop ticks make the client
// the bottleneck and say so in the report's line; timely ticks on an idle thread do not. (The
// CPU side is not forced here: a busy thread's share of the wall clock depends on what else
// the machine runs.)
#include "serve/loadtest/client_monitor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace servesim {
namespace {

using ::testing::HasSubstr;

TEST(ClientMonitor, LateTicksMakeTheLoadGeneratorTheBottleneck) {
  ClientMonitor monitor(1, 0.010);
  monitor.start();
  for (int i = 0; i < 200; ++i) monitor.on_tick(i < 190 ? 0.0005 : 0.050);  // 5% of ticks late
  const ClientHealth h = monitor.finish();
  EXPECT_EQ(h.lag_samples, 200u);
  EXPECT_GT(h.lag_p99_s, 0.010);
  EXPECT_NEAR(h.lag_max_s, 0.050, 0.005);
  EXPECT_TRUE(h.bottleneck);
  EXPECT_THAT(h.verdict, HasSubstr("the load generator was the bottleneck"));
  EXPECT_THAT(h.verdict, HasSubstr("latencies include the client's own delay"));
}

TEST(ClientMonitor, TimelyTicksOnAnIdleThreadKeepUp) {
  ClientMonitor monitor(1, 0.010);
  monitor.start();
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    monitor.on_tick(0.0002);
  }
  monitor.on_window();
  const ClientHealth h = monitor.finish();
  EXPECT_FALSE(h.bottleneck) << h.verdict;
  EXPECT_LT(h.cpu_fraction, ClientMonitor::kBusyFraction);
  EXPECT_GT(h.wall_s, 0.09);
  EXPECT_THAT(h.verdict, HasSubstr("the load generator kept up"));
  // One late tick in a hundred is the 99th percentile's edge, not a bottleneck: the verdict
  // reads the tail, not the worst tick alone. The loop below keeps its thread busy, which on a
  // slow build (ASan) read as a busy client; counted as 64 threads, only the lag can decide.
  ClientMonitor one(64, 0.010);
  one.start();
  for (int i = 0; i < 1000; ++i) one.on_tick(i == 500 ? 0.5 : 0.0002);
  EXPECT_FALSE(one.finish().bottleneck);
}

}  // namespace
}  // namespace servesim
