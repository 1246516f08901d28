#include "serve/loadtest/loadtest_report.h"

#include <cmath>
#include <optional>

namespace servesim {
namespace {

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

nlohmann::json client_json(const ClientHealth& h) {
  return {{"cpu_s", h.cpu_s},
          {"cpu_fraction", h.cpu_fraction},
          {"peak_cpu_fraction", h.peak_cpu_fraction},
          {"threads", h.threads},
          {"lag_samples", h.lag_samples},
          {"lag_p50_ms", h.lag_p50_s * 1e3},
          {"lag_p99_ms", h.lag_p99_s * 1e3},
          {"lag_max_ms", h.lag_max_s * 1e3},
          {"bottleneck", h.bottleneck},
          {"verdict", h.verdict}};
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

nlohmann::json loadtest_json(const LoadtestResult& r, const LoadtestSetup& setup,
                             const EndpointUrl& url, const Knee& knee,
                             const std::vector<int>& step_clients) {
  nlohmann::json errors = nlohmann::json::object();
  for (int c = 1; c < kNumErrorCauses; ++c) {
    errors[std::string(to_string(static_cast<ErrorCause>(c)))] = r.errors[static_cast<size_t>(c)];
  }
  nlohmann::json statuses = nlohmann::json::object();
  for (const auto& [status, count] : r.http_status) {
    statuses[status == 0 ? "none" : std::to_string(status)] = count;
  }
  nlohmann::json knee_json;  // null when no step broke
  if (knee.step >= 0) {
    knee_json = {{"step", knee.step + 1},
                 {"clients", step_clients.at(static_cast<size_t>(knee.step))},
                 {"reason", knee.reason}};
  }
  return {{"url", url.text},
          {"endpoint", setup.endpoint},
          {"models_response", r.server.models},
          {"version_response", r.server.version},
          {"server_metrics", r.server.metrics},
          {"timeseries_source", r.server.timeseries_source},
          {"scrapes", r.scrapes},
          {"client_host", setup.client_host},
          {"started_at", setup.started_at},
          {"servesim_version", setup.servesim_version},
          {"max_connections", r.max_connections},
          {"timeout_s", setup.timeout_s},
          {"max_requests", r.max_requests},
          {"max_duration_s", r.max_duration_s},
          {"wall_s", r.wall_s},
          {"stop_reason", r.stop_reason},
          {"sent", r.sent},
          {"errors", errors},
          {"http_status", statuses},
          {"output_length_mismatch", r.output_mismatch},
          {"max_error_rate", setup.max_error_rate},
          {"knee", knee_json},
          {"client", client_json(r.client)}};
}

void print_loadtest_notes(std::FILE* out, const LoadtestResult& r, const Knee& knee,
                          const std::vector<int>& step_clients) {
  uint64_t failed = 0;
  for (int c = 1; c < kNumErrorCauses; ++c) failed += r.errors[static_cast<size_t>(c)];
  if (failed > 0) {
    std::fprintf(out, "  errors by cause:");
    for (int c = 1; c < kNumErrorCauses; ++c) {
      const uint64_t n = r.errors[static_cast<size_t>(c)];
      if (n > 0) {
        std::fprintf(out, " %s %llu", std::string(to_string(static_cast<ErrorCause>(c))).c_str(),
                     static_cast<unsigned long long>(n));
      }
    }
    std::fprintf(out, "\n");
  }
  if (r.output_mismatch > 0) {
    std::fprintf(out,
                 "  note: %llu requests came back with another output length than asked "
                 "(does the server honour ignore_eos / min_tokens?)\n",
                 static_cast<unsigned long long>(r.output_mismatch));
  }
  if (!step_clients.empty()) {
    if (knee.step >= 0) {
      std::fprintf(out, "  knee: step %d (%d clients): %s\n", knee.step + 1,
                   step_clients.at(static_cast<size_t>(knee.step)), knee.reason.c_str());
    } else {
      std::fprintf(out,
                   "  knee: none; every step measured met the SLOs and the error-rate limit\n");
    }
  }
  std::fprintf(out, "  client: %s\n", r.client.verdict.c_str());
  if (r.partial) {
    std::fprintf(
        out,
        "  partial run (%s): what was measured is kept; %llu requests in flight were "
        "cancelled\n",
        r.stop_reason.c_str(),
        static_cast<unsigned long long>(r.errors[static_cast<size_t>(ErrorCause::kCancelled)]));
  }
}

}  // namespace servesim
