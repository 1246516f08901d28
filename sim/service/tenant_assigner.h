// TenantAssigner: which tenant each request belongs to, deterministically from the seed.
//
//   open loop (and traces): each new request draws its tenant by share, from its own stream
//     forked off the seed, so a run without tenants and every other draw of a run with them
//     are untouched; a multi-turn session's later turns keep its first turn's tenant;
//   closed loop / stepped: the clients are partitioned by share once (largest-remainder
//     counts, exact), so a tenant's virtual users stay that tenant's for the whole run. The
//     partition interleaves the tenants (client c goes to the tenant furthest behind its share
//     of the first c + 1 clients), so a stepped run's smaller steps mix them too.
//
// A request whose workload chose its tenant (RequestSpec.tenant_chosen: an agent workflow
// names one) keeps it and draws nothing.
//
// It lives in the service path rather than in the workload: tenants are the service's notion
// (an API key at the gateway), the path sees every request when its client sends it and
// before any limit or the engine does, and RequestSpec.tenant / .priority are set there once,
// so the workload's sources stay as they are.
// Memory: the client partition plus one entry per open-loop multi-turn session in progress.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/core/rng.h"
#include "sim/service/tenant_spec.h"
#include "sim/workload/request_source.h"
#include "sim/workload/workload.h"

namespace servesim {

class TenantAssigner {
 public:
  // clients: closed-loop / stepped clients to partition (partitioned_clients()); 0 for an
  // open loop. REQUIRES: tenants non-empty, shares summing to 1.
  TenantAssigner(const std::vector<TenantSpec>& tenants, uint32_t clients, uint64_t seed);

  // The tenant of `request`, sent for the first time (call once per request, not per retry).
  uint32_t assign(const RequestSpec& request);

  // Tenant of each of `clients` clients: exact largest-remainder counts, interleaved.
  static std::vector<uint32_t> partition(const std::vector<double>& shares, uint32_t clients);
  // The clients a workload partitions: closed loop its clients, stepped its largest step, an
  // open loop none.
  static uint32_t partitioned_clients(const WorkloadSpec& workload);

 private:
  uint32_t draw();

  std::vector<double> cumulative_;  // shares summed, per tenant
  std::vector<uint32_t> by_client_;
  Rng rng_;
  std::unordered_map<uint64_t, uint32_t> sessions_;  // open loop: session -> tenant
};

}  // namespace servesim
