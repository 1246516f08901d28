#include "sim/serving/router.h"

#include <algorithm>
#include <string>

#include "base/mix64.h"
#include "models/config_error.h"
#include "models/name_match.h"

namespace servesim {
namespace {

struct PolicyName {
  RouterPolicy policy;
  std::string_view name;
};

constexpr PolicyName kPolicies[] = {
    {RouterPolicy::kRoundRobin, "round_robin"},
    {RouterPolicy::kRandom, "random"},
    {RouterPolicy::kLeastOutstanding, "least_outstanding"},
    {RouterPolicy::kLeastKv, "least_kv"},
    {RouterPolicy::kPowerOfTwo, "power_of_two"},
    {RouterPolicy::kPrefixAffinity, "prefix_affinity"},
};

// A fixed 64-bit mix: affinity must not depend on std::hash.
uint64_t mix(uint64_t x) {
  return mix64(x + kGoldenGamma);
}

}  // namespace

RouterPolicy parse_router_policy(std::string_view name, std::string_view field) {
  std::string lower = servesim::lower(name);
  std::replace(lower.begin(), lower.end(), '-', '_');
  std::string names;
  for (const PolicyName& p : kPolicies) {
    if (lower == p.name) return p.policy;
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  }
  throw ConfigError(std::string(field) + ": unknown router '" + std::string(name) +
                    "'; use one of " + names);
}

std::string_view router_policy_name(RouterPolicy policy) {
  for (const PolicyName& p : kPolicies) {
    if (p.policy == policy) return p.name;
  }
  return "round_robin";
}

Router::Router(RouterPolicy policy, uint64_t seed) : policy_(policy), rng_(seed) {}

size_t Router::least_outstanding(std::span<const ReplicaLoad> replicas) {
  size_t best = 0;
  for (size_t i = 1; i < replicas.size(); ++i) {
    if (replicas[i].outstanding < replicas[best].outstanding) best = i;
  }
  return best;
}

size_t Router::route(const RequestSpec& request, std::span<const ReplicaLoad> replicas) {
  const size_t n = replicas.size();
  if (n == 1) return 0;
  switch (policy_) {
    case RouterPolicy::kRoundRobin:
      return next_++ % n;
    case RouterPolicy::kRandom:
      return static_cast<size_t>(rng_.uniform_int(0, static_cast<int64_t>(n) - 1));
    case RouterPolicy::kLeastOutstanding:
      return least_outstanding(replicas);
    case RouterPolicy::kLeastKv: {
      size_t best = 0;
      for (size_t i = 1; i < n; ++i) {
        const ReplicaLoad& a = replicas[i];
        const ReplicaLoad& b = replicas[best];
        if (a.kv_usage < b.kv_usage ||
            (a.kv_usage == b.kv_usage && a.outstanding < b.outstanding)) {
          best = i;
        }
      }
      return best;
    }
    case RouterPolicy::kPowerOfTwo: {
      const size_t a = static_cast<size_t>(rng_.uniform_int(0, static_cast<int64_t>(n) - 1));
      size_t b = static_cast<size_t>(rng_.uniform_int(0, static_cast<int64_t>(n) - 2));
      if (b >= a) ++b;
      return replicas[b].outstanding < replicas[a].outstanding ? b : a;
    }
    case RouterPolicy::kPrefixAffinity: {
      // An agent session's calls and a multi-turn session's later turns share its context;
      // otherwise the system prompt group is what requests share.
      if (request.agent_session != 0) return mix(request.agent_session ^ 0xa6e7) % n;
      if (request.session_turns > 1) return mix(request.session ^ 0x5e55) % n;
      if (request.shared_prefix_tokens > 0) return mix(request.prefix_group) % n;
      return least_outstanding(replicas);
    }
  }
  return 0;
}

}  // namespace servesim
