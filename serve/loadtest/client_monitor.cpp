#include "serve/loadtest/client_monitor.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace servesim {

ClientMonitor::ClientMonitor(int threads, double lag_threshold_s)
    : threads_(std::max(1, threads)), lag_threshold_s_(lag_threshold_s) {}

double ClientMonitor::process_cpu_s() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  auto seconds = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double ClientMonitor::wall_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void ClientMonitor::start() {
  start_cpu_s_ = window_cpu_s_ = process_cpu_s();
  start_wall_s_ = window_wall_s_ = wall_now_s();
}

void ClientMonitor::on_tick(double lateness_s) {
  lag_.add(std::max(lateness_s, 1e-9));
}

void ClientMonitor::on_window() {
  const double cpu = process_cpu_s();
  const double wall = wall_now_s();
  if (wall - window_wall_s_ > 0.5) {
    peak_cpu_fraction_ =
        std::max(peak_cpu_fraction_, (cpu - window_cpu_s_) / (wall - window_wall_s_));
  }
  window_cpu_s_ = cpu;
  window_wall_s_ = wall;
}

ClientHealth ClientMonitor::finish() const {
  ClientHealth h;
  h.wall_s = wall_now_s() - start_wall_s_;
  h.cpu_s = process_cpu_s() - start_cpu_s_;
  h.cpu_fraction = h.wall_s > 0 ? h.cpu_s / h.wall_s : 0;
  h.peak_cpu_fraction = peak_cpu_fraction_;
  h.threads = threads_;
  h.lag_samples = lag_.count();
  if (h.lag_samples > 0) {
    h.lag_p50_s = lag_.quantile(50);
    h.lag_p99_s = lag_.quantile(99);
    h.lag_max_s = lag_.max();
  }
  const bool busy = h.cpu_fraction >= kBusyFraction * threads_;
  const bool late = h.lag_p99_s > lag_threshold_s_;
  h.bottleneck = busy || late;
  char line[256];
  if (h.bottleneck) {
    std::snprintf(line, sizeof line,
                  "the load generator was the bottleneck (CPU %.0f%% of %d thread%s, event-loop "
                  "lag p99 %.1f ms): latencies include the client's own delay",
                  h.cpu_fraction * 100, threads_, threads_ == 1 ? "" : "s", h.lag_p99_s * 1e3);
  } else {
    std::snprintf(line, sizeof line,
                  "the load generator kept up (CPU %.0f%% of %d thread%s, event-loop lag p99 "
                  "%.1f ms)",
                  h.cpu_fraction * 100, threads_, threads_ == 1 ? "" : "s", h.lag_p99_s * 1e3);
  }
  h.verdict = line;
  return h;
}

}  // namespace servesim
