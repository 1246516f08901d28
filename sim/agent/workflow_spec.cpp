#include "sim/agent/workflow_spec.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "models/config_error.h"
#include "models/json_object_reader.h"
#include "models/name_match.h"
#include "sim/core/csv_line.h"

namespace servesim {
namespace {

constexpr int kMaxTokens = 100'000'000;
// A loop whose body takes no time (a branch that ran nothing) iterates within one event: the
// cap bounds that event's work (the stack is bounded anyway, see AgentSession::kMaxNesting).
constexpr int kMaxIterations = 10'000;

// The fewest tokens a LengthDistribution draws (it never draws below 1).
double least_length(const LengthDistribution& d) {
  return std::max(1.0, std::round(d.distribution().min()));
}

// "'a', 'b' and 'c'".
std::string join_quoted(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += "\"" + names[i] + "\"";
  }
  return out;
}

struct KnownStep {
  int index;
  StepKind kind;
};

// Reads one workflow's step tree; remembers the ids seen so far (a dependency must name a step
// written before it) and the least tokens an LLM call adds to the context.
class StepParser {
 public:
  StepParser(std::string prefix, std::string base_dir, const AgentLimits& limits,
             int system_prompt_tokens)
      : prefix_(std::move(prefix)),
        base_dir_(std::move(base_dir)),
        limits_(limits),
        system_prompt_tokens_(system_prompt_tokens) {}

  StepSpec sequence(const nlohmann::json& steps, const std::string& path) {
    StepSpec s = node(StepKind::kSequence, path);
    if (!steps.is_array() || steps.empty()) {
      throw ConfigError(where(path) + ": must be a non-empty array of steps");
    }
    for (size_t i = 0; i < steps.size(); ++i) {
      s.children.push_back(step(steps[i], path + "[" + std::to_string(i) + "]"));
    }
    return s;
  }

  int steps() const { return next_index_; }
  int least_llm_growth() const { return least_llm_growth_; }
  bool has_subtask() const { return has_subtask_; }

 private:
  std::string where(const std::string& path) const { return prefix_ + "." + path; }

  StepSpec node(StepKind kind, const std::string& path) {
    StepSpec s;
    s.kind = kind;
    s.index = next_index_++;
    s.path = path;
    return s;
  }

  StepSpec step(const nlohmann::json& j, const std::string& path) {
    if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
      throw ConfigError(where(path) +
                        ": expected an object with \"type\" (llm, tool, sequence, parallel, "
                        "branch, loop)");
    }
    std::string label = path;
    if (j.contains("id") && j["id"].is_string()) {
      label += " (\"" + j["id"].get<std::string>() + "\")";
    }
    JsonObjectReader r(j, where(label));
    const std::string type = r.required<std::string>("type");
    const std::string id = r.optional<std::string>("id", "");
    const bool subtask = r.optional<bool>("subtask", false);
    StepSpec s;
    if (type == "llm") {
      s = llm(r, path);
    } else if (type == "tool") {
      s = tool(r, path);
    } else if (type == "sequence") {
      s = sequence(r.raw("steps"), path + ".steps");
    } else if (type == "parallel") {
      s = parallel(r, path);
    } else if (type == "branch") {
      s = branch(r, path);
    } else if (type == "loop") {
      s = loop(r, path);
    } else {
      r.fail("type", "must be llm, tool, sequence, parallel, branch or loop, got \"" + type + "\"");
    }
    r.finish();
    s.path = label;
    s.subtask = subtask;
    has_subtask_ = has_subtask_ || subtask;
    if (!id.empty()) {
      if (!ids_.emplace(id, KnownStep{s.index, s.kind}).second) {
        r.fail("id", "\"" + id + "\" is used by two steps; give each step its own id");
      }
      s.id = id;
    }
    return s;
  }

  LengthDistribution length(JsonObjectReader& r, const std::string& key) {
    if (!r.has(key)) r.fail(key, "is required (a length distribution, e.g. 200)");
    return LengthDistribution::from_json(r.raw(key), r.context() + ": " + key, base_dir_);
  }

