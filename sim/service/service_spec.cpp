#include "sim/service/service_spec.h"

#include <algorithm>

#include "models/config_error.h"
#include "models/json_object_reader.h"
#include "models/name_match.h"
#include "sim/service/vllm_frontend.h"

namespace servesim {
namespace {

double non_negative(JsonObjectReader& r, const std::string& key, double fallback = 0.0) {
  const double v = r.optional<double>(key, fallback);
  if (!(v >= 0) || v == std::numeric_limits<double>::infinity()) {
    r.fail(key, "must be a finite number >= 0");
  }
  return v;
}

Distribution seconds(JsonObjectReader& r, const std::string& key, const std::string& base_dir,
                     const Distribution& fallback = Distribution::fixed(0.0)) {
  const nlohmann::json& j = r.raw(key);
  if (j.is_null()) return fallback;
  return Distribution::from_json(j, r.context() + "." + key, base_dir, 0.0, false);
}

// The keys every station has (an absent one keeps s's value); the caller finishes the reader.
void read_station_keys(JsonObjectReader& r, StationSpec& s, const std::string& base_dir) {
  s.workers = r.optional<int>("workers", s.workers);
  if (s.workers < 1) r.fail("workers", "must be >= 1 (processes × threads serving at once)");
  const int64_t capacity = r.optional<int64_t>("queue_capacity", s.queue_capacity);
  if (capacity < 0) r.fail("queue_capacity", "must be >= 0 (0: unbounded)");
  s.queue_capacity = capacity;
  s.request_s = seconds(r, "request_s", base_dir, s.request_s);
  s.per_prompt_token_s = non_negative(r, "per_prompt_token_s", s.per_prompt_token_s);
  s.cv = non_negative(r, "cv", s.cv);
}

StationSpec read_stage(const nlohmann::json& j, const std::string& context,
                       const std::string& base_dir) {
  if (!j.is_object()) throw ConfigError(context + ": must be an object with a \"name\"");
  JsonObjectReader r(j, context);
  StationSpec s;
  s.name = r.required<std::string>("name");
  if (s.name.empty()) r.fail("name", "must not be empty");
  if (s.name == "client") {
    r.fail("name",
           "\"client\" is the client machine's station (service.client.machine); "
           "name the stage otherwise");
  }
  read_station_keys(r, s, base_dir);
  r.finish();
  return s;
}

// Absent keys keep vLLM's values (vllm_frontend.h).
FrontendSpec read_frontend(JsonObjectReader& r, const std::string& base_dir) {
  FrontendSpec f = vllm_frontend();
  read_station_keys(r, f.station, base_dir);
  f.step_s = seconds(r, "step_s", base_dir, f.step_s);
  f.per_output_token_s = non_negative(r, "per_output_token_s", f.per_output_token_s);
  r.finish();
  return f;
}

std::vector<ConnectionPoolSpec> read_pools(const nlohmann::json& j, const std::string& path) {
  if (!j.is_array() || j.empty()) {
    throw ConfigError(path +
                      ": must be a non-empty list of pools such as "
                      "[{\"name\": \"shared\", \"connections\": 64}]");
  }
  std::vector<ConnectionPoolSpec> pools;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string context = path + "[" + std::to_string(i) + "]";
    if (!j[i].is_object()) {
      throw ConfigError(context + ": must be an object with a \"name\" and \"connections\"");
    }
    JsonObjectReader r(j[i], context);
    ConnectionPoolSpec p;
    p.name = r.required<std::string>("name");
    if (p.name.empty()) r.fail("name", "must not be empty");
    for (const ConnectionPoolSpec& earlier : pools) {
      if (earlier.name == p.name) {
        r.fail("name", "\"" + p.name + "\" is used by an earlier pool; names must be unique");
      }
    }
    p.connections = r.positive_int("connections");
    p.wait_timeout_s = non_negative(r, "wait_timeout_s");
    r.finish();
    pools.push_back(p);
  }
  return pools;
}

// Every tenant's pool must exist and every pool must serve a tenant: a pool nobody uses, or a
// tenant whose pool is misspelt, would silently leave the limit out.
void resolve_pools(ServiceSpec& spec, const std::string& path) {
  std::vector<std::string> names;
  for (const ConnectionPoolSpec& p : spec.pools) names.push_back(p.name);
  std::vector<bool> used(spec.pools.size(), false);
  for (size_t t = 0; t < spec.tenants.size(); ++t) {
    TenantSpec& tenant = spec.tenants[t];
    if (tenant.pool.empty()) continue;
    const auto it = std::find(names.begin(), names.end(), tenant.pool);
    if (it == names.end()) {
      throw ConfigError(path + ".tenants[" + std::to_string(t) + "].pool: \"" + tenant.pool +
                        "\" is not in service.pools" + did_you_mean(tenant.pool, names) +
                        "; add it there or drop the key");
    }
    tenant.pool_index = static_cast<int>(it - names.begin());
    used[static_cast<size_t>(tenant.pool_index)] = true;
  }
  for (size_t p = 0; p < spec.pools.size(); ++p) {
    if (!used[p]) {
      throw ConfigError(path + ".pools[" + std::to_string(p) + "]: no tenant names pool \"" +
                        spec.pools[p].name + "\"; give a service.tenants entry \"pool\": \"" +
                        spec.pools[p].name + "\" or drop the pool");
    }
  }
}

}  // namespace

