#include "sim/agent/agent_spec.h"

#include <algorithm>
#include <set>

#include "models/config_error.h"
#include "models/json_object_reader.h"

namespace servesim {
namespace {

void read_trace(JsonObjectReader& r, AgentSpec& a, const std::string& base_dir) {
  if (r.has("workflows"))
    r.fail("workflows", "is not allowed with \"trace\" (the trace says what runs)");
  r.raw("workflows");
  if (a.record_trace)
    r.fail("record_trace", "is not supported with \"trace\" (a replay records nothing)");
  std::string path = r.required<std::string>("trace");
  if (!path.empty() && path[0] != '/' && !base_dir.empty()) path = base_dir + "/" + path;
  a.trace = read_session_trace(path);
  std::stable_sort(
      a.trace.begin(), a.trace.end(),
      [](const TracedSession& x, const TracedSession& y) { return x.start_s < y.start_s; });
  const std::string start = r.optional<std::string>("trace_start", "recorded");
  if (start != "recorded" && start != "arrival") {
    r.fail("trace_start", "must be \"recorded\" or \"arrival\", got \"" + start + "\"");
  }
  a.trace_recorded_starts = start == "recorded";
  if (a.sessions > a.trace.size()) {
    r.fail("sessions", "is " + std::to_string(a.sessions) + " but the trace holds " +
                           std::to_string(a.trace.size()) + " sessions; lower it (0 = all)");
  }
  if (a.sessions == 0) a.sessions = a.trace.size();
}

}  // namespace

AgentSpec AgentSpec::from_json(const nlohmann::json& j, const std::string& path,
                               const std::string& base_dir, const AgentLimits& limits) {
  JsonObjectReader r(j, path);
  AgentSpec a;
  const int64_t sessions = r.optional<int64_t>("sessions", 0);
  if (sessions < 0) {
    r.fail("sessions", "must be >= 0 (0 = until duration_s), got " + std::to_string(sessions));
  }
  a.sessions = static_cast<uint64_t>(sessions);
  a.record_trace = r.optional<bool>("record_trace", false);
  if (r.has("trace")) {
    read_trace(r, a, base_dir);
    r.finish();
    return a;
  }
  if (r.has("trace_start")) r.fail("trace_start", "needs \"trace\" (a session trace to replay)");
  r.raw("trace_start");
  r.raw("trace");
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
