// ExpertLoad: how the routed tokens of a MoE layer spread over the ranks of an
// expert-parallel group, and the share the busiest rank receives — the rank that sets the
// step time, since every rank waits for the slowest one at the combine.
//
// Popularity: expert i (1 = most popular) is chosen with probability proportional to
// 1 / i^s (s = 0: uniform routing). A token picks top_k distinct experts, so no expert can
// take more than 1/top_k of the assignments; shares above that are capped and the excess
// spread over the others in proportion (water-filling). Experts sit on ranks without regard
// to popularity (vLLM's linear placement over expert ids that carry no popularity order), so
// the rank holding the hottest expert expects that expert's share plus the mean share of
// experts_per_rank - 1 others. Deterministic closed form: no random draws.
//
// Immutable value; thread-safe. Invariants: 1/ep <= busiest_rank_share() <= 1.
#pragma once

#include <vector>

namespace servesim {

class ExpertLoad {
 public:
  // REQUIRES: 1 <= top_k <= num_experts, ep >= 1 divides num_experts, zipf_exponent >= 0
  // (ParallelConfig::validate checks these for a deployment).
  ExpertLoad(int num_experts, int top_k, int ep, double zipf_exponent);

  // Fraction of all routed token-expert assignments, per expert, most popular first.
  const std::vector<double>& expert_shares() const { return shares_; }
  // Fraction of all assignments the busiest rank receives; 1 / ep under uniform routing.
  double busiest_rank_share() const { return busiest_share_; }
  // busiest_rank_share() x ep: 1 when balanced.
  double imbalance() const { return busiest_share_ * ep_; }

 private:
  std::vector<double> shares_;
  int ep_ = 1;
  double busiest_share_ = 1;
};

}  // namespace servesim
