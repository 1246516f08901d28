#include "plan/candidate_ranking.h"

#include <algorithm>

namespace servesim {
namespace {

int rank_group(const PlanCandidate& c) {
  switch (c.status) {
    case CandidateStatus::kFeasible:
      return c.verified ? 0 : 1;
    case CandidateStatus::kDominated:
      return 2;
    case CandidateStatus::kOverLimits:
      return 3;
    case CandidateStatus::kSloUnreachable:
      return 4;
    case CandidateStatus::kDoesNotFit:
      return 5;
    case CandidateStatus::kInterrupted:
      return 6;
    case CandidateStatus::kInvalid:
      break;
  }
  return 7;
}

}  // namespace

bool rank_before(const PlanCandidate& a, const PlanCandidate& b) {
  const int ga = rank_group(a);
  const int gb = rank_group(b);
  if (ga != gb) return ga < gb;
  if (ga <= 1) {
    if (a.cost_per_hour != b.cost_per_hour) return a.cost_per_hour < b.cost_per_hour;
    if (a.headroom != b.headroom) return a.headroom > b.headroom;
    return a.total_gpus < b.total_gpus;
  }
  return a.gap < b.gap;
}

void sort_by_rank(PlanState& state) {
  const std::vector<PlanCandidate>& candidates = state.candidates;
  std::stable_sort(state.order.begin(), state.order.end(),
                   [&](size_t a, size_t b) { return rank_before(candidates[a], candidates[b]); });
}

void rank_candidates(PlanState& state) {
  for (const PlanCandidate& c : state.candidates) {
    state.report.simulations += static_cast<uint64_t>(c.evaluations);
  }
  sort_by_rank(state);
  for (size_t i : state.order) state.report.candidates.push_back(state.candidates[i]);
}

}  // namespace servesim