  Distribution seconds(JsonObjectReader& r, const std::string& key) {
    return Distribution::from_json(r.raw(key), r.context() + ": " + key, base_dir_, 0.0, false);
  }

  // The index of the deployment `key` names (the scenario's own when absent).
  int deployment(JsonObjectReader& r, const std::string& key, int absent) {
    if (!r.has(key)) {
      r.raw(key);
      return absent;
    }
    const std::string name = r.required<std::string>(key);
    std::vector<std::string> names;
    for (size_t d = 0; d < limits_.deployments.size(); ++d) {
      if (limits_.deployments[d].name == name) return static_cast<int>(d);
      names.push_back(limits_.deployments[d].name);
    }
    r.fail(key, "\"" + name + "\" is not a deployment of this scenario" +
                    did_you_mean(name, names) + "; it has " + join_quoted(names) +
                    " (add more under the scenario's \"deployments\")");
  }

  // A call on deployment d must fit its max_model_len with the least it can carry.
  void check_fits(JsonObjectReader& r, const std::string& key, int d, double least) {
    const DeploymentLimit& limit = limits_.deployments[static_cast<size_t>(d)];
    if (limit.max_model_len > 0 && system_prompt_tokens_ + least > limit.max_model_len) {
      const std::string knob =
          d == 0 ? "engine.max_model_len"
                 : "deployments[" + std::to_string(d - 1) + "].engine.max_model_len";
      r.fail(key, "cannot fit max_model_len " + std::to_string(limit.max_model_len) + " of \"" +
                      limit.name + "\": the system prompt (" +
                      std::to_string(system_prompt_tokens_) +
                      ") + the least new and output tokens (" + format_number(least) +
                      ") exceed it; shorten them or raise " + knob);
    }
  }

  StepSpec llm(JsonObjectReader& r, const std::string& path) {
    StepSpec s = node(StepKind::kLlm, path);
    s.llm.deployment = deployment(r, "deployment", 0);
    s.llm.fallback = deployment(r, "fallback", -1);
    if (s.llm.fallback == s.llm.deployment) {
      r.fail("fallback", "names the step's own deployment; name another one, or omit it");
    }
    s.llm.new_tokens = length(r, "new_tokens");
    s.llm.output_tokens = length(r, "output_tokens");
    s.llm.stream = r.optional<bool>("stream", true);
    s.llm.optional = r.optional<bool>("optional", false);
    if (r.has("cache")) {
      s.llm.cache = LlmCacheSpec::from_json(r.raw("cache"), r.context() + ": cache", base_dir_);
    }
    r.raw("cache");
    const double least = least_length(s.llm.new_tokens) + least_length(s.llm.output_tokens);
    least_llm_growth_ = std::min(least_llm_growth_, static_cast<int>(least));
    check_fits(r, "new_tokens", s.llm.deployment, least);
    if (s.llm.fallback >= 0) check_fits(r, "fallback", s.llm.fallback, least);
    return s;
  }

  StepSpec tool(JsonObjectReader& r, const std::string& path) {
    StepSpec s = node(StepKind::kTool, path);
    if (!r.has("latency_s")) r.fail("latency_s", "is required (seconds, a distribution)");
    s.tool.latency_s = seconds(r, "latency_s");
    s.tool.retry_latency_s = s.tool.latency_s;
    if (r.has("retry_latency_s")) s.tool.retry_latency_s = seconds(r, "retry_latency_s");
    r.raw("retry_latency_s");
    s.tool.failure_probability = r.optional<double>("failure_probability", 0.0);
    if (!(s.tool.failure_probability >= 0 && s.tool.failure_probability <= 1)) {
      r.fail("failure_probability",
             "must be in [0, 1], got " + format_number(s.tool.failure_probability));
    }
    s.tool.retries = r.non_negative_int("retries", 0);
    s.tool.result_tokens = length(r, "result_tokens");
    if (r.has("cache")) {
      s.tool.cache = ToolCacheSpec::from_json(r.raw("cache"), r.context() + ": cache", base_dir_);
    }
    r.raw("cache");
    return s;
  }

