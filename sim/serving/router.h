// Router: picks the replica (data-parallel copy) each arriving request goes to.
//
// Policies:
//   round_robin          replicas in turn
//   random               uniform, from the run's seeded Rng stream
//   least_outstanding    fewest unfinished requests (ties: lowest index)
//   least_kv             lowest KV-cache usage, then fewest unfinished requests
//   power_of_two         two distinct random replicas, the one with fewer unfinished requests
//   prefix_affinity      requests of one session or shared-prefix group stick to one replica
//                        (hash of the key), so their prefix-cache hits stay local; requests
//                        with neither go to the least outstanding replica
//
// Owns its Rng stream; reads replica load through ReplicaLoad views the caller passes in.
// Deterministic for a seed. Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "sim/core/rng.h"
#include "sim/workload/request_source.h"

namespace servesim {

enum class RouterPolicy {
  kRoundRobin,
  kRandom,
  kLeastOutstanding,
  kLeastKv,
  kPowerOfTwo,
  kPrefixAffinity
};

// Throws ConfigError naming `field` and the accepted names.
RouterPolicy parse_router_policy(std::string_view name, std::string_view field);
std::string_view router_policy_name(RouterPolicy policy);

struct ReplicaLoad {
  int64_t outstanding = 0;  // requests routed there and not finished
  double kv_usage = 0;      // fraction of KV blocks in use, 0..1
};

class Router {
 public:
  Router(RouterPolicy policy, uint64_t seed);

  // REQUIRES: !replicas.empty(). Returns an index into replicas.
  size_t route(const RequestSpec& request, std::span<const ReplicaLoad> replicas);

  RouterPolicy policy() const { return policy_; }
  // Whether route() reads the replicas' load; callers skip gathering it when not.
  bool reads_load() const {
    return policy_ != RouterPolicy::kRoundRobin && policy_ != RouterPolicy::kRandom;
  }

 private:
  static size_t least_outstanding(std::span<const ReplicaLoad> replicas);

  RouterPolicy policy_;
  Rng rng_;
  size_t next_ = 0;
};

}  // namespace servesim
