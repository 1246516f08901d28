// The load test's own report, beside the summary and the knee (sim/metrics/knee.h) it shares
// with `servesim simulate`: the "loadtest" object of summary.json (endpoint, the server's
// /v1/models and /version answers, errors by cause, HTTP statuses, bounds, the client's own
// health) and the lines printed after the summary table. Stateless functions; thread-safe.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/loadtest/load_generator.h"
#include "sim/metrics/knee.h"
#include "sim/metrics/metrics.h"

namespace servesim {

// Where and when the run was made; filled by the front end.
struct LoadtestSetup {
  std::string endpoint;          // e.g. "/v1/completions"
  std::string client_host;       // gethostname()
  std::string started_at;        // UTC, ISO 8601
  std::string servesim_version;  // e.g. "0.1.0 (git abc1234)"
  double timeout_s = 0;          // seconds
  double max_error_rate = 0;     // fraction, for the knee
};

nlohmann::json loadtest_json(const LoadtestResult& result, const LoadtestSetup& setup,
                             const EndpointUrl& url, const Knee& knee,
                             const std::vector<int>& step_clients);

// Errors by cause, the knee, the client's verdict and a partial-run note.
void print_loadtest_notes(std::FILE* out, const LoadtestResult& result, const Knee& knee,
                          const std::vector<int>& step_clients);

}  // namespace servesim
