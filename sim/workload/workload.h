// WorkloadSpec: a validated workload read from JSON, and make_request_source() which turns
// it into the RequestSource a simulation pulls from. Four kinds, by "arrival.type" or the
// presence of "trace":
//   open loop  poisson | gamma | constant | onoff  — arrivals independent of the system
//   closed     N clients, each sends, waits for the answer, thinks, sends again
//   stepped    closed loop whose client count follows a schedule (1, 2, 4, ... each held
//              step_duration_s): the load test engineers run before launch; requests carry
//              their step_index so metrics can be reported step by step
//   trace      replay of a recorded trace (see sim/workload/trace_reader.h)
//   agent      sessions of agent workflows (LLM and tool steps) started by an open-loop
//              arrival or closed-loop users; "agent" holds the workflows, which sim/agent
//              parses and runs (this layer keeps them as JSON: see docs/agents.md)
// Options on top of synthetic kinds: shared_prefix (K groups sharing an L-token system
// prompt), multi_turn (sessions whose context grows turn by turn) and distinct_prompts (every
// request sends one of N fixed prompts, as a benchmark tool cycling through a small dataset
// does). docs/workloads.md has the schema and an example of each.
//
// Parsing is strict: unknown keys name the nearest valid one, missing required keys are
// named, every number is range-checked; all as ConfigError.
// Randomness: everything derives from `seed` through Rng::fork, one stream per purpose, so
// for example the lengths of request i do not depend on the arrival process.
// Thread-safety: a WorkloadSpec is immutable after parsing and may be shared; each source
// made from it is independent.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/workload/arrival_process.h"
#include "sim/workload/distribution.h"
#include "sim/workload/length_distribution.h"
#include "sim/workload/request_source.h"
#include "sim/workload/trace_reader.h"

namespace servesim {

struct ReplaySpec;  // sim/workload/replay_source.h

enum class WorkloadKind { kOpenLoop, kClosedLoop, kStepped, kTrace, kAgent };

struct SharedPrefixSpec {
  int groups = 1;  // distinct system prompts; each request picks one uniformly
  int tokens = 0;  // tokens of each system prompt
};

struct MultiTurnSpec {
  LengthDistribution turns = LengthDistribution::fixed(1);        // turns per session
  LengthDistribution user_tokens = LengthDistribution::fixed(1);  // new tokens per later turn
  Distribution think_time_s = Distribution::fixed(0.0);  // seconds between answer and next turn
};

struct TraceSpec {
  std::string path;  // resolved against the workload file's folder
  TraceOptions options;
};

struct WorkloadSpec {
  static constexpr double kUnlimited = std::numeric_limits<double>::infinity();

  WorkloadKind kind = WorkloadKind::kOpenLoop;
  ArrivalProcess arrival = ArrivalProcess::poisson(1.0);  // open loop only
  int clients = 0;                                        // closed loop: concurrent clients
  // Closed loop: client c sends its first request at c * ramp_up_s / clients, as load tools
  // ramp users up; 0 starts every client at once (and identical requests then stay in
  // lock-step, which real clients' jitter breaks up).
  double ramp_up_s = 0;
  std::vector<int> steps;                                           // stepped: clients per step
  double step_duration_s = 0.0;                                     // stepped: seconds per step
  Distribution think_time_s = Distribution::fixed(0.0);             // closed/stepped: seconds
  LengthDistribution prompt_tokens = LengthDistribution::fixed(1);  // excludes shared prefix
  LengthDistribution output_tokens = LengthDistribution::fixed(1);
  std::optional<SharedPrefixSpec> shared_prefix;
  std::optional<MultiTurnSpec> multi_turn;
  // Requests draw their prompt uniformly, with replacement, from this many fixed prompts, each
  // of one prompt_tokens draw (aiperf's and genai-perf's --num-dataset-entries, 100 unless
  // set): a repeated prompt hits the prefix cache whole. 0: every prompt is new. Not with
  // shared_prefix or multi_turn.
  int distinct_prompts = 0;
  std::optional<TraceSpec> trace;
  // Set by `simulate --replay` (not from JSON): the measured run's requests replace whatever
  // the fields above describe, and make_request_source plays them (seed draws open-loop gaps).
  std::shared_ptr<const ReplaySpec> replay;
  // Agent workloads: the "agent" object as written, parsed by sim/agent (AgentSpec) with
  // agent_base_dir resolving its relative paths; arrival is open loop or closed (clients
  // are the users, think_time_s their pause between sessions).
  nlohmann::json agent;
  std::string agent_base_dir;
  bool agent_closed_loop = false;
  uint64_t num_requests = 0;       // requests issued in all (every turn counts); 0 = no cap
  double duration_s = kUnlimited;  // no arrivals at or after this; seconds
  uint64_t seed = 0;

  // base_dir resolves relative paths (empirical CSVs, traces); name prefixes messages.
  // Throws ConfigError.
  static WorkloadSpec from_json(const nlohmann::json& j, const std::string& base_dir,
                                const std::string& name = "workload");
  // Loads and parses a workload file; messages start with the file's path.
  static WorkloadSpec load(const std::string& path);

  // Step a request arriving at time_s belongs to (stepped schedules, of requests or of agent
  // users; 0 otherwise).
  int step_at(double time_s) const;
  // When a stepped schedule's client `client` may send (or start a session) at or after
  // time_s: in the first step from time_s's on whose count includes it; nullopt when no later
  // step does. time_s itself without a schedule.
  std::optional<double> client_send_time(uint32_t client, double time_s) const;
};

// A fresh source; several made from one spec produce identical request streams.
// Throws ConfigError (e.g. a trace file that cannot be opened, or an agent workload, whose
// source sim/agent makes: make_agent_or_request_source in sim/agent/agent_workload.h).
std::unique_ptr<RequestSource> make_request_source(const WorkloadSpec& spec);

}  // namespace servesim
