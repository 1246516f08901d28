// libFuzzer target: a scenario's "service" block (ServiceSpec::from_json, the client's
// timeout and retry policy, the gateway's rate limit and the tenants included), parsed as
// parse_scenario does. Distribution files resolve against tests/fuzz/seeds/. Only ConfigError may
// escape, and a spec that parses must keep the promises its header makes: stations that serve,
// rates that are finite and non-negative, a retry policy that terminates with finite, positive
// waits, and tenants with unique names whose shares sum to 1.
#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "models/json_file.h"
#include "sim/service/service_spec.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

bool finite_non_negative(double v) {
  return std::isfinite(v) && v >= 0;
}

bool station_ok(const servesim::StationSpec& s) {
  return s.workers >= 1 && s.queue_capacity >= 0 && finite_non_negative(s.per_prompt_token_s) &&
         finite_non_negative(s.cv);
}

bool retry_ok(const servesim::RetrySpec& r) {
  if (r.max_attempts < 1 || r.max_attempts > servesim::RetrySpec::kMaxAttempts) return false;
  if (!(r.multiplier >= 1) || !std::isfinite(r.multiplier)) return false;
  servesim::Rng rng(1);
  for (int k = 1; k < r.max_attempts; ++k) {
    const double cap = r.cap_s(k);
    const double wait = r.backoff_s(k, rng);
    if (!(cap > 0) || !std::isfinite(cap) || cap > r.max_backoff_s) return false;
    if (!(wait >= 0) || wait > cap) return false;
  }
  return true;
}

bool rate_limit_ok(const servesim::RateLimitSpec& l) {
  return finite_non_negative(l.requests_per_s) && finite_non_negative(l.tokens_per_min) &&
         finite_non_negative(l.burst) && (l.requests_per_s > 0 || l.tokens_per_min > 0) &&
         (l.requests_per_s == 0 || l.burst > 0);
}

// Tenants: non-empty unique names, shares in (0, 1] summing to 1, limits that hold.
bool tenants_ok(const std::vector<servesim::TenantSpec>& tenants) {
  std::set<std::string> names;
  double sum = 0;
  for (const servesim::TenantSpec& t : tenants) {
    if (t.name.empty() || !names.insert(t.name).second) return false;
    if (!(t.share > 0 && t.share <= 1) || t.max_in_flight < 0) return false;
    if (t.rate_limit && !rate_limit_ok(*t.rate_limit)) return false;
    sum += t.share;
  }
  return tenants.empty() || std::abs(sum - 1.0) <= 1e-9;
}

void check_invariants(const servesim::ServiceSpec& s) {
  bool ok = station_ok(s.frontend.station) && finite_non_negative(s.frontend.per_output_token_s) &&
            finite_non_negative(s.gateway_timeout_s) && finite_non_negative(s.client.timeout_s) &&
            retry_ok(s.client.retry);
  if (s.gateway) ok = ok && station_ok(*s.gateway);
  for (const servesim::StationSpec& st : s.stages) ok = ok && station_ok(st) && !st.name.empty();
  if (s.rate_limit) ok = ok && rate_limit_ok(*s.rate_limit);
  ok = ok && tenants_ok(s.tenants);
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return servesim::fuzz::run_or_reject([&] {
    const nlohmann::json j =
        servesim::parse_json_text(servesim::fuzz::as_text(data, size), "scenario.json");
    check_invariants(servesim::ServiceSpec::from_json(j, "scenario.json: service",
                                                      SERVESIM_SOURCE_DIR "/tests/fuzz/seeds"));
  });
}
