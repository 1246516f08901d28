#include "plan/candidate_outcome.h"

#include <algorithm>
#include <cmath>

#include "plan/plan_text.h"

namespace servesim {

void price_out(PlanCandidate& c, const PlanOptions& o) {
  c.total_gpus = c.replicas * c.gpus_per_replica;
  c.cost_per_hour = c.total_gpus * c.price_per_gpu_hour;
  c.headroom = c.replicas * c.sustained / o.target_load - 1.0;
  const double tokens_per_s =
      c.verified ? c.predicted.total_token_throughput
                 : c.at_sustained.total_token_throughput * o.target_load / c.sustained;
  c.usd_per_million_tokens = tokens_per_s > 0 ? c.cost_per_hour / (tokens_per_s * 3600) * 1e6 : 0;
}

bool within_limits(PlanCandidate& c, const PlanOptions& o) {
  double gap = 0;
  std::string reason;
  std::string suggestion;
  if (o.max_gpus && c.total_gpus > *o.max_gpus) {
    gap = std::max(gap, static_cast<double>(c.total_gpus) / *o.max_gpus);
    reason = "needs " + std::to_string(c.total_gpus) + " GPUs > --max-gpus " +
             std::to_string(*o.max_gpus);
    suggestion = "raise --max-gpus to " + std::to_string(c.total_gpus);
  }
  if (o.max_budget_per_hour && c.cost_per_hour > *o.max_budget_per_hour + 1e-9) {
    gap = std::max(gap, c.cost_per_hour / *o.max_budget_per_hour);
    reason += (reason.empty() ? "" : "; ") + format_number("costs $%.2f/hour", c.cost_per_hour) +
              format_number(" > --max-budget-per-hour %.2f", *o.max_budget_per_hour);
    suggestion +=
        (suggestion.empty() ? "" : " and ") + format_number("raise --max-budget-per-hour to %.2f",
                                                            std::ceil(c.cost_per_hour * 100) / 100);
  }
  if (reason.empty()) return true;
  c.status = CandidateStatus::kOverLimits;
  c.reason = reason;
  c.suggestion = suggestion;
  c.gap = gap;
  return false;
}

void mark_interrupted(PlanCandidate& c) {
  c.status = CandidateStatus::kInterrupted;
  c.reason = "not searched: the plan was interrupted (Ctrl-C) before its turn";
  c.limit = "interrupted";
  c.gap = kInfiniteGap;
}

void mark_invalid(PlanCandidate& c, std::string reason) {
  c.status = CandidateStatus::kInvalid;
  c.reason = std::move(reason);
  c.limit = "invalid";
  c.gap = kInfiniteGap;
}

}  // namespace servesim
