#include "plan/planner.h"

#include <utility>

#include "plan/candidate_enumeration.h"
#include "plan/candidate_ranking.h"
#include "plan/cluster_verification.h"
#include "plan/load_search.h"
#include "plan/pareto_frontier.h"
#include "plan/plan_state.h"

namespace servesim {

PlanReport plan(const PlanOptions& options, const Catalog& catalog) {
  SoloWorkShare alone;
  return plan(options, catalog, alone);
}

// The method is in plan/planner.h; each phase reads what the phases before it wrote into
// the state (plan/plan_state.h).
PlanReport plan(const PlanOptions& options, const Catalog& catalog, WorkShare& share) {
  PlanState state(options, catalog, share);
  enumerate_candidates(state);
  search_loads(state);
  verify_clusters(state);
  rank_candidates(state);
  find_pareto_frontier(state);
  state.report.interrupted = state.stopped();
  return std::move(state.report);
}

}  // namespace servesim
