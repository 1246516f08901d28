#include "sim/metrics/diagnosis.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>

namespace servesim {
namespace {

constexpr size_t index_of(Segment s) {
  return static_cast<size_t>(s);
}

__attribute__((format(printf, 1, 2))) std::string text(const char* pattern, ...) {
  char buffer[512];
  va_list args;
  va_start(args, pattern);
  std::vsnprintf(buffer, sizeof buffer, pattern, args);
  va_end(args);
  return buffer;
}

// The replicas' counters summed (peaks and caps: the largest), as the rules read them.
struct EngineTotals {
  int64_t preemptions = 0;
  AdmissionCounters admission;
  int max_num_seqs = 0;
  int max_num_batched_tokens = 0;
  double busy_s = 0;
};

EngineTotals engine_totals(const std::vector<ReplicaSummary>& replicas) {
  EngineTotals t;
  for (const ReplicaSummary& r : replicas) {
    t.preemptions += r.preemptions;
    t.busy_s += r.busy_s;
    t.max_num_seqs = std::max(t.max_num_seqs, r.max_num_seqs);
    t.max_num_batched_tokens = std::max(t.max_num_batched_tokens, r.max_num_batched_tokens);
    AdmissionCounters& a = t.admission;
    a.waiting_s += r.admission.waiting_s;
    a.at_seq_cap_s += r.admission.at_seq_cap_s;
    a.at_token_budget_s += r.admission.at_token_budget_s;
    a.at_kv_limit_s += r.admission.at_kv_limit_s;
    a.peak_running = std::max(a.peak_running, r.admission.peak_running);
    a.peak_kv_usage = std::max(a.peak_kv_usage, r.admission.peak_kv_usage);
  }
  return t;
}

// What every rule reads, computed once.
struct Context {
  const RunFacts& facts;
  const std::vector<TenantSummary>& tenants;
  const DiagnosisThresholds& limits;
  EngineTotals engine;
  double gpu_busy = std::nan("");  // fraction of the run the replicas spent in steps

