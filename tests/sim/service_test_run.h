// Helpers of the service-path tests (service_path_test, service_tenants_test,
// service_client_machine_test), kv_offload_test and the disaggregated EP / KV offload tests: a
// scenario JSON through the parser, a run that keeps every request record, and the sums of a
// record's segments that must equal its E2E and its TTFT. Header-only, test code; not
// thread-safe.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/catalog.h"
#include "models/config_error.h"
#include "sim/core/observer.h"
#include "sim/core/request_record.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"

namespace servesim::testing {

inline SimulationConfig config_of(const nlohmann::json& scenario) {
  return parse_scenario(scenario, "", "test", Catalog()).config;
}

// `scenario` with `--set`-style overrides applied first.
inline SimulationConfig config_of(nlohmann::json scenario,
                                  const std::vector<std::string>& overrides) {
  apply_overrides(scenario, overrides);
  return config_of(scenario);
}

// The one-line error building a Simulation of `scenario` (with overrides) throws; "" if none.
inline std::string error_of(const nlohmann::json& scenario,
                            const std::vector<std::string>& overrides = {}) {
  try {
    Simulation sim(config_of(scenario, overrides));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// Keeps every record the run reports, in order.
class Records final : public Observer {
 public:
  void on_request_done(const RequestRecord& r) override { all.push_back(r); }
  std::vector<RequestRecord> all;
};

inline SimulationResult run(const SimulationConfig& config, Records* records = nullptr) {
  Simulation sim(config);
  NullObserver null;
  return sim.run(records ? static_cast<Observer&>(*records) : null);
}

// A run's result and every record it reported.
struct RecordedRun {
  SimulationResult result;
  std::vector<RequestRecord> records;
};

inline RecordedRun run_recorded(const SimulationConfig& config) {
  Records records;
  RecordedRun r;
  r.result = run(config, &records);
  r.records = std::move(records.all);
  return r;
}

// Seconds; a record's segments up to its last token (retries aside) and up to its first.
inline double sum_to_e2e(const RequestSegments& s) {
  return s.pool_s + s.network_s + s.gateway_s + s.frontend_s + s.pre_model_s + s.engine_queue_s +
         s.prefill_s + s.decode_s + s.stream_s;
}
inline double sum_to_ttft(const RequestSegments& s) {
  return s.pool_s + s.network_s + s.gateway_s + s.frontend_s + s.pre_model_s + s.engine_queue_s +
         s.prefill_s + s.first_token_stream_s;
}

// `parse` must throw a ConfigError whose message holds `needle` and is one line.
template <typename Parse>
void expect_one_line_error(Parse&& parse, const std::string& needle) {
  try {
    parse();
    ADD_FAILURE() << "accepted; expected an error naming " << needle;
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(needle), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

}  // namespace servesim::testing
