#include "sim/service/tenant_spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>

#include "models/config_error.h"
#include "models/json_object_reader.h"

namespace servesim {
namespace {

constexpr double kShareSumTolerance = 1e-9;

TenantSpec read_tenant(const nlohmann::json& j, const std::string& context) {
  if (!j.is_object()) {
    throw ConfigError(context + ": must be an object with a \"name\" and a \"share\"");
  }
  JsonObjectReader r(j, context);
  TenantSpec t;
  t.name = r.required<std::string>("name");
  const bool plain = std::all_of(t.name.begin(), t.name.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.';
  });
  if (t.name.empty() || !plain) {
    r.fail("name", "must be letters, digits, '_', '-' or '.' (it names a CSV field), got \"" +
                       t.name + "\"");
  }
  t.share = r.required<double>("share");
  if (!(t.share > 0 && t.share <= 1)) {
    r.fail("share", "must be in (0, 1]: the tenant's fraction of the traffic");
  }
  t.priority = r.optional<int>("priority", 0);
  if (r.has("rate_limit")) {
    t.rate_limit = RateLimitSpec::from_json(r.raw("rate_limit"), context + ".rate_limit");
  } else {
    r.raw("rate_limit");
  }
  t.max_in_flight = r.optional<int64_t>("max_in_flight", 0);
  if (r.has("max_in_flight") && t.max_in_flight < 1) {
    r.fail("max_in_flight", "must be an integer >= 1 (drop it for no cap)");
  }
  t.pool = r.optional<std::string>("pool", "");
  if (r.has("pool") && t.pool.empty()) r.fail("pool", "must name one of service.pools");
  r.finish();
  return t;
}

}  // namespace

std::vector<TenantSpec> TenantSpec::list_from_json(const nlohmann::json& j,
                                                   const std::string& path) {
  if (!j.is_array() || j.empty()) {
    throw ConfigError(path +
                      ": must be a non-empty list of tenants such as "
                      "[{\"name\": \"a\", \"share\": 1}]");
  }
  std::vector<TenantSpec> tenants;
  std::set<std::string> names;
  double sum = 0;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string context = path + "[" + std::to_string(i) + "]";
    tenants.push_back(read_tenant(j[i], context));
    if (!names.insert(tenants.back().name).second) {
      throw ConfigError(context + ".name: \"" + tenants.back().name +
                        "\" is used by an earlier tenant; names must be unique");
    }
    sum += tenants.back().share;
  }
  if (std::abs(sum - 1.0) > kShareSumTolerance) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.12g", sum);
    throw ConfigError(path + ": the shares sum to " + std::string(buffer) +
                      "; they must sum to 1 (each is the tenant's fraction of the traffic)");
  }
  return tenants;
}

std::vector<TenantLabel> tenant_labels(const std::vector<TenantSpec>& tenants) {
  std::vector<TenantLabel> labels;
  for (const TenantSpec& t : tenants) labels.push_back({t.name, t.priority});
  return labels;
}

std::string tenant_priority_warning(const std::vector<TenantSpec>& tenants, bool priority_policy) {
  if (priority_policy || tenants.empty()) return "";
  for (const TenantSpec& t : tenants) {
    if (t.priority != tenants.front().priority) {
      return "warning: service.tenants have different priorities but engine.scheduling_policy "
             "is \"fcfs\", so they do not change the order (set it to \"priority\", as vLLM's "
             "--scheduling-policy priority)";
    }
  }
  return "";
}

}  // namespace servesim