  const MetricsSummary& summary() const { return facts.summary; }
  const SegmentStats& segment(Segment s) const { return facts.summary.time.segments[index_of(s)]; }
  // Fraction of the replicas' time in steps.
  double busy_share(double seconds) const {
    return engine.busy_s > 0 ? seconds / engine.busy_s : 0;
  }
};

// "85%", or "unknown" when the run's duration or replicas are not known.
std::string percent(double fraction) {
  return std::isnan(fraction) ? std::string("unknown") : text("%.0f%%", 100 * fraction);
}

std::string segment_metric(Segment s, const char* field) {
  return "summary.where_time_went.segments." + std::string(to_string(s)) + "." + field;
}

// A handful of prompts sent over and over: the prefix cache answers for the repeats.
void repeated_prompts_rule(const Context& c, std::vector<Finding>& out) {
  const int n = c.facts.distinct_prompts;
  const MetricsSummary& m = c.summary();
  if (n <= 0 || m.completed <= static_cast<uint64_t>(n)) return;
  Finding f{"repeated_prompts",
            "",
            {{"workload.distinct_prompts", static_cast<double>(n)},
             {"summary.completed", static_cast<double>(m.completed)}}};
  // A load test sees its server from outside: no replicas, and no count of cached tokens.
  std::string cache = "the server's prefix cache can serve the repeats";
  if (!c.facts.replicas.empty() && !std::isnan(m.prefix_cache_hit_rate)) {
    cache = "the prefix cache served " + percent(m.prefix_cache_hit_rate) + " of the prompt tokens";
    f.evidence.push_back({"summary.prefix_cache_hit_rate", m.prefix_cache_hit_rate});
  }
  f.text = text(
      "the workload sends only %d distinct prompts over %llu requests, as a benchmark cycling "
      "through a small dataset does: %s, so TTFT (p50 %.1f ms) and TPOT are a cached prompt's; "
      "leave out workload.distinct_prompts for new prompts",
      n, static_cast<unsigned long long>(m.completed), cache.c_str(), m.ttft.p50_s * 1e3);
  out.push_back(f);
}

// The load generator's own CPU (service.client.machine): the run measured the client.
void client_rule(const StationStats& s, const Context& c, std::vector<Finding>& out) {
  if (s.utilisation < c.limits.client_utilisation || s.mean_queue < c.limits.station_mean_queue ||
      s.mean_service_s <= 0) {
    return;
  }
  const double cap_per_s = s.workers / s.mean_service_s;
  const std::string at = "service.stations[client].";
  out.push_back(
      {"client_bound",
       text("the load generator is the bottleneck, not the server: its %d thread%s %s %.0f%% busy "
            "with %.1f jobs waiting on average (%.1f ms each), which caps it at %.0f sends and "
            "chunks/s, so the %.2f req/s and the latencies measured are the client's while the "
            "GPU is %s busy; add threads or processes (service.client.machine.threads) or more "
            "client machines",
            s.workers, s.workers == 1 ? "" : "s", s.workers == 1 ? "is" : "are",
            100 * s.utilisation, s.mean_queue, s.mean_wait_s * 1e3, cap_per_s,
            c.summary().request_throughput, percent(c.gpu_busy).c_str()),
       {{at + "utilisation", s.utilisation},
        {at + "mean_queue", s.mean_queue},
        {at + "mean_wait_ms", s.mean_wait_s * 1e3},
        {at + "workers", static_cast<double>(s.workers)},
        {at + "mean_service_ms", s.mean_service_s * 1e3},
        {"summary.request_throughput_per_s", c.summary().request_throughput},
        {"gpu_busy", c.gpu_busy}}});
}

void station_rules(const Context& c, std::vector<Finding>& out) {
  for (const StationStats& s : c.facts.stations) {
    if (s.name == kClientStationName) {
      client_rule(s, c, out);
      continue;
    }
    if (s.utilisation < c.limits.station_utilisation ||
        s.mean_queue < c.limits.station_mean_queue || s.mean_service_s <= 0) {
      continue;
    }
    const double cap_per_s = s.workers / s.mean_service_s;
    const std::string at = "service.stations[" + s.name + "].";
    out.push_back(
        {"station_saturated",
         text("%s is saturated: %.0f%% busy with %.1f jobs waiting on average (%llu at most); "
              "%d worker%s x %.2f ms caps it at %.1f jobs/s, so throughput stays at %.2f req/s "
              "while the GPU is %s busy",
              s.name.c_str(), 100 * s.utilisation, s.mean_queue,
              static_cast<unsigned long long>(s.max_queue), s.workers, s.workers == 1 ? "" : "s",
              s.mean_service_s * 1e3, cap_per_s, c.summary().request_throughput,
              percent(c.gpu_busy).c_str()),
         {{at + "utilisation", s.utilisation},
          {at + "mean_queue", s.mean_queue},
          {at + "max_queue", static_cast<double>(s.max_queue)},
          {at + "workers", static_cast<double>(s.workers)},
          {at + "mean_service_ms", s.mean_service_s * 1e3},
          {"summary.request_throughput_per_s", c.summary().request_throughput},
          {"gpu_busy", c.gpu_busy}}});
  }
}

std::string failure_clause(FailureCause cause, const Context& c) {
  const std::vector<StationStats>& stations = c.facts.stations;
  switch (cause) {
    case FailureCause::kRateLimited:
      return c.tenants.empty()
                 ? "were refused by the gateway's rate limit (HTTP 429)"
                 : "were refused by a rate limit, the gateway's or their tenant's (HTTP 429)";
    case FailureCause::kQueueFull: {
      std::string names;
      for (const StationStats& s : stations) {
        if (s.rejected > 0) names += (names.empty() ? "" : ", ") + s.name;
      }
      return "were refused by a full queue (HTTP 503)" + (names.empty() ? "" : " at " + names);
    }
    case FailureCause::kTimedOut:
      return "timed out before their answer was complete";
    case FailureCause::kTooLong:
      return "were refused as longer than max_model_len (prompt + output, HTTP 400)";
    default:
      return "failed as " + std::string(to_string(cause));
  }
}

void error_rules(const Context& c, std::vector<Finding>& out) {
  const MetricsSummary& m = c.summary();
  if (m.requests == 0) return;
  for (size_t i = 0; i < kNumFailureCauses; ++i) {
    const uint64_t failed = m.time.failures[i];
    const double share = static_cast<double>(failed) / static_cast<double>(m.requests);
    if (failed == 0 || share < c.limits.error_share) continue;
    const auto cause = static_cast<FailureCause>(i);
    if (cause == FailureCause::kNone) {
      // A producer that records no causes (loadtest's HTTP errors): failed, without a why.
      out.push_back({"failed",
                     text("%llu of %llu requests (%.1f%%) failed, with no cause recorded",
                          static_cast<unsigned long long>(failed),
                          static_cast<unsigned long long>(m.requests), 100 * share),
                     {{"summary.requests", static_cast<double>(m.requests)},
                      {"summary.error_rate", m.error_rate}}});
      continue;
    }
    const std::string name(to_string(cause));
    out.push_back(
        {name,
         text("%llu of %llu requests (%.1f%%) ", static_cast<unsigned long long>(failed),
              static_cast<unsigned long long>(m.requests), 100 * share) +
             failure_clause(cause, c),
         {{"summary.where_time_went.errors_by_cause." + name, static_cast<double>(failed)},
          {"summary.requests", static_cast<double>(m.requests)},
          {"summary.error_rate", m.error_rate}}});
  }
}

std::string limit_phrase(RateLimitKind k) {
  switch (k) {
    case RateLimitKind::kGatewayRequests:
      return "the gateway's requests_per_s limit";
    case RateLimitKind::kGatewayTokens:
      return "the gateway's tokens_per_min limit";
    default:
      return "its " + std::string(to_string(k)) + " limit";
  }
}

void tenant_refused_rule(const Context& c, std::vector<Finding>& out) {
  for (const TenantSummary& t : c.tenants) {
    if (t.summary.requests == 0) continue;
    size_t top = 0;
    for (size_t k = 1; k < kNumRateLimitKinds; ++k) {
      if (t.refused_by_limit[k] > t.refused_by_limit[top]) top = k;
    }
    const uint64_t refused = t.refused_by_limit[top];
    const double share = static_cast<double>(refused) / static_cast<double>(t.summary.requests);
    if (refused == 0 || share < c.limits.error_share) continue;
    const auto kind = static_cast<RateLimitKind>(top);
    const std::string at = "tenants[" + t.tenant.name + "].";
    out.push_back(
        {"tenant_refused",
         text("tenant %s: %.0f%% of its requests (%llu of %llu) were refused by ",
              t.tenant.name.c_str(), 100 * share, static_cast<unsigned long long>(refused),
              static_cast<unsigned long long>(t.summary.requests)) +
             limit_phrase(kind) + " (HTTP 429)",
         {{at + "refused_by_limit." + std::string(to_string(kind)), static_cast<double>(refused)},
          {at + "requests", static_cast<double>(t.summary.requests)}}});
  }
}

void tenant_slow_rule(const Context& c, std::vector<Finding>& out) {
  const TenantSummary* slow = nullptr;
  const TenantSummary* fast = nullptr;
  for (const TenantSummary& t : c.tenants) {
    if (t.summary.ttft.count == 0 || !(t.summary.ttft.p50_s > 0)) continue;
    if (!slow || t.summary.ttft.p50_s > slow->summary.ttft.p50_s) slow = &t;
    if (!fast || t.summary.ttft.p50_s < fast->summary.ttft.p50_s) fast = &t;
  }
  if (!slow || slow == fast) return;
  const double ratio = slow->summary.ttft.p50_s / fast->summary.ttft.p50_s;
  if (ratio < c.limits.tenant_ttft_ratio) return;
  const std::string& s = slow->tenant.name;
  const std::string& f = fast->tenant.name;
  const int ps = slow->tenant.priority;
  const int pf = fast->tenant.priority;
  std::string cause;
  if (c.facts.priority_scheduling) {
    cause = text(" (priority %d vs %d)", ps, pf);
  } else if (ps != pf) {
    // Under fcfs the priorities order nothing, so they are not the cause.
    cause = text(
        " (priorities %d vs %d do not order the queue under scheduling_policy fcfs; "
        "engine.scheduling_policy=priority makes them)",
        ps, pf);
  }
  out.push_back(
      {"tenant_slow",
       text("tenant %s waits longest for its first token: TTFT p50 %.1f ms, %.1fx tenant %s's "
            "%.1f ms",
            s.c_str(), slow->summary.ttft.p50_s * 1e3, ratio, f.c_str(),
            fast->summary.ttft.p50_s * 1e3) +
           cause,
       {{"tenants[" + s + "].ttft.p50_ms", slow->summary.ttft.p50_s * 1e3},
        {"tenants[" + f + "].ttft.p50_ms", fast->summary.ttft.p50_s * 1e3}}});
}

void slo_rule(const Context& c, std::vector<Finding>& out) {
  const MetricsSummary& m = c.summary();
  if (!(m.slo_attainment < c.limits.slo_attainment)) return;  // NaN: no SLO set
  out.push_back({"slo_missed",
                 text("only %.1f%% of requests met the SLOs (goodput %.2f of %.2f req/s)",
                      100 * m.slo_attainment, m.goodput, m.request_throughput),
                 {{"summary.slo_attainment", m.slo_attainment},
                  {"summary.goodput_requests_per_s", m.goodput},
                  {"summary.request_throughput_per_s", m.request_throughput}}});
}

void admission_rules(const Context& c, std::vector<Finding>& out) {
  const EngineTotals& e = c.engine;
  const AdmissionCounters& a = e.admission;
  const double kv_peak = a.peak_kv_usage;
  if (c.busy_share(a.at_seq_cap_s) >= c.limits.limit_busy_share) {
    out.push_back(
        {"max_num_seqs_full",
         text(
             "max_num_seqs (%d) holds requests back: %.0f%% of the busy time ran %d sequences with "
             "requests still waiting, while the KV cache peaked at %.0f%% used",
             e.max_num_seqs, 100 * c.busy_share(a.at_seq_cap_s), e.max_num_seqs, 100 * kv_peak),
         {{"replicas.at_max_num_seqs_s", a.at_seq_cap_s},
          {"replicas.busy_s", e.busy_s},
          {"replicas.max_num_seqs", static_cast<double>(e.max_num_seqs)},
          {"replicas.peak_kv_usage", kv_peak}}});
  }
  if (c.busy_share(a.at_token_budget_s) >= c.limits.limit_busy_share) {
    out.push_back(
        {"token_budget_full",
         text("max_num_batched_tokens (%d) holds requests back: %.0f%% of the busy time used the "
              "whole "
              "token budget with requests still waiting",
              e.max_num_batched_tokens, 100 * c.busy_share(a.at_token_budget_s)),
         {{"replicas.at_token_budget_s", a.at_token_budget_s},
          {"replicas.busy_s", e.busy_s},
          {"replicas.max_num_batched_tokens", static_cast<double>(e.max_num_batched_tokens)}}});
  }
  const double completed = static_cast<double>(std::max<uint64_t>(c.summary().completed, 1));
  const double preempt_rate = static_cast<double>(e.preemptions) / completed;
  if (c.busy_share(a.at_kv_limit_s) >= c.limits.limit_busy_share ||
      (e.preemptions > 0 && preempt_rate >= c.limits.preemptions_per_request)) {
    out.push_back({"kv_cache_full",
                   text("the KV cache holds requests back: usage peaked at %.0f%%, %.0f%% of the "
                        "busy time left "
                        "requests waiting for blocks, %lld preemptions (%.1f per 100 requests)",
                        100 * kv_peak, 100 * c.busy_share(a.at_kv_limit_s),
                        static_cast<long long>(e.preemptions), 100 * preempt_rate),
                   {{"replicas.peak_kv_usage", kv_peak},
                    {"replicas.at_kv_limit_s", a.at_kv_limit_s},
                    {"replicas.busy_s", e.busy_s},
                    {"replicas.preemptions", static_cast<double>(e.preemptions)}}});
  }
}

// The admission limit that held requests back longest, if any did long enough.
std::string top_limit(const Context& c) {
  const AdmissionCounters& a = c.engine.admission;
  const double most = std::max({a.at_seq_cap_s, a.at_token_budget_s, a.at_kv_limit_s});
  if (c.busy_share(most) < c.limits.limit_busy_share) return "";
  if (most == a.at_seq_cap_s) return "max_num_seqs";
  if (most == a.at_token_budget_s) return "max_num_batched_tokens";
  return "the KV cache";
}

void engine_queue_rule(const Context& c, std::vector<Finding>& out) {
  const SegmentStats& q = c.segment(Segment::kEngineQueue);
  if (c.summary().time.count == 0 || q.share_of_ttft < c.limits.engine_queue_ttft_share) return;
  const std::string limit = top_limit(c);
  std::string why;
  if (!limit.empty()) {
    why = ", held back by " + limit;
  } else if (c.gpu_busy >= c.limits.station_utilisation) {
    why = text(": the GPU is %s busy and arrivals outpace it", percent(c.gpu_busy).c_str());
  }
  out.push_back({"engine_queueing",
                 text("requests wait for the engine: its queue is %.0f%% of the mean TTFT "
                      "(%.1f of %.1f ms)",
                      100 * q.share_of_ttft, q.mean_s * 1e3, c.summary().ttft.mean_s * 1e3) +
                     why,
                 {{segment_metric(Segment::kEngineQueue, "share_of_ttft"), q.share_of_ttft},
                  {segment_metric(Segment::kEngineQueue, "mean_ms"), q.mean_s * 1e3},
                  {"summary.ttft.mean_ms", c.summary().ttft.mean_s * 1e3},
                  {"gpu_busy", c.gpu_busy}}});
}

void long_prefill_rule(const Context& c, std::vector<Finding>& out) {
  const MetricsSummary& m = c.summary();
  const SegmentStats& p = c.segment(Segment::kPrefill);
  if (m.time.count == 0 || m.completed == 0 || p.share_of_ttft < c.limits.prefill_ttft_share ||
      !(m.ttft.mean_s >= c.limits.long_prefill_ttft_s)) {
    return;
  }
  const double prompt = static_cast<double>(m.input_tokens) / static_cast<double>(m.completed);
  out.push_back({"long_prefill",
                 text("the first token waits on the prefill: it is %.0f%% of the mean TTFT (%.1f "
                      "of %.1f ms) at %.0f prompt tokens on average",
                      100 * p.share_of_ttft, p.mean_s * 1e3, m.ttft.mean_s * 1e3, prompt),
                 {{segment_metric(Segment::kPrefill, "share_of_ttft"), p.share_of_ttft},
                  {segment_metric(Segment::kPrefill, "mean_ms"), p.mean_s * 1e3},
                  {"summary.ttft.mean_ms", m.ttft.mean_s * 1e3},
                  {"mean_prompt_tokens", prompt}}});
}

// The segment on the way to the first token with the largest p99, and what it suggests.
std::string tail_cause(const Context& c, Segment& worst) {
  worst = Segment::kEngineQueue;
  for (size_t i = 0; i < kNumSegments; ++i) {
    const auto s = static_cast<Segment>(i);
    if (counts_in_ttft(s) && c.segment(s).p99_s > c.segment(worst).p99_s) worst = s;
  }
  if (worst == Segment::kEngineQueue)
    return "requests queue in front of the engine, from bursts or more load than it serves";
  if (worst == Segment::kPrefill) return "head-of-line prefills: long prompts hold up the step";
  if (worst == Segment::kRetry) return "retried requests wait out failed attempts and backoff";
  if (worst == Segment::kPool) {
    return "requests wait for a free connection of their client-side pool (service.pools)";
  }
  return "the " + std::string(to_string(worst)) + " segment's own tail";
}

void ttft_tail_rule(const Context& c, std::vector<Finding>& out) {
  const LatencyStats& t = c.summary().ttft;
  if (t.count == 0 || !(t.p50_s > 0) || t.p99_s < c.limits.ttft_tail_ratio * t.p50_s) return;
  Segment worst;
  const std::string cause = tail_cause(c, worst);
  const double worst_p99_ms = c.segment(worst).p99_s * 1e3;
  std::string preempted;
  const double completed = static_cast<double>(std::max<uint64_t>(c.summary().completed, 1));
  if (static_cast<double>(c.engine.preemptions) / completed >= c.limits.preemptions_per_request) {
    preempted = text(", and %lld preemptions recompute their prompts",
                     static_cast<long long>(c.engine.preemptions));
  }
  const double ratio = t.p99_s / t.p50_s;
  out.push_back(
      {"ttft_tail",
       text("TTFT p99 is %.1fx its p50 (%.1f vs %.1f ms): ", ratio, t.p99_s * 1e3, t.p50_s * 1e3) +
           cause + text(" (%s p99 %.1f ms)", std::string(to_string(worst)).c_str(), worst_p99_ms) +
           preempted,
       {{"summary.ttft.p99_ms", t.p99_s * 1e3},
        {"summary.ttft.p50_ms", t.p50_s * 1e3},
        {segment_metric(worst, "p99_ms"), worst_p99_ms},
        {"replicas.preemptions", static_cast<double>(c.engine.preemptions)}}});
}

bool is_model(Segment s) {
  return s == Segment::kEngineQueue || s == Segment::kPrefill || s == Segment::kDecode;
}

void model_share_rule(const Context& c, std::vector<Finding>& out) {
  const TimeBreakdown& b = c.summary().time;
  if (b.count == 0 || !b.has_service()) return;
  double model = 0;
  Segment top = Segment::kNetwork;
  for (size_t i = 0; i < kNumSegments; ++i) {
    const auto s = static_cast<Segment>(i);
    if (is_model(s)) {
      model += b.segments[i].share_of_e2e;
    } else if (b.segments[i].share_of_e2e > c.segment(top).share_of_e2e) {
      top = s;
    }
  }
  if (model >= c.limits.model_e2e_share) return;
  const SegmentStats& t = c.segment(top);
  const std::string name(to_string(top));
  out.push_back({"model_share_small",
                 text("the model is %.1f%% of E2E: %s takes %.1f%% (%.1f ms mean), so a faster "
                      "GPU moves E2E by less than half its speed-up",
                      100 * model, name.c_str(), 100 * t.share_of_e2e, t.mean_s * 1e3),
                 {{"model_share_of_e2e", model},
                  {segment_metric(top, "share_of_e2e"), t.share_of_e2e},
                  {segment_metric(top, "mean_ms"), t.mean_s * 1e3}}});
}

Finding healthy(const Context& c) {
  const MetricsSummary& m = c.summary();
  const double error_rate = std::isnan(m.error_rate) ? 0.0 : m.error_rate;
  return {"healthy",
          text("no bottleneck found: %.2f req/s, TTFT p50 %.1f ms / p99 %.1f ms, E2E p50 %.1f "
               "ms, GPU busy %s, error rate %.2f%%",
               m.request_throughput, m.ttft.p50_s * 1e3, m.ttft.p99_s * 1e3, m.e2e.p50_s * 1e3,
               percent(c.gpu_busy).c_str(), 100 * error_rate),
          {{"summary.request_throughput_per_s", m.request_throughput},
           {"summary.ttft.p50_ms", m.ttft.p50_s * 1e3},
           {"summary.ttft.p99_ms", m.ttft.p99_s * 1e3},
           {"summary.e2e.p50_ms", m.e2e.p50_s * 1e3},
           {"gpu_busy", c.gpu_busy},
           {"summary.error_rate", error_rate}}};
}

}  // namespace

std::vector<Finding> diagnose(const RunFacts& facts, const DiagnosisThresholds& limits) {
  return diagnose(facts, {}, limits);
}

std::vector<Finding> diagnose(const RunFacts& facts, const std::vector<TenantSummary>& tenants,
                              const DiagnosisThresholds& limits) {
  Context c{facts, tenants, limits, engine_totals(facts.replicas)};
  if (facts.run_s > 0 && !facts.replicas.empty()) {
    c.gpu_busy = c.engine.busy_s / (facts.run_s * static_cast<double>(facts.replicas.size()));
  }
  std::vector<Finding> out;
  repeated_prompts_rule(c, out);
  station_rules(c, out);
  error_rules(c, out);
  tenant_refused_rule(c, out);
  tenant_slow_rule(c, out);
  slo_rule(c, out);
  admission_rules(c, out);
  engine_queue_rule(c, out);
  long_prefill_rule(c, out);
  ttft_tail_rule(c, out);
  model_share_rule(c, out);
  if (out.empty() && facts.summary.completed == 0) {
    out.push_back({"no_requests", "no request completed: there is nothing to diagnose", {}});
  } else if (out.empty()) {
    out.push_back(healthy(c));
  }
  return out;
}

nlohmann::json diagnosis_json(const std::vector<Finding>& findings) {
  nlohmann::json all = nlohmann::json::array();
  for (const Finding& f : findings) {
    nlohmann::json evidence = nlohmann::json::array();
    for (const Evidence& e : f.evidence) {
      evidence.push_back(
          {{"metric", e.metric},
           {"value", std::isnan(e.value) ? nlohmann::json() : nlohmann::json(e.value)}});
    }
    all.push_back({{"code", f.code}, {"text", f.text}, {"evidence", evidence}});
  }
  return all;
}

void print_diagnosis(std::FILE* out, const std::vector<Finding>& findings) {
  std::fprintf(out, "  why\n");
  for (const Finding& f : findings)
    std::fprintf(out, "  - %s: %s\n", f.code.c_str(), f.text.c_str());
}

}  // namespace servesim
