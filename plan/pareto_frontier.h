// The Pareto frontier (phase 5 of plan(), plan/planner.h) of output tokens/s per GPU against
// tokens/s per user (1 / mean TPOT), over every searched candidate at its SLO-bound load
// ("slo") and saturated ("saturation"): the points no other point beats on both axes.
// Ownership: writes state.report.pareto only.
// Thread-safety: runs on the calling thread.
// Invariants: runs after ranking (points name candidates by rank); ties between points are
// broken by rank, so the frontier is the same on every rank and at every thread count.
#pragma once

#include "plan/plan_state.h"

namespace servesim {

void find_pareto_frontier(PlanState& state);

}  // namespace servesim
