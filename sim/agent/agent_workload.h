// The seam between a scenario's workload and the agent layer: parse_agent_workload() reads an
// agent workload's "agent" object against the deployment it runs on, and
// make_simulation_source() gives the simulator the source for any workload — an AgentSource
// for agent workloads, make_request_source()'s otherwise. session_summary_of() reads the
// session metrics back from an AgentSource (nullopt for other sources).
// Stateless functions; thread-safe. The source made borrows the spec it parsed (it keeps it
// alive) and the observer.
#pragma once

#include <memory>
#include <optional>

#include "sim/agent/agent_spec.h"
#include "sim/agent/session_metrics.h"
#include "sim/core/observer.h"
#include "sim/workload/request_source.h"
#include "sim/workload/workload.h"

namespace servesim {

// REQUIRES: workload.kind == kAgent. Throws ConfigError naming the step and the fix.
AgentSpec parse_agent_workload(const WorkloadSpec& workload, const AgentLimits& limits);

// Throws ConfigError (a bad agent block, a trace that cannot be opened).
std::unique_ptr<RequestSource> make_simulation_source(const WorkloadSpec& workload,
                                                      const AgentLimits& limits,
                                                      Observer& observer);

std::optional<SessionSummary> session_summary_of(const RequestSource& source);

}  // namespace servesim
