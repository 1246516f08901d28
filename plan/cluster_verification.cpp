#include "plan/cluster_verification.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "plan/candidate_outcome.h"
#include "plan/candidate_ranking.h"

namespace servesim {
namespace {

constexpr int kExtraVerifyReplicas = 2;         // replicas added when verification misses
constexpr uint64_t kMaxVerifyRequestScale = 8;  // verification runs <= 8x --requests

void verify_candidate(PlanState& state, size_t i) {
  const PlanOptions& o = state.options;
  PlanCandidate& c = state.candidates[i];
  const int first = c.replicas;
  std::string missed;
  for (int r = first; r <= first + kExtraVerifyReplicas; ++r) {
    PlanCandidate trial = c;
    trial.replicas = r;
    trial.total_gpus = r * c.gpus_per_replica;
    trial.cost_per_hour = trial.total_gpus * c.price_per_gpu_hour;
    if (!within_limits(trial, o)) break;
    const uint64_t requests =
        o.requests * std::min<uint64_t>(static_cast<uint64_t>(r), kMaxVerifyRequestScale);
    const SimulationConfig cfg = state.config(i, r, o.load, o.target_load, requests);
    ++c.evaluations;
    const Evaluation e = state.evaluator.evaluate(
        cfg, o.load == PlanLoad::kQps ? o.target_load : std::nan(""), false);
    if (e.pass) {
      c.replicas = r;
      c.verified = true;
      c.predicted = e.summary;
      price_out(c, o);
      if (r > first)
        c.reason += "; verification added " + std::to_string(r - first) + " replica(s)";
      return;
    }
    missed = e.failed;
  }
  c.status = CandidateStatus::kSloUnreachable;
  c.reason = "the full-cluster simulation at the target misses " +
             (missed.empty() ? std::string("the limits") : missed) + " with up to " +
             std::to_string(first + kExtraVerifyReplicas) + " replicas";
  c.suggestion = "more replicas than the single-replica search predicts";
  c.gap = 1;
}

}  // namespace

void verify_clusters(PlanState& state) {
  sort_by_rank(state);
  std::vector<size_t> to_verify;
  for (size_t i : state.order) {
    if (state.candidates[i].status != CandidateStatus::kFeasible) break;
    if (to_verify.size() == static_cast<size_t>(state.options.top_k)) break;
    to_verify.push_back(i);
  }
  state.share_for_candidates(
      to_verify, [&](size_t i) { verify_candidate(state, i); }, SharedOutcome::kCandidate,
      WhenStopped::kSkip);
}

}  // namespace servesim
