#include "sim/metrics/step_table.h"

#include <cmath>
#include <string>

namespace servesim {
namespace {

void print_percentiles(std::FILE* out, const LatencyStats& s) {
  for (double v : {s.p50_s, s.p95_s, s.p99_s}) {
    if (std::isnan(v))
      std::fprintf(out, " %9s", "-");
    else
      std::fprintf(out, " %9.1f", v * 1e3);
  }
}

// "p95 and p99 (p95 needs 72, p99 368)" from {95, 99}.
std::string unstable_text(const std::vector<int>& percents) {
  std::string names;
  std::string needs;
  for (size_t i = 0; i < percents.size(); ++i) {
    const std::string name = "p" + std::to_string(percents[i]);
    const std::string need = std::to_string(min_samples_for_percentile(percents[i] / 100.0));
    names += (i == 0 ? "" : i + 1 == percents.size() ? " and " : ", ") + name;
    needs += (i == 0 ? name + " needs " : ", " + name + " ") + need;
  }
  return names + " (" + needs + ")";
}

void print_short_step_notes(std::FILE* out, const std::vector<MetricsSummary>& by_step,
                            const std::vector<int>& clients) {
  for (size_t i = 0; i < by_step.size(); ++i) {
    const std::vector<int> unstable = unstable_percentiles(by_step[i]);
    if (unstable.empty()) continue;
    std::fprintf(out,
                 "  note: step %zu (%d clients) has %llu latency samples, too few for a stable "
                 "%s; hold the step longer\n",
                 i + 1, clients.at(i), static_cast<unsigned long long>(latency_samples(by_step[i])),
                 unstable_text(unstable).c_str());
  }
}

}  // namespace

void print_step_table(std::FILE* out, const std::vector<MetricsSummary>& by_step,
                      const StepSchedule& schedule) {
  std::fprintf(out,
               "\n per step: %zu steps of %.0f s, the first %.0f s of each left out (warm-up); "
               "latencies in ms\n",
               by_step.size(), schedule.step_duration_s, schedule.step_warmup_s);
  std::fprintf(out, "  %4s %7s %8s %8s %9s %9s %9s %9s %9s %9s %9s %9s %9s %7s\n", "step",
               "clients", "requests", "req/s", "TTFT p50", "p95", "p99", "TPOT p50", "p95", "p99",
               "E2E p50", "p95", "p99", "errors");
  for (size_t i = 0; i < by_step.size(); ++i) {
    const MetricsSummary& s = by_step[i];
    std::fprintf(out, "  %4zu %7d %8llu", i + 1, schedule.clients.at(i),
                 static_cast<unsigned long long>(s.requests));
    if (std::isnan(s.request_throughput))
      std::fprintf(out, " %8s", "-");
    else
      std::fprintf(out, " %8.2f", s.request_throughput);
    print_percentiles(out, s.ttft);
    print_percentiles(out, s.tpot);
    print_percentiles(out, s.e2e);
    if (std::isnan(s.error_rate))
      std::fprintf(out, " %7s\n", "-");
    else
      std::fprintf(out, " %6.2f%%\n", s.error_rate * 100);
  }
  print_short_step_notes(out, by_step, schedule.clients);
}

void print_knee(std::FILE* out, const Knee& knee, const std::vector<int>& clients) {
  if (knee.step >= 0) {
    std::fprintf(out, "  knee: step %d (%d clients): %s\n", knee.step + 1,
                 clients.at(static_cast<size_t>(knee.step)), knee.reason.c_str());
  } else {
    std::fprintf(out, "  knee: none; every step measured met the SLOs and the error-rate limit\n");
  }
}

}  // namespace servesim
