// AgentSpec: the "agent" object of an agent workload — the workflows sessions run, mixed by
// weight (or a session trace to replay), and how many sessions start in all. Parsed against the
// deployment the sessions call (AgentLimits), so prompts that can never fit and foreign deployments
// fail before the run. Value type, immutable after parsing; thread-safe to share.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/agent/session_trace.h"
#include "sim/agent/workflow_spec.h"

namespace servesim {

struct AgentSpec {
  std::vector<WorkflowSpec> workflows;  // at least one, names unique; none with a trace
  uint64_t sessions = 0;                // sessions started in all; 0 = until duration_s
  // "trace": a JSONL session trace replayed instead of workflows, in order of start_s; each
  // session starts at its recorded start_s ("trace_start": "recorded", the default) or by the
  // workload's arrival ("arrival"). sessions 0 = the whole trace.
  std::vector<TracedSession> trace;
  bool trace_recorded_starts = true;
  bool record_trace = false;  // "record_trace": sessions write their trace (sessions.jsonl)

  // `path` prefixes messages ("workload.agent"). Throws ConfigError.
  static AgentSpec from_json(const nlohmann::json& j, const std::string& path,
                             const std::string& base_dir, const AgentLimits& limits);
};

}  // namespace servesim
