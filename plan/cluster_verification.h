// Full-cluster verification (phase 4 of plan(), plan/planner.h): the K best-ranked feasible
// candidates, each simulated as its whole deployment — every replica behind the scenario's
// router — at the target load, with up to two replicas added when the cluster misses an
// SLO. A verified candidate's predictions become the cluster's; one that misses even with
// the extra replicas is marked as missing the SLO.
// Ownership: writes into the PlanState it is given (plan/plan_state.h says which fields).
// Thread-safety: the K candidates run on worker threads and across the ranks of the state's
// WorkShare; each writes only its own candidate.
// Invariant: replicas are added only within --max-gpus and the budget.
#pragma once

#include "plan/plan_state.h"

namespace servesim {

void verify_clusters(PlanState& state);

}  // namespace servesim
