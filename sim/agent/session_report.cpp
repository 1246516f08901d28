#include "sim/agent/session_report.h"

#include <cmath>

namespace servesim {
namespace {

nlohmann::json ms(double s) {
  return std::isnan(s) ? nlohmann::json() : nlohmann::json(s * 1e3);
}

nlohmann::json number_or_null(double x) {
  return std::isnan(x) ? nlohmann::json() : nlohmann::json(x);
}

nlohmann::json stats_json(const LatencyStats& s) {
  return {{"count", s.count},      {"mean_ms", ms(s.mean_s)}, {"p50_ms", ms(s.p50_s)},
          {"p90_ms", ms(s.p90_s)}, {"p95_ms", ms(s.p95_s)},   {"p99_ms", ms(s.p99_s)},
          {"max_ms", ms(s.max_s)}};
}

void print_row(std::FILE* out, const char* name, const LatencyStats& s) {
  if (s.count == 0) {
    std::fprintf(out, "  %-14s %9s\n", name, "-");
    return;
  }
  std::fprintf(out, "  %-14s %9.0f %9.0f %9.0f %9.0f %9.0f %9.0f\n", name, s.mean_s * 1e3,
               s.p50_s * 1e3, s.p90_s * 1e3, s.p95_s * 1e3, s.p99_s * 1e3, s.max_s * 1e3);
}

double percent(double rate) {
  return std::isnan(rate) ? 0.0 : 100.0 * rate;
}

void print_cache_line(std::FILE* out, const SessionSummary& s) {
  std::fprintf(out,
               "  caches per session: %.1f tool lookups (%.1f%% hits), %.1f LLM lookups (%.1f%% "
               "exact, %.1f%% semantic hits); lookups take %.0f ms\n",
               s.tool_cache_lookups, percent(s.tool_cache_hit_rate), s.llm_cache_lookups,
               percent(s.llm_exact_hit_rate), percent(s.llm_semantic_hit_rate),
               s.cache_lookup_s * 1e3);
}

}  // namespace

nlohmann::json session_summary_json(const SessionSummary& s) {
  const CriticalPath& p = s.path;
  return {{"sessions", s.sessions},
          {"completed", s.completed},
          {"failed", s.failed},
          {"e2e", stats_json(s.e2e)},
          {"ttft", stats_json(s.ttft)},
          {"per_session",
           {{"llm_calls", s.llm_calls},
            {"tool_calls", s.tool_calls},
            {"input_tokens", s.input_tokens},
            {"output_tokens", s.output_tokens},
            {"cached_tokens", s.cached_tokens},
            {"skipped_steps", s.skipped_steps},
            {"fallback_calls", s.fallback_calls},
            {"cost_usd", number_or_null(s.cost_usd)}}},
          {"critical_path",
           {{"llm_queue_ms", ms(p.llm_queue_s)},
            {"prefill_ms", ms(p.prefill_s)},
            {"decode_ms", ms(p.decode_s)},
            {"service_ms", ms(p.service_s)},
            {"tool_ms", ms(p.tool_s)},
            {"cache_ms", ms(p.cache_s)},
            {"llm_calls", s.path_llm_calls},
            {"tool_calls", s.path_tool_calls}}},
          {"caches",
           {{"tool_lookups", s.tool_cache_lookups},
            {"tool_hit_rate", number_or_null(s.tool_cache_hit_rate)},
            {"llm_lookups", s.llm_cache_lookups},
            {"llm_exact_hit_rate", number_or_null(s.llm_exact_hit_rate)},
            {"llm_semantic_hit_rate", number_or_null(s.llm_semantic_hit_rate)},
            {"lookup_ms", ms(s.cache_lookup_s)}}}};
}

void print_session_summary(std::FILE* out, const SessionSummary& s) {
  std::fprintf(out, "\n  sessions %llu   completed %llu   failed %llu\n",
               static_cast<unsigned long long>(s.sessions),
               static_cast<unsigned long long>(s.completed),
               static_cast<unsigned long long>(s.failed));
  std::fprintf(out, "  %-14s %9s %9s %9s %9s %9s %9s\n", "session (ms)", "mean", "p50", "p90",
               "p95", "p99", "max");
  print_row(out, "E2E", s.e2e);
  print_row(out, "first token", s.ttft);
  if (s.completed == 0) return;
  std::fprintf(out,
               "  per session: %.1f LLM calls, %.1f tool calls; tokens in %.0f, out %.0f, "
               "cached %.0f",
               s.llm_calls, s.tool_calls, s.input_tokens, s.output_tokens, s.cached_tokens);
  // Only workflows with optional steps or fallbacks use them; the others' line stays as it was.
  if (s.skipped_steps > 0) std::fprintf(out, "; optional steps skipped %.2f", s.skipped_steps);
  if (s.fallback_calls > 0) std::fprintf(out, "; calls sent to a fallback %.2f", s.fallback_calls);
  std::fprintf(out, "\n");
  if (!std::isnan(s.cost_usd)) {
    std::fprintf(out, "  cost: $%.4f per completed session (the run's GPU time over them)\n",
                 s.cost_usd);
  }
  const CriticalPath& p = s.path;
  const double total = p.total_s();
  auto share = [total](double x) { return total > 0 ? 100.0 * x / total : 0.0; };
  std::fprintf(out,
               "  critical path (mean %.0f ms, %.1f LLM + %.1f tool calls): LLM queue %.0f%%, "
               "prefill %.0f%%, decode %.0f%%, service %.0f%%, tools %.0f%%",
               total * 1e3, s.path_llm_calls, s.path_tool_calls, share(p.llm_queue_s),
               share(p.prefill_s), share(p.decode_s), share(p.service_s), share(p.tool_s));
  const bool caches = s.tool_cache_lookups > 0 || s.llm_cache_lookups > 0;
  std::fprintf(out, caches ? ", cache lookups %.0f%%\n" : "\n", share(p.cache_s));
  if (caches) print_cache_line(out, s);
}

}  // namespace servesim
