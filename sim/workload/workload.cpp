#include "sim/workload/workload.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "models/config_error.h"
#include "models/json_file.h"
#include "models/json_object_reader.h"
#include "models/name_match.h"
#include "sim/core/csv_line.h"
#include "sim/workload/replay_source.h"
#include "sim/workload/synthetic_source.h"
#include "sim/workload/trace_source.h"

namespace servesim {

namespace {

// Beyond any benchmark's dataset (aiperf and genai-perf default to 100); the source keeps one
// length per prompt, 4 MB at this cap.
constexpr int64_t kMaxDistinctPrompts = 1'000'000;

// Messages read "<name>: arrival.rate_qps: ...": the workload's name, then the field path.
std::string field(const std::string& name, const std::string& path) {
  return name + ": " + path;
}

double positive_number(JsonObjectReader& r, const std::string& key) {
  const double v = r.required<double>(key);
  if (!(v > 0.0) || !std::isfinite(v)) r.fail(key, "must be > 0, got " + format_number(v));
  return v;
}

void parse_closed(WorkloadSpec& w, const nlohmann::json& j, const std::string& name,
                  const std::string& base_dir, bool stepped) {
  JsonObjectReader r(j, field(name, "arrival"));
  r.required<std::string>("type");
  if (stepped) {
    w.kind = WorkloadKind::kStepped;
    const nlohmann::json& steps = r.raw("steps");
    if (!steps.is_array() || steps.empty()) {
      r.fail("steps", "must be a non-empty array of client counts, e.g. [1, 2, 4, 8, 16]");
    }
    for (const auto& s : steps) {
      if (!s.is_number_integer() || s.get<int64_t>() < 0 || s.get<int64_t>() > 1'000'000) {
        r.fail("steps", "must hold client counts in [0, 1000000], got " + s.dump());
      }
      w.steps.push_back(s.get<int>());
    }
    if (*std::max_element(w.steps.begin(), w.steps.end()) == 0) {
      r.fail("steps", "must have at least one step with clients");
    }
    w.step_duration_s = positive_number(r, "step_duration_s");
    w.duration_s = w.step_duration_s * static_cast<double>(w.steps.size());
  } else {
    w.kind = WorkloadKind::kClosedLoop;
    const int64_t clients = r.required<int64_t>("clients");
    if (clients < 1 || clients > 1'000'000) {
      r.fail("clients", "must be in [1, 1000000], got " + std::to_string(clients));
    }
    w.clients = static_cast<int>(clients);
    w.ramp_up_s = r.optional<double>("ramp_up_s", 0.0);
    if (!(w.ramp_up_s >= 0) || !std::isfinite(w.ramp_up_s)) {
      r.fail("ramp_up_s", "must be a finite number >= 0");
    }
  }
  if (r.has("think_time_s")) {
    w.think_time_s = Distribution::from_json(
        r.raw("think_time_s"), field(name, "arrival.think_time_s"), base_dir, 0.0, false);
  } else {
    r.raw("think_time_s");
  }
  r.finish();
}

TraceSpec parse_trace(const nlohmann::json& j, const std::string& name,
                      const std::string& base_dir) {
  JsonObjectReader r(j, field(name, "trace"));
  TraceSpec t;
  t.path = resolve_path(r.required<std::string>("path"), base_dir);
  try {
    t.options.format = trace_format_from_string(r.optional<std::string>("format", "auto"));
  } catch (const ConfigError& e) {
    throw ConfigError(name + ": " + e.what());
  }
  t.options.time_scale = r.optional<double>("time_scale", 1.0);
  if (!(t.options.time_scale > 0.0) || !std::isfinite(t.options.time_scale)) {
    r.fail("time_scale",
           "must be > 0 (0.5 replays twice as fast), got " + format_number(t.options.time_scale));
  }
  t.options.skip_zero_output = r.optional<bool>("skip_zero_output", false);
  r.finish();
  return t;
}

// distinct_prompts: a benchmark's small dataset of whole prompts; a prompt it repeats shares
// every token with the last time, so it cannot also carry a shared prefix or a session.
void parse_distinct_prompts(WorkloadSpec& w, JsonObjectReader& r) {
  if (!r.has("distinct_prompts")) {
    r.raw("distinct_prompts");
    return;
  }
  const int64_t n = r.required<int64_t>("distinct_prompts");
  if (n < 1 || n > kMaxDistinctPrompts) {
    r.fail("distinct_prompts",
           "must be a whole number of prompts in [1, 1000000] (leave it "
           "out for a new prompt every request), got " +
               std::to_string(n));
  }
  for (const char* key : {"shared_prefix", "multi_turn"}) {
    if (r.has(key)) {
      r.fail("distinct_prompts",
             std::string("is not allowed with \"") + key +
                 "\" (each of the N prompts is sent whole, the same every time)");
    }
  }
  w.distinct_prompts = static_cast<int>(n);
}

// An agent workload: sessions start by the arrival (open loop, or closed-loop users); the
// workflows stay JSON for sim/agent, which knows the deployment they run on.
WorkloadSpec parse_agent(WorkloadSpec& w, JsonObjectReader& r, const std::string& name,
                         const std::string& base_dir, bool has_duration) {
  for (const char* key : {"prompt_tokens", "output_tokens", "shared_prefix", "multi_turn",
                          "distinct_prompts", "num_requests"}) {
    if (r.has(key)) {
      r.fail(key,
             "is not allowed with \"agent\" (workflow steps set lengths; agent.sessions "
             "caps the sessions)");
    }
    r.raw(key);
  }
  if (!r.has("arrival")) {
    r.fail("arrival", "is required with \"agent\": how sessions start (poisson, closed, ...)");
  }
  const nlohmann::json& arrival = r.raw("arrival");
  const std::string type =
      arrival.is_object() && arrival.contains("type") && arrival["type"].is_string()
          ? arrival["type"].get<std::string>()
          : "";
  if (type == "closed" || type == "stepped") {
    // Stepped: users, each running sessions while its step count includes it.
    parse_closed(w, arrival, name, base_dir, type == "stepped");
    if (type == "stepped" && has_duration) {
      r.fail("duration_s",
             "is not allowed with a stepped arrival (it lasts steps x step_duration_s)");
    }
    has_duration = has_duration || type == "stepped";
    w.agent_closed_loop = true;
  } else {
    w.arrival = ArrivalProcess::from_json(arrival, field(name, "arrival"));
  }
  w.kind = WorkloadKind::kAgent;
  const nlohmann::json& agent = r.raw("agent");
  if (!agent.is_object()) r.fail("agent", "must be an object (see docs/agents.md)");
  if (!has_duration && !agent.contains("sessions")) {
    throw ConfigError(field(name, "agent.sessions") +
                      ": give agent.sessions or duration_s so the workload ends");
  }
  w.agent = agent;
  w.agent_base_dir = base_dir;
  r.finish();
  return w;
}

}  // namespace

WorkloadSpec WorkloadSpec::from_json(const nlohmann::json& j, const std::string& base_dir,
                                     const std::string& name) {
  JsonObjectReader r(j, name);
  WorkloadSpec w;
  r.optional<std::string>("name", "");
  r.optional<std::string>("description", "");
  const int64_t seed = r.optional<int64_t>("seed", 0);
  if (seed < 0) r.fail("seed", "must be >= 0, got " + std::to_string(seed));
  w.seed = static_cast<uint64_t>(seed);
  const int64_t num_requests = r.optional<int64_t>("num_requests", 0);
  if (num_requests < 0) {
    r.fail("num_requests", "must be >= 0 (0 = no cap), got " + std::to_string(num_requests));
  }
  w.num_requests = static_cast<uint64_t>(num_requests);
  const bool has_duration = r.has("duration_s");
  if (has_duration) w.duration_s = positive_number(r, "duration_s");
  r.raw("duration_s");

  if (r.has("trace")) {
    for (const char* key : {"arrival", "prompt_tokens", "output_tokens", "shared_prefix",
                            "multi_turn", "distinct_prompts"}) {
      if (r.has(key)) {
        r.fail(key, "is not allowed with \"trace\" (the trace supplies arrivals and lengths)");
      }
    }
    w.kind = WorkloadKind::kTrace;
    w.trace = parse_trace(r.raw("trace"), name, base_dir);
    for (const char* key : {"arrival", "prompt_tokens", "output_tokens", "shared_prefix",
                            "multi_turn", "distinct_prompts"}) {
      r.raw(key);
    }
    r.finish();
    return w;
  }
  r.raw("trace");
  if (r.has("agent")) return parse_agent(w, r, name, base_dir, has_duration);
  r.raw("agent");

  if (!r.has("arrival")) {
    r.fail("arrival", "is required (or give \"trace\" to replay a trace file)");
  }
  const nlohmann::json& arrival = r.raw("arrival");
  if (!arrival.is_object() || !arrival.contains("type") || !arrival["type"].is_string()) {
    throw ConfigError(field(name, "arrival") +
                      ": expected an object with \"type\" (poisson, gamma, constant, onoff, "
                      "closed, stepped)");
  }
  const std::string type = arrival["type"].get<std::string>();
  if (type == "closed" || type == "stepped") {
    parse_closed(w, arrival, name, base_dir, type == "stepped");
    if (type == "stepped" && has_duration) {
      r.fail("duration_s",
             "is not allowed with a stepped arrival (it lasts steps x "
             "step_duration_s)");
    }
  } else {
    w.kind = WorkloadKind::kOpenLoop;
    w.arrival = ArrivalProcess::from_json(arrival, field(name, "arrival"));
  }
  if (w.kind != WorkloadKind::kStepped && w.num_requests == 0 && !has_duration) {
    throw ConfigError(field(name, "num_requests") +
                      ": give num_requests or duration_s so the workload ends");
  }
  if (!r.has("prompt_tokens")) r.fail("prompt_tokens", "is required (a length distribution)");
  if (!r.has("output_tokens")) r.fail("output_tokens", "is required (a length distribution)");
  w.prompt_tokens =
      LengthDistribution::from_json(r.raw("prompt_tokens"), field(name, "prompt_tokens"), base_dir);
  w.output_tokens =
      LengthDistribution::from_json(r.raw("output_tokens"), field(name, "output_tokens"), base_dir);

  if (r.has("shared_prefix")) {
    JsonObjectReader p(r.raw("shared_prefix"), field(name, "shared_prefix"));
    SharedPrefixSpec s;
    const int64_t groups = p.required<int64_t>("groups");
    const int64_t tokens = p.required<int64_t>("tokens");
    if (groups < 1 || groups > 1'000'000'000) {
      p.fail("groups", "must be in [1, 1e9], got " + std::to_string(groups));
    }
    if (tokens < 0 || tokens > 100'000'000) {
      p.fail("tokens", "must be in [0, 1e8], got " + std::to_string(tokens));
    }
    s.groups = static_cast<int>(groups);
    s.tokens = static_cast<int>(tokens);
    p.finish();
    w.shared_prefix = s;
  } else {
    r.raw("shared_prefix");
  }

  if (r.has("multi_turn")) {
    JsonObjectReader m(r.raw("multi_turn"), field(name, "multi_turn"));
    MultiTurnSpec s;
    if (!m.has("turns")) m.fail("turns", "is required (turns per session, a distribution)");
    if (!m.has("user_tokens")) {
      m.fail("user_tokens", "is required (new tokens the user adds each later turn)");
    }
    s.turns =
        LengthDistribution::from_json(m.raw("turns"), field(name, "multi_turn.turns"), base_dir);
    s.user_tokens = LengthDistribution::from_json(m.raw("user_tokens"),
                                                  field(name, "multi_turn.user_tokens"), base_dir);
    if (m.has("think_time_s")) {
      s.think_time_s = Distribution::from_json(
          m.raw("think_time_s"), field(name, "multi_turn.think_time_s"), base_dir, 0.0, false);
    } else {
      m.raw("think_time_s");
    }
    m.finish();
    w.multi_turn = s;
  } else {
    r.raw("multi_turn");
  }
  parse_distinct_prompts(w, r);
  r.finish();
  return w;
}

WorkloadSpec WorkloadSpec::load(const std::string& path) {
  const nlohmann::json j = load_json_file(path);
  const std::string base_dir = std::filesystem::path(path).parent_path().string();
  return from_json(j, base_dir, path);
}

int WorkloadSpec::step_at(double time_s) const {
  if (steps.empty()) return 0;
  const double k = std::floor(time_s / step_duration_s);
  return static_cast<int>(std::clamp(k, 0.0, static_cast<double>(steps.size() - 1)));
}

std::optional<double> WorkloadSpec::client_send_time(uint32_t client, double time_s) const {
  if (steps.empty()) return time_s;
  for (size_t k = static_cast<size_t>(step_at(time_s)); k < steps.size(); ++k) {
    if (static_cast<int>(client) < steps[k]) {
      return std::max(time_s, static_cast<double>(k) * step_duration_s);
    }
  }
  return std::nullopt;
}

std::unique_ptr<RequestSource> make_request_source(const WorkloadSpec& spec) {
  if (spec.replay) return std::make_unique<ReplaySource>(*spec.replay, spec.seed);
  if (spec.kind == WorkloadKind::kAgent) {
    throw ConfigError(
        "workload.agent: agent workloads run in the simulator only (servesim simulate)");
  }
  if (spec.kind == WorkloadKind::kTrace) return std::make_unique<TraceSource>(spec);
  return std::make_unique<SyntheticSource>(spec);
}

}  // namespace servesim
