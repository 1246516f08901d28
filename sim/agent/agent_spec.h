// AgentSpec: the "agent" object of an agent workload — the workflows sessions run, mixed by
// weight, and how many sessions start in all. Parsed against the deployment the sessions call
// (AgentLimits), so prompts that can never fit and foreign deployments fail before the run.
// Value type, immutable after parsing; thread-safe to share.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/agent/workflow_spec.h"

namespace servesim {

struct AgentSpec {
  std::vector<WorkflowSpec> workflows;  // at least one; names unique
  uint64_t sessions = 0;                // sessions started in all; 0 = until duration_s

  // `path` prefixes messages ("workload.agent"). Throws ConfigError.
  static AgentSpec from_json(const nlohmann::json& j, const std::string& path,
                             const std::string& base_dir, const AgentLimits& limits);
};

}  // namespace servesim
