// What the search steps write into a PlanCandidate's outcome (plan/plan_report.h): its
// price and headroom at a replica count, its verdict against --max-gpus and the budget, an
// invalid verdict, and the list of outcome fields sent to the ranks that did not run a step.
// Ownership: the functions write only the candidate they are given.
// Thread-safety: each call touches one candidate; calls on distinct candidates may run at once.
// Invariant: a field the search writes is listed in outcome_fields(), or other ranks never
// see it (and their reports differ from rank 0's).
#pragma once

#include <string>

#include "plan/planner.h"

namespace servesim {

// The gap of a candidate that cannot run at all: ranked after every one that can.
inline constexpr double kInfiniteGap = 1e300;

// The fields the search steps write into a candidate, in a fixed order: `field` is called
// with each member.
template <typename Candidate, typename Field>
void outcome_fields(Candidate& c, Field&& field) {
  field(c.status);
  field(c.reason);
  field(c.limit);
  field(c.capacity);
  field(c.sustained);
  field(c.evaluations);
  field(c.at_sustained);
  field(c.replicas);
  field(c.total_gpus);
  field(c.cost_per_hour);
  field(c.usd_per_million_tokens);
  field(c.headroom);
  field(c.verified);
  field(c.verify_failed);
  field(c.predicted);
  field(c.suggestion);
  field(c.gap);
}

// GPUs, $/hour, headroom and $ per million tokens of c.replicas replicas at the target load;
// the tokens are the cluster's when verified, else one replica's scaled to the target.
void price_out(PlanCandidate& c, const PlanOptions& o);

// Checks --max-gpus and the budget; on a miss sets status, reason, suggestion and gap and
// returns false.
bool within_limits(PlanCandidate& c, const PlanOptions& o);

// The engine rejects it, or a run of it completes nothing: ranked last, never searched.
void mark_invalid(PlanCandidate& c, std::string reason);

// Its turn came after the plan was stopped (Ctrl-C): ranked after every searched one.
void mark_interrupted(PlanCandidate& c);

}  // namespace servesim
