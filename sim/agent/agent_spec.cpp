#include "sim/agent/agent_spec.h"

#include <set>

#include "models/config_error.h"
#include "models/json_object_reader.h"

namespace servesim {

AgentSpec AgentSpec::from_json(const nlohmann::json& j, const std::string& path,
                               const std::string& base_dir, const AgentLimits& limits) {
  JsonObjectReader r(j, path);
  AgentSpec a;
  const int64_t sessions = r.optional<int64_t>("sessions", 0);
  if (sessions < 0) {
    r.fail("sessions", "must be >= 0 (0 = until duration_s), got " + std::to_string(sessions));
  }
  a.sessions = static_cast<uint64_t>(sessions);
  const nlohmann::json& workflows = r.raw("workflows");
  if (!workflows.is_array() || workflows.empty()) {
    r.fail("workflows", "must be a non-empty array of workflows (see docs/agents.md)");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < workflows.size(); ++i) {
    const std::string at = path + ".workflows[" + std::to_string(i) + "]";
    a.workflows.push_back(WorkflowSpec::from_json(workflows[i], at, base_dir, limits));
    if (!names.insert(a.workflows.back().name).second) {
      throw ConfigError(at + ": name \"" + a.workflows.back().name +
                        "\" is used by two workflows; give each its own name");
    }
  }
  r.finish();
  return a;
}

}  // namespace servesim