ServiceSpec ServiceSpec::from_json(const nlohmann::json& j, const std::string& path,
                                   const std::string& base_dir) {
  ServiceSpec spec;
  if (j.is_string()) {
    if (j.get<std::string>() == "none") return spec;
    throw ConfigError(path + ": must be \"none\" or an object, got " + j.dump());
  }
  if (!j.is_object()) throw ConfigError(path + ": must be \"none\" or an object, got " + j.dump());
  spec.enabled = true;
  spec.frontend = vllm_frontend();
  JsonObjectReader r(j, path);
  if (r.has("network")) {
    JsonObjectReader n(r.raw("network"), path + ".network");
    spec.rtt_s = seconds(n, "rtt_s", base_dir);
    n.finish();
  } else {
    r.raw("network");
  }
  if (r.has("gateway")) {
    JsonObjectReader g(r.raw("gateway"), path + ".gateway");
    StationSpec gateway;
    gateway.name = "gateway";
    read_station_keys(g, gateway, base_dir);
    spec.gateway_timeout_s = non_negative(g, "timeout_s");
    if (g.has("rate_limit")) {
      spec.rate_limit = RateLimitSpec::from_json(g.raw("rate_limit"), path + ".gateway.rate_limit");
    } else {
      g.raw("rate_limit");
    }
    g.finish();
    spec.gateway = gateway;
  } else {
    r.raw("gateway");
  }
  if (r.has("frontend")) {
    JsonObjectReader f(r.raw("frontend"), path + ".frontend");
    spec.frontend = read_frontend(f, base_dir);
  } else {
    r.raw("frontend");
  }
  const nlohmann::json& client = r.raw("client");
  if (!client.is_null()) spec.client = ClientSpec::from_json(client, path + ".client", base_dir);
  const nlohmann::json& stages = r.raw("stages");
  if (!stages.is_null()) {
    if (!stages.is_array()) r.fail("stages", "must be a list of stations");
    for (size_t i = 0; i < stages.size(); ++i) {
      spec.stages.push_back(
          read_stage(stages[i], path + ".stages[" + std::to_string(i) + "]", base_dir));
    }
  }
  const nlohmann::json& tenants = r.raw("tenants");
  if (!tenants.is_null()) spec.tenants = TenantSpec::list_from_json(tenants, path + ".tenants");
  const nlohmann::json& pools = r.raw("pools");
  if (!pools.is_null()) spec.pools = read_pools(pools, path + ".pools");
  resolve_pools(spec, path);
  r.finish();
  return spec;
}

}  // namespace servesim
