// Ranking: feasible candidates first — verified before unverified, each by $/hour, then more
// headroom, then fewer GPUs — then the rest by status and by how close they came (gap).
// Cluster verification ranks to pick its top K; plan() ranks again after it, which orders
// the report.
// Ownership: writes into the PlanState it is given (plan/plan_state.h says which fields).
// Thread-safety: runs on the calling thread.
// Invariant: sorting is stable and starts from the previous order, so equal candidates keep
// the order they had — the same on every rank and at every thread count.
#pragma once

#include "plan/plan_state.h"

namespace servesim {

// Whether a ranks before b.
bool rank_before(const PlanCandidate& a, const PlanCandidate& b);

// Sorts state.order by rank_before.
void sort_by_rank(PlanState& state);

// Sorts again, then writes the report's candidates in rank order and its simulation count.
void rank_candidates(PlanState& state);

}  // namespace servesim
