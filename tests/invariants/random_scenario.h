// random_scenario(): a random but valid scenario for the property test — a catalog model and
// GPU, TP/PP/DP, vLLM engine flags (chunked prefill, prefix caching, max_num_seqs, token
// budget, max_model_len, batching policy, queue order, async scheduling), a router, an arrival
// process (open, closed, stepped) or a bundled trace, length distributions, shared prefixes and
// multi-turn sessions, and the service path above the engine (none, vLLM's API server, or a drawn
// network, gateway with rate limits and a timeout, API server, stages, client timeouts and retries,
// a client machine, tenants with priorities and quotas), and agent workflows (llm, tool, parallel,
// branch, loop and subtask steps, caches, context policies) on one or two deployments. The
// same seed gives the same scenario on every platform (servesim's own Rng).
// Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

namespace servesim::testing {

// What the checks need to know of a drawn scenario beyond its JSON.
struct DrawnScenario {
  nlohmann::json scenario;
  bool requests_known = false;  // open loop or trace: the request stream does not depend on
                                // the system, so an independent source replays it exactly
  uint64_t num_requests = 0;    // requests the run issues; 0 when a schedule decides (stepped)
  bool client_machine = false;  // service.client.machine drawn: reports leave the last-token order
  bool agent = false;           // an agent workload: sessions of LLM and tool calls
  uint64_t sessions = 0;        // agent: the sessions it starts (a cap when stepped)
  bool stepped_sessions = false;  // agent: stepped users, whose schedule may end it earlier
};

DrawnScenario random_scenario(uint64_t seed);

}  // namespace servesim::testing
