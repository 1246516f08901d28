// TenantMetrics: a run's figures per tenant (service.tenants) — each tenant's requests go to a
// MetricsCollector of their own, so warm-up, percentiles, SLOs and failures by cause are
// counted exactly as for the whole run — plus its rate-limited requests by the limit that
// refused them (RequestRecord::limit), and its goodput: output tokens of its completed
// requests over the whole run's duration, so the tenants' goodputs add up to the run's output
// throughput. summary.json's "tenants", the text summary's tenant table.
//
// Memory: a MetricsCollector per tenant (20 bytes per request, ~21 KiB of ITL sketch each).
// Thread-safety: none; one per run, fed from one thread.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/core/request_record.h"
#include "sim/metrics/metrics.h"

namespace servesim {

struct TenantLabel {
  std::string name;
  int priority = 0;  // vLLM request priority the tenant's requests carry
};

struct TenantSummary {
  TenantLabel tenant;
  MetricsSummary summary;  // the tenant's requests alone
  // Rate-limited requests (after warm-up) by the limit that refused them, indexed by
  // RateLimitKind (kNone's entry stays 0).
  std::array<uint64_t, kNumRateLimitKinds> refused_by_limit{};
  // Output tokens of the tenant's completed requests per second of the whole run.
  double goodput_output_tokens_per_s = std::numeric_limits<double>::quiet_NaN();

  uint64_t refused() const;  // rate-limited requests, every limit
};

class TenantMetrics {
 public:
  // Throws ConfigError for invalid options (as MetricsCollector).
  TenantMetrics(std::vector<TenantLabel> tenants, const MetricsOptions& options);

  // REQUIRES: record.tenant < the number of tenants.
  void add(const RequestRecord& record);
  void add_itl(uint32_t tenant, double gap_s, uint64_t request_id, double request_arrival_s);

  // `whole` is the run's summary: its duration is the goodputs' denominator.
  std::vector<TenantSummary> summaries(const MetricsSummary& whole) const;

 private:
  std::vector<TenantLabel> tenants_;
  std::vector<MetricsCollector> collectors_;
  std::vector<std::array<uint64_t, kNumRateLimitKinds>> refused_;
};

// summary.json's "tenants": per tenant its name, priority, counts, failed by cause, refused by
// limit, error rate, TTFT / TPOT / E2E {count, mean_ms, p50_ms, p90_ms, p99_ms}, goodput and
// SLO attainment. NaN values are null.
nlohmann::json tenants_json(const std::vector<TenantSummary>& tenants);

// The text summary's tenant table (nothing without tenants), with a line per tenant that had
// requests refused, naming the limits.
void print_tenants(std::FILE* out, const std::vector<TenantSummary>& tenants);

}  // namespace servesim
