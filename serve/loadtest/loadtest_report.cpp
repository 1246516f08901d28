#include "serve/loadtest/loadtest_report.h"

#include "sim/metrics/step_table.h"

namespace servesim {
namespace {

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

// The served model's entry in GET /v1/models' answer ({"data": [{"id": ...}, ...]}).
const nlohmann::json* served_model(const nlohmann::json& models, const std::string& id) {
  if (!models.is_object() || !models.contains("data") || !models["data"].is_array()) return nullptr;
  for (const nlohmann::json& m : models["data"]) {
    if (m.is_object() && m.value("id", std::string()) == id) return &m;
  }
  return nullptr;
}

nlohmann::json model_json(const LoadtestResult& r) {
  nlohmann::json model = {{"name", r.model}};
  if (const nlohmann::json* m = served_model(r.server.models, r.model)) {
    if (m->contains("max_model_len")) model["max_model_len"] = (*m)["max_model_len"];
    if (m->contains("owned_by")) model["owned_by"] = (*m)["owned_by"];
  }
  return model;
}

// GET /version's {"version": "0.12.0"} (vLLM, servesim), else whatever it answered.
nlohmann::json server_version(const nlohmann::json& version) {
  if (version.is_object() && version.contains("version")) return version["version"];
  return version;
}

nlohmann::json block_or_null(const nlohmann::json& scenario, const char* key) {
  return scenario.is_object() && scenario.contains(key) ? scenario[key] : nlohmann::json();
}

}  // namespace

nlohmann::json loadtest_setup_json(const LoadtestResult& r, const LoadtestSetup& setup,
                                   const EndpointUrl& url, const std::string& scenario,
                                   const nlohmann::json& scenario_json, uint64_t seed) {
  return {{"scenario", scenario},
          {"servesim_version", setup.servesim_version},
          {"git_revision", setup.git_revision},
          {"url", url.text},
          {"endpoint", setup.endpoint},
          {"model", model_json(r)},
          {"server_version", server_version(r.server.version)},
          {"workload", block_or_null(scenario_json, "workload")},
          {"slo", block_or_null(scenario_json, "slo")},
          {"metrics", block_or_null(scenario_json, "metrics")},
          {"seed", seed},
          {"client",
           {{"timeout_s", setup.timeout_s},
            {"max_connections", r.max_connections},
            {"max_requests", r.max_requests},
            {"max_duration_s", r.max_duration_s},
            {"host", setup.client_host},
            {"started_at", setup.started_at}}},
          {"max_error_rate", setup.max_error_rate}};
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
  return {{"url", url.text},
          {"endpoint", setup.endpoint},
          {"models_response", r.server.models},
          {"version_response", r.server.version},
          {"server_metrics", r.server.metrics},
          {"timeseries_source", r.server.timeseries_source},
          {"scrapes", r.scrapes},
          {"client_host", setup.client_host},
          {"started_at", setup.started_at},
          {"servesim_version", setup.servesim_version + " (git " + setup.git_revision + ")"},
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
          {"knee", knee_json(knee, step_clients)},
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
  if (!step_clients.empty()) print_knee(out, knee, step_clients);
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
