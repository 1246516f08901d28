#include "sim/service/tenant_assigner.h"

#include <algorithm>
#include <cmath>

namespace servesim {

TenantAssigner::TenantAssigner(const std::vector<TenantSpec>& tenants, uint32_t clients,
                               uint64_t seed)
    : rng_(Rng(seed).fork(0x74656e616e74)) {
  std::vector<double> shares;
  double sum = 0;
  for (const TenantSpec& t : tenants) {
    shares.push_back(t.share);
    sum += t.share;
    cumulative_.push_back(sum);
  }
  if (clients > 0) by_client_ = partition(shares, clients);
}

uint32_t TenantAssigner::draw() {
  const double u = rng_.uniform();
  for (size_t t = 0; t + 1 < cumulative_.size(); ++t) {
    if (u < cumulative_[t]) return static_cast<uint32_t>(t);
  }
  return static_cast<uint32_t>(cumulative_.size() - 1);  // shares sum to 1 within 1e-9
}

uint32_t TenantAssigner::assign(const RequestSpec& request) {
  if (request.tenant_chosen) return request.tenant;
  if (!by_client_.empty()) return by_client_[request.client % by_client_.size()];
  if (request.session_turns <= 1) return draw();
  if (request.turn == 0) return sessions_[request.session] = draw();
  const auto it = sessions_.find(request.session);
  const uint32_t tenant = it != sessions_.end() ? it->second : draw();
  if (request.turn + 1 >= request.session_turns && it != sessions_.end()) sessions_.erase(it);
  return tenant;
}

std::vector<uint32_t> TenantAssigner::partition(const std::vector<double>& shares,
                                                uint32_t clients) {
  const size_t n = shares.size();
  // Largest remainder: floor(share × clients) each, the seats left to the largest fractions
  // (ties to the earlier tenant).
  std::vector<uint32_t> count(n);
  std::vector<size_t> order(n);
  uint32_t seated = 0;
  for (size_t t = 0; t < n; ++t) {
    count[t] = static_cast<uint32_t>(std::floor(shares[t] * clients));
    seated += count[t];
    order[t] = t;
  }
  const auto fraction = [&](size_t t) { return shares[t] * clients - count[t]; };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return fraction(a) > fraction(b); });
  for (size_t i = 0; seated < clients; i = (i + 1) % n, ++seated) ++count[order[i]];
  // Interleave: each client to the tenant furthest behind its share of the clients so far.
  std::vector<uint32_t> by_client(clients);
  std::vector<uint32_t> given(n, 0);
  for (uint32_t c = 0; c < clients; ++c) {
    size_t best = n;
    double best_deficit = 0;
    for (size_t t = 0; t < n; ++t) {
      if (given[t] == count[t]) continue;
      const double deficit = static_cast<double>(count[t]) * (c + 1) / clients - given[t];
      if (best == n || deficit > best_deficit) {
        best = t;
        best_deficit = deficit;
      }
    }
    by_client[c] = static_cast<uint32_t>(best);
    ++given[best];
  }
  return by_client;
}

uint32_t TenantAssigner::partitioned_clients(const WorkloadSpec& workload) {
  switch (workload.kind) {
    case WorkloadKind::kClosedLoop:
      return static_cast<uint32_t>(std::max(0, workload.clients));
    case WorkloadKind::kStepped:
      return workload.steps.empty()
                 ? 0
                 : static_cast<uint32_t>(std::max(
                       0, *std::max_element(workload.steps.begin(), workload.steps.end())));
    default:
      return 0;
  }
}

}  // namespace servesim
