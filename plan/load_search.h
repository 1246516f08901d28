// The load search (phase 3 of plan(), plan/planner.h): per surviving candidate, the highest
// load one replica sustains — a saturation probe bounds it, bisection below the bound finds
// it — then what limits it (an SLO, KV capacity, compute or bandwidth), the replicas and
// cost it takes to serve the target, and the verdict against the limits. Candidates are
// searched in waves, cheapest cost bound first; a candidate whose bound exceeds the K-th
// cheapest feasible cost found so far is not searched (unless search_all).
// Ownership: writes into the PlanState it is given (plan/plan_state.h says which fields).
// Thread-safety: each step's candidates run on worker threads and across the ranks of the
// state's WorkShare; a candidate's search writes only that candidate's slots.
// Invariant: the set searched and every answer depend only on the options and the
// scenario — the waves have a fixed size and every evaluation the scenario's seed.
#pragma once

#include "plan/plan_state.h"

namespace servesim {

void search_loads(PlanState& state);

}  // namespace servesim
