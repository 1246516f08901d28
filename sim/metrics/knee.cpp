#include "sim/metrics/knee.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

namespace servesim {
namespace {

// The chance, at the stability bound, that every sample lies below the quantile.
constexpr double kTailMiss = 0.025;

std::string over_limit(const char* name, double value_s, std::optional<double> limit_s) {
  if (!limit_s || std::isnan(value_s) || value_s <= *limit_s) return "";
  char text[128];
  std::snprintf(text, sizeof text, "%s p99 %.1f ms > SLO %.1f ms", name, value_s * 1e3,
                *limit_s * 1e3);
  return text;
}

std::string step_break(const MetricsSummary& s, const SloSpec& slo, double max_error_rate) {
  if (!std::isnan(s.error_rate) && s.error_rate > max_error_rate) {
    char text[128];
    std::snprintf(text, sizeof text, "error rate %.1f%% > %.1f%%", s.error_rate * 100,
                  max_error_rate * 100);
    return text;
  }
  for (std::string why :
       {over_limit("TTFT", s.ttft.p99_s, slo.ttft_s), over_limit("TPOT", s.tpot.p99_s, slo.tpot_s),
        over_limit("E2E", s.e2e.p99_s, slo.e2e_s)}) {
    if (!why.empty()) return why;
  }
  return "";
}

}  // namespace

Knee find_knee(const std::vector<MetricsSummary>& by_step, const SloSpec& slo,
               double max_error_rate) {
  for (size_t i = 0; i < by_step.size(); ++i) {
    if (by_step[i].requests == 0) continue;
    std::string why = step_break(by_step[i], slo, max_error_rate);
    if (!why.empty()) return Knee{static_cast<int>(i), std::move(why)};
  }
  return {};
}

nlohmann::json knee_json(const Knee& knee, const std::vector<int>& clients) {
  if (knee.step < 0) return nullptr;
  return {{"step", knee.step + 1},
          {"clients", clients.at(static_cast<size_t>(knee.step))},
          {"reason", knee.reason}};
}

uint64_t min_samples_for_percentile(double q) {
  return static_cast<uint64_t>(std::ceil(std::log(kTailMiss) / std::log(q)));
}

uint64_t latency_samples(const MetricsSummary& step) {
  uint64_t samples = 0;
  for (const LatencyStats* s : {&step.ttft, &step.tpot, &step.e2e}) {
    if (s->count > 0) samples = samples == 0 ? s->count : std::min(samples, s->count);
  }
  return samples;
}

std::vector<int> unstable_percentiles(const MetricsSummary& step) {
  const uint64_t samples = latency_samples(step);
  std::vector<int> unstable;
  if (samples == 0) return unstable;
  for (int percent : {50, 95, 99}) {
    if (samples < min_samples_for_percentile(percent / 100.0)) unstable.push_back(percent);
  }
  return unstable;
}

}  // namespace servesim
