// ClientMonitor: the load generator's check on itself. A load test whose client cannot keep
// up measures the client, not the server, so the run records its event-loop thread's CPU
// time (getrusage RUSAGE_THREAD: the load generator's one thread, not the whole process, which
// may host other work) and its event loop's lag — how late a periodic timer fires — and the report
// names the client as the bottleneck when its thread was busy nearly all the time or its
// timers ran late, rather than blaming the server for the delay.
//
// Thresholds: CPU >= kBusyFraction of the event-loop threads over the run, or a 99th-
// percentile lag above lag_threshold_s. Thread-safety: none; every call must come from the
// event-loop thread.
#pragma once

#include <cstdint>
#include <string>

#include "sim/metrics/quantile_sketch.h"

namespace servesim {

struct ClientHealth {
  double wall_s = 0;             // seconds measured
  double cpu_s = 0;              // user + system CPU seconds of the event-loop thread
  double cpu_fraction = 0;       // cpu_s / wall_s: 1.0 is one core busy all the time
  double peak_cpu_fraction = 0;  // the highest one-second window
  int threads = 1;               // event-loop threads driving the load
  uint64_t lag_samples = 0;      // timer ticks measured
  double lag_p50_s = 0;          // seconds a tick fired late, median
  double lag_p99_s = 0;          // seconds, 99th percentile
  double lag_max_s = 0;          // seconds
  bool bottleneck = false;       // the client, not the server, limited the run
  std::string verdict;           // one line for people
};

class ClientMonitor {
 public:
  static constexpr double kBusyFraction = 0.9;

  ClientMonitor(int threads, double lag_threshold_s);

  void start();
  // A tick fired lateness_s after it was due.
  void on_tick(double lateness_s);
  // Marks a one-second window (for peak CPU); call about once a second.
  void on_window();
  ClientHealth finish() const;

 private:
  static double process_cpu_s();
  static double wall_now_s();

  int threads_;
  double lag_threshold_s_;
  double start_cpu_s_ = 0;
  double start_wall_s_ = 0;
  double window_cpu_s_ = 0;
  double window_wall_s_ = 0;
  double peak_cpu_fraction_ = 0;
  QuantileSketch lag_;
};

}  // namespace servesim