  StepSpec parallel(JsonObjectReader& r, const std::string& path) {
    const int limit = r.non_negative_int("max_concurrency", 0);
    StepSpec s = sequence(r.raw("steps"), path + ".steps");
    s.kind = StepKind::kParallel;
    s.max_concurrency = limit;
    return s;
  }

  // The index of the tool step `key` names, written before this step.
  int dependency(JsonObjectReader& r, const std::string& key) {
    const std::string id = r.required<std::string>(key);
    const auto it = ids_.find(id);
    if (it == ids_.end()) {
      r.fail(key, "names \"" + id + "\", which is no earlier step's id; name a tool step " +
                      "written before this one");
    }
    if (it->second.kind != StepKind::kTool) {
      r.fail(key, "names \"" + id + "\", which is not a tool step; only tools succeed or fail");
    }
    return it->second.index;
  }

  StepSpec branch(JsonObjectReader& r, const std::string& path) {
    StepSpec s = node(StepKind::kBranch, path);
    if (r.has("arms")) {
      for (const char* key : {"if_failed", "if_succeeded", "then", "else"}) {
        if (r.has(key)) r.fail(key, "is not allowed with \"arms\" (a branch by probability)");
      }
      probability_arms(r, s, path);
      return s;
    }
    if (r.has("if_failed") == r.has("if_succeeded")) {
      r.fail("if_failed",
             "or if_succeeded (a tool step's id), or arms (probabilities), is "
             "required, one of them");
    }
    s.run_if_failed = r.has("if_failed");
    s.condition_step = dependency(r, s.run_if_failed ? "if_failed" : "if_succeeded");
    r.raw(s.run_if_failed ? "if_succeeded" : "if_failed");
    s.children.push_back(sequence(r.raw("then"), path + ".then"));
    if (r.has("else")) {
      s.children.push_back(sequence(r.raw("else"), path + ".else"));
    } else {
      r.raw("else");
      s.children.push_back(node(StepKind::kSequence, path + ".else"));
    }
    return s;
  }

  void probability_arms(JsonObjectReader& r, StepSpec& s, const std::string& path) {
    const nlohmann::json& arms = r.raw("arms");
    if (!arms.is_array() || arms.empty()) r.fail("arms", "must be a non-empty array");
    double total = 0;
    for (size_t i = 0; i < arms.size(); ++i) {
      const std::string arm_path = path + ".arms[" + std::to_string(i) + "]";
      JsonObjectReader a(arms[i], where(arm_path));
      const double p = a.required<double>("probability");
      if (!(p >= 0 && p <= 1)) a.fail("probability", "must be in [0, 1], got " + format_number(p));
      total += p;
      s.arm_probability.push_back(p);
      s.children.push_back(sequence(a.raw("steps"), arm_path + ".steps"));
      a.finish();
    }
    if (total > 1 + 1e-9) {
      r.fail("arms", "probabilities sum to " + format_number(total) +
                         "; they must sum to at most 1 (the rest runs nothing)");
    }
  }

  StepSpec loop(JsonObjectReader& r, const std::string& path) {
    StepSpec s = node(StepKind::kLoop, path);
    if (!r.has("max_iterations")) {
      r.fail("max_iterations", "is required: a loop needs a cap (e.g. 5) so it ends");
    }
    s.max_iterations = r.positive_int("max_iterations");
    if (s.max_iterations > kMaxIterations) {
      r.fail("max_iterations", "must be at most " + std::to_string(kMaxIterations));
    }
    s.children.push_back(sequence(r.raw("steps"), path + ".steps"));
    if (r.has("until_succeeds")) {
      s.until_step = dependency(r, "until_succeeds");
      if (s.until_step < s.children[0].index) {
        r.fail("until_succeeds", "must name a tool step inside the loop's steps");
      }
    } else {
      r.raw("until_succeeds");
    }
    return s;
  }

