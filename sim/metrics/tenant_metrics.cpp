#include "sim/metrics/tenant_metrics.h"

#include <cmath>

namespace servesim {
namespace {

nlohmann::json number(double x) {
  return std::isnan(x) ? nlohmann::json() : nlohmann::json(x);
}

nlohmann::json latency_json(const LatencyStats& s) {
  return {{"count", s.count},
          {"mean_ms", number(s.mean_s * 1e3)},
          {"p50_ms", number(s.p50_s * 1e3)},
          {"p90_ms", number(s.p90_s * 1e3)},
          {"p99_ms", number(s.p99_s * 1e3)}};
}

// The limits a tenant can be refused by, in the order the gateway checks them.
constexpr RateLimitKind kLimits[] = {RateLimitKind::kTenantInFlight, RateLimitKind::kTenantRequests,
                                     RateLimitKind::kTenantTokens, RateLimitKind::kGatewayRequests,
                                     RateLimitKind::kGatewayTokens};

double ms(double s) {
  return std::isnan(s) ? 0.0 : s * 1e3;
}

}  // namespace

uint64_t TenantSummary::refused() const {
  uint64_t n = 0;
  for (uint64_t c : refused_by_limit) n += c;
  return n;
}

TenantMetrics::TenantMetrics(std::vector<TenantLabel> tenants, const MetricsOptions& options)
    : tenants_(std::move(tenants)), refused_(tenants_.size()) {
  for (size_t t = 0; t < tenants_.size(); ++t) collectors_.emplace_back(options);
}

void TenantMetrics::add(const RequestRecord& record) {
  MetricsCollector& c = collectors_.at(record.tenant);
  c.add(record);
  if (record.cause == FailureCause::kRateLimited && !c.in_warmup(record.id, record.arrival_s)) {
    ++refused_[record.tenant][static_cast<size_t>(record.limit)];
  }
}

void TenantMetrics::add_itl(uint32_t tenant, double gap_s, uint64_t request_id,
                            double request_arrival_s) {
  collectors_.at(tenant).add_itl(gap_s, request_id, request_arrival_s);
}

std::vector<TenantSummary> TenantMetrics::summaries(const MetricsSummary& whole) const {
  std::vector<TenantSummary> out;
  for (size_t t = 0; t < tenants_.size(); ++t) {
    TenantSummary s;
    s.tenant = tenants_[t];
    s.summary = collectors_[t].summary();
    s.refused_by_limit = refused_[t];
    if (whole.duration_s > 0) {
      s.goodput_output_tokens_per_s =
          static_cast<double>(s.summary.output_tokens) / whole.duration_s;
    }
    out.push_back(std::move(s));
  }
  return out;
}

nlohmann::json tenants_json(const std::vector<TenantSummary>& tenants) {
  nlohmann::json all = nlohmann::json::array();
  for (const TenantSummary& t : tenants) {
    const MetricsSummary& m = t.summary;
    nlohmann::json causes;
    for (size_t i = 1; i < kNumFailureCauses; ++i) {
      causes[std::string(to_string(static_cast<FailureCause>(i)))] = m.time.failures[i];
    }
    nlohmann::json limits;
    for (RateLimitKind k : kLimits) {
      limits[std::string(to_string(k))] = t.refused_by_limit[static_cast<size_t>(k)];
    }
    all.push_back({{"name", t.tenant.name},
                   {"priority", t.tenant.priority},
                   {"requests", m.requests},
                   {"completed", m.completed},
                   {"rejected", m.rejected},
                   {"timed_out", m.timed_out},
                   {"failed_by_cause", causes},
                   {"refused_by_limit", limits},
                   {"error_rate", number(m.error_rate)},
                   {"ttft", latency_json(m.ttft)},
                   {"tpot", latency_json(m.tpot)},
                   {"e2e", latency_json(m.e2e)},
                   {"output_tokens", m.output_tokens},
                   {"goodput_output_tokens_per_s", number(t.goodput_output_tokens_per_s)},
                   {"slo_attainment", number(m.slo_attainment)}});
  }
  return all;
}

void print_tenants(std::FILE* out, const std::vector<TenantSummary>& tenants) {
  if (tenants.empty()) return;
  std::fprintf(out,
               "  tenants        prio  requests        ok   refused  failed  TTFT p50/p99 ms    "
               "TPOT p50 ms  E2E p99 ms  goodput tok/s\n");
  for (const TenantSummary& t : tenants) {
    const MetricsSummary& m = t.summary;
    const uint64_t failed = m.rejected + m.timed_out - t.refused();
    std::fprintf(
        out, "  %-14s %4d %9llu %9llu %9llu %7llu %8.1f/%-9.1f %11.2f %11.1f %14.1f\n",
        t.tenant.name.c_str(), t.tenant.priority, static_cast<unsigned long long>(m.requests),
        static_cast<unsigned long long>(m.completed), static_cast<unsigned long long>(t.refused()),
        static_cast<unsigned long long>(failed), ms(m.ttft.p50_s), ms(m.ttft.p99_s),
        ms(m.tpot.p50_s), ms(m.e2e.p99_s),
        std::isnan(t.goodput_output_tokens_per_s) ? 0.0 : t.goodput_output_tokens_per_s);
  }
  for (const TenantSummary& t : tenants) {
    if (t.refused() == 0) continue;
    std::fprintf(out, "    %s refused (HTTP 429) by", t.tenant.name.c_str());
    const char* sep = "";
    for (RateLimitKind k : kLimits) {
      const uint64_t n = t.refused_by_limit[static_cast<size_t>(k)];
      if (n == 0) continue;
      const std::string name(to_string(k));
      std::fprintf(out, "%s %s %llu", sep, name.c_str(), static_cast<unsigned long long>(n));
      sep = ",";
    }
    std::fprintf(out, "\n");
  }
}

}  // namespace servesim
