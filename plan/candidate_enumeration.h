// Candidate enumeration and pruning (phase 2 of plan(), plan/planner.h): the GPU, TP, PP,
// expert placement and engine-flag axes (max_num_seqs, KV offload, speculative tokens) from
// the options (or the scenario's values), every combination in that order, then per GPU the
// disaggregated groups (P:D x prefill TP x decode TP x PP x engine flags; with
// --prefill-gpus/--decode-gpus, after every GPU's, the groups of each decode GPU x prefill
// GPU instead), and the verdicts
// that need no simulation — parallelism the engine rejects, a speculation the scenario's
// acceptance cannot describe, a deployment MemoryPlan says does not fit (either role of a
// group), one replica beyond --max-gpus or the budget.
// Ownership: writes into the PlanState it is given (plan/plan_state.h says which fields).
// Thread-safety: runs on the calling thread; every rank computes the same candidates alone.
// Invariant: on return every survivor has status kFeasible, engine flags resolved and one
// replica priced; the others carry their reason and rank after any survivor.
#pragma once

#include "plan/plan_state.h"

namespace servesim {

// Throws ConfigError for an unknown GPU, limits no replica can meet, or a candidate set
// with no valid combination.
void enumerate_candidates(PlanState& state);

}  // namespace servesim
