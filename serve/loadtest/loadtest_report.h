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
  std::string servesim_version;  // e.g. "0.1.0"
  std::string git_revision;      // the build's, e.g. "abc1234"
  double timeout_s = 0;          // seconds
  double max_error_rate = 0;     // fraction, for the knee
};

nlohmann::json loadtest_json(const LoadtestResult& result, const LoadtestSetup& setup,
                             const EndpointUrl& url, const Knee& knee,
                             const std::vector<int>& step_clients);

// summary.json's "setup" record of a load test, in the shape of a simulation's
// (sim/run/run_setup.h) where the two overlap, so `servesim compare` can name the keys in which
// a measured and a simulated run, or two measured runs, differ: the scenario, servesim's version,
// the endpoint, the model as the server names it (and its max_model_len when /v1/models says),
// the server's version, the scenario's workload, slo and metrics blocks as given after --set,
// the seed, the client's limits and the knee's error-rate limit. What the server does not
// report (GPU, engine flags) is absent rather than guessed.
nlohmann::json loadtest_setup_json(const LoadtestResult& result, const LoadtestSetup& setup,
                                   const EndpointUrl& url, const std::string& scenario,
                                   const nlohmann::json& scenario_json, uint64_t seed);

// Errors by cause, the knee, the client's verdict and a partial-run note.
void print_loadtest_notes(std::FILE* out, const LoadtestResult& result, const Knee& knee,
                          const std::vector<int>& step_clients);

}  // namespace servesim
