// WorkflowSpec: one agent program — a tree of steps (LLM calls, tool calls, sequences,
// parallel groups with a concurrency limit, branches, loops) with its system prompt and
// context policy — read strictly from JSON (docs/agents.md has the schema).
//
// Steps: every step has a dense `index` in document (pre-)order, so a session keeps one
// outcome per step in a vector. Branches on an outcome and loops name an earlier tool step by
// its "id"; a probability branch's arms cover at most probability 1, the rest runs nothing
// (an empty sequence). A loop's body, a branch's arms and a workflow's "steps" are sequences.
// Parsing checks what is knowable before the run: unknown step ids, loops without a cap,
// probabilities outside [0, 1], a summary no shorter than the history it replaces, a first
// prompt that cannot fit its deployment's max_model_len, an llm step naming a deployment the
// scenario does not have; each a
// one-line ConfigError naming the step's path (and id) and the fix.
// Value type, immutable after parsing; thread-safe to share.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/agent/cache_spec.h"
#include "sim/workload/distribution.h"
#include "sim/workload/length_distribution.h"

namespace servesim {

enum class StepKind { kLlm, kTool, kSequence, kParallel, kBranch, kLoop };

struct LlmStepSpec {
  LengthDistribution new_tokens = LengthDistribution::fixed(1);  // tokens after the context
  LengthDistribution output_tokens = LengthDistribution::fixed(1);
  bool stream = true;  // streams its answer: the user sees its first token, not its end
  // "optional": a call that fails (refused, timed out, after its retries) skips the step and
  // the session goes on without its answer (graceful degradation), instead of failing.
  bool optional = false;
  int deployment = 0;  // index into AgentLimits::deployments ("deployment", by name)
  // "fallback": a deployment that takes the call once when it fails on `deployment` (refused,
  // timed out, after its retries), e.g. a smaller model when the large one is overloaded;
  // -1 = none. Only when the fallback fails too does the step fail (or skip, if optional).
  int fallback = -1;
  LlmCacheSpec cache;  // a response cache consulted before the call; disabled by default
};

struct ToolStepSpec {
  Distribution latency_s = Distribution::fixed(0.0);                // seconds, first attempt
  Distribution retry_latency_s = Distribution::fixed(0.0);          // seconds, each retry
  double failure_probability = 0;                                   // per attempt, in [0, 1]
  int retries = 0;                                                  // attempts after a failure
  LengthDistribution result_tokens = LengthDistribution::fixed(1);  // enter the context
  ToolCacheSpec cache;  // a result cache consulted before the run; disabled by default
};

struct StepSpec {
  StepKind kind = StepKind::kSequence;
  int index = 0;         // dense, document order, unique within the workflow
  std::string id;        // "" when unnamed
  std::string path;      // for messages: "workflows[0].steps[2]"
  bool subtask = false;  // its end clears the context to a summary (context.subtask_summary)
  LlmStepSpec llm;       // kLlm
  ToolStepSpec tool;     // kTool
  // kSequence, kParallel: the steps; kLoop: [body]; kBranch: one sequence per arm.
  std::vector<StepSpec> children;
  int max_concurrency = 0;              // kParallel: children running at once; 0 = all
  std::vector<double> arm_probability;  // kBranch by probability: one per arm
  int condition_step = -1;              // kBranch on an outcome: the tool step's index;
  bool run_if_failed = true;            // arms are [then, else]: then runs if it failed
  int until_step = -1;                  // kLoop: stop once this tool step succeeded
  int max_iterations = 0;               // kLoop: cap, >= 1
};

struct ContextPolicySpec {
  int max_tool_result_tokens = 0;  // trim each tool result to this many tokens; 0 = keep all
  int summarize_every = 0;         // an extra LLM call after every K LLM calls; 0 = never
  int summary_tokens = 0;          // its output, which replaces the history; tokens
  LengthDistribution summary_prompt_tokens = LengthDistribution::fixed(1);  // its instruction
  int subtask_summary_tokens = 0;  // a subtask's end keeps this much of its last answer
};

// A deployment an llm step may call: its name and the longest prompt + output it serves.
struct DeploymentLimit {
  std::string name;
  int max_model_len = 0;  // tokens; 0 = no check
};

struct AgentLimits {
  // The scenario's deployments: [0] its own (named after its model), then its "deployments"
  // in order, so an llm step's deployment index is the RequestSpec's.
  std::vector<DeploymentLimit> deployments;
  std::vector<std::string> tenants;  // service.tenants' names, in order; a workflow may name one
};

struct WorkflowSpec {
  std::string name;
  double weight = 1;             // share of sessions, relative to the other workflows
  int system_prompt_tokens = 0;  // shared by every session of the workflow
  // "tenant": the service tenant its LLM calls belong to (an agent type with its own quotas,
  // priority and connection pool); -1: drawn by the tenants' shares like any request's.
  int tenant = -1;  // index into AgentLimits::tenants
  ContextPolicySpec context;
  StepSpec root;      // a sequence
  int num_steps = 0;  // steps in the tree, the root included

  // `path` prefixes messages ("workload.agent.workflows[0]"). Throws ConfigError.
  static WorkflowSpec from_json(const nlohmann::json& j, const std::string& path,
                                const std::string& base_dir, const AgentLimits& limits);
};

}  // namespace servesim