  std::string prefix_;
  std::string base_dir_;
  const AgentLimits& limits_;
  int system_prompt_tokens_;
  std::map<std::string, KnownStep> ids_;
  int next_index_ = 0;
  int least_llm_growth_ = kMaxTokens;
  bool has_subtask_ = false;
};

ContextPolicySpec parse_context(const nlohmann::json& j, const std::string& path,
                                const std::string& base_dir) {
  ContextPolicySpec c;
  if (j.is_null()) return c;
  JsonObjectReader r(j, path);
  c.max_tool_result_tokens = r.non_negative_int("max_tool_result_tokens", 0);
  c.subtask_summary_tokens = r.non_negative_int("subtask_summary_tokens", 0);
  if (r.has("summarize")) {
    JsonObjectReader s(r.raw("summarize"), path + ".summarize");
    c.summarize_every = s.positive_int("every_llm_calls");
    c.summary_tokens = s.positive_int("summary_tokens");
    if (s.has("prompt_tokens")) {
      c.summary_prompt_tokens = LengthDistribution::from_json(
          s.raw("prompt_tokens"), path + ".summarize.prompt_tokens", base_dir);
    } else {
      s.raw("prompt_tokens");
    }
    s.finish();
  } else {
    r.raw("summarize");
  }
  r.finish();
  return c;
}

}  // namespace

WorkflowSpec WorkflowSpec::from_json(const nlohmann::json& j, const std::string& path,
                                     const std::string& base_dir, const AgentLimits& limits) {
  JsonObjectReader r(j, path);
  WorkflowSpec w;
  w.name = r.required<std::string>("name");
  w.weight = r.optional<double>("weight", 1.0);
  if (!(w.weight > 0) || !std::isfinite(w.weight)) {
    r.fail("weight", "must be > 0 (a share relative to the other workflows)");
  }
  w.system_prompt_tokens = r.non_negative_int("system_prompt_tokens", 0);
  if (r.has("tenant")) {
    const std::string tenant = r.required<std::string>("tenant");
    const auto it = std::find(limits.tenants.begin(), limits.tenants.end(), tenant);
    if (it == limits.tenants.end()) {
      r.fail("tenant", limits.tenants.empty()
                           ? "\"" + tenant + "\" needs service.tenants, which this scenario has not"
                           : "\"" + tenant + "\" is not in service.tenants" +
                                 did_you_mean(tenant, limits.tenants));
    }
    w.tenant = static_cast<int>(it - limits.tenants.begin());
  } else {
    r.raw("tenant");
  }
  if (w.system_prompt_tokens > kMaxTokens) r.fail("system_prompt_tokens", "must be <= 1e8");
  w.context = parse_context(r.raw("context"), path + ".context", base_dir);
  StepParser steps(path, base_dir, limits, w.system_prompt_tokens);
  w.root = steps.sequence(r.raw("steps"), "steps");
  w.num_steps = steps.steps();
  const ContextPolicySpec& c = w.context;
  const int least = static_cast<int>(
      std::min<int64_t>(int64_t{c.summarize_every} * steps.least_llm_growth(), kMaxTokens));
  if (c.summarize_every > 0 && c.summary_tokens >= least) {
    throw ConfigError(path + ".context.summarize: summary_tokens " +
                      std::to_string(c.summary_tokens) + " is not below the " +
                      std::to_string(least) + " tokens the history can hold after " +
                      std::to_string(c.summarize_every) +
                      " LLM calls; a summary must be shorter than what it replaces (lower "
                      "summary_tokens or raise every_llm_calls)");
  }
  if (steps.has_subtask() && c.subtask_summary_tokens == 0) {
    throw ConfigError(path + ".context.subtask_summary_tokens: is required by the steps marked " +
                      "\"subtask\" (tokens of the last answer a subtask's end keeps)");
  }
  r.finish();
  return w;
}

}  // namespace servesim
