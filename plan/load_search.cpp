#include "plan/load_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "models/config_error.h"
#include "plan/candidate_outcome.h"
#include "plan/plan_text.h"
#include "plan/slo_check.h"

namespace servesim {
namespace {

// The stopping rule of the per-replica search (docs/planning.md).
constexpr double kStopRelativeWidth = 0.05;  // stop when (hi - lo) <= 5% of hi
constexpr int kMaxSearchSteps = 7;           // bisection steps after the saturation probe
// A load that is this close to the probe's capacity is limited by capacity, not latency.
constexpr double kCapacityLimitedFraction = 0.8;
// Candidates searched between two updates of the cost bound; fixed, so the set searched
// does not depend on the thread count.
constexpr size_t kSearchWave = 16;

struct Bisection {
  double lo = 0;  // the highest load that passed: requests/s or clients; 0 if none did
  double hi = 0;  // the lowest load that failed, or the search's upper bound
  std::string fail_reason = "throughput";  // what the last failing load missed
};

bool qps_target(const PlanState& state) {
  return state.options.load == PlanLoad::kQps;
}

// The search's upper bound on one replica's load: the probe's requests/s, or twice the
// sequences it holds as clients.
double search_bound(const PlanCandidate& c, bool qps) {
  return qps ? c.capacity : 2.0 * c.slots();
}

// One replica of candidate i at `value` of `kind`, with the plan's requests per evaluation.
Evaluation run_replica(PlanState& state, size_t i, PlanLoad kind, double value, bool early_stop) {
  PlanCandidate& c = state.candidates[i];
  ++c.evaluations;
  const SimulationConfig cfg = state.config(i, 1, kind, value, state.options.requests);
  return state.evaluator.evaluate(cfg, kind == PlanLoad::kQps ? value : std::nan(""), early_stop);
}

// Saturation probes first: they bound what each candidate can sustain.
void probe_saturation(PlanState& state) {
  std::vector<size_t> survivors;
  for (size_t i = 0; i < state.candidates.size(); ++i) {
    if (state.candidates[i].status == CandidateStatus::kFeasible) survivors.push_back(i);
  }
  state.report.simulated = survivors.size();
  state.probes.resize(state.candidates.size());
  auto saturate = [&](size_t i) {
    PlanCandidate& c = state.candidates[i];
    try {
      state.probes[i] = run_replica(state, i, PlanLoad::kConcurrency, c.slots(), false);
    } catch (const ConfigError& e) {
      mark_invalid(c, e.what());
      return;
    }
    c.capacity = state.probes[i].summary.request_throughput;
    if (!(c.capacity > 0)) mark_invalid(c, "the saturation probe completed no request");
  };
  state.share_for_candidates(survivors, saturate, SharedOutcome::kCandidateAndProbe);
}

Bisection bisect(PlanState& state, size_t i) {
  PlanCandidate& c = state.candidates[i];
  const bool qps = qps_target(state);
  Bisection b;
  b.hi = search_bound(c, qps);
  for (int step = 0; step < kMaxSearchSteps; ++step) {
    const double mid = qps ? (b.lo + b.hi) / 2 : std::floor((b.lo + b.hi) / 2);
    if (mid <= b.lo) break;
    const Evaluation e = run_replica(state, i, state.options.load, mid, true);
    if (e.pass) {
      b.lo = mid;
      c.at_sustained = e.summary;
    } else {
      b.hi = mid;
      b.fail_reason = e.failed;
    }
    if (b.lo > 0 && b.hi - b.lo <= std::max(qps ? 0.0 : 1.0, kStopRelativeWidth * b.hi)) break;
  }
  return b;
}

// No load passed: measures how far off the SLOs are at the lowest load tried, in full, and
// names the SLO missed worst and what it would have to be relaxed to.
void mark_unreachable(PlanState& state, size_t i, const Bisection& b) {
  PlanCandidate& c = state.candidates[i];
  const PlanOptions& o = state.options;
  const double floor_load = qps_target(state) ? b.hi : std::max(1.0, b.hi);
  const Evaluation floor_run = run_replica(state, i, o.load, floor_load, false);
  c.status = CandidateStatus::kSloUnreachable;
  c.limit = "SLO " + b.fail_reason;
  c.gap = 1;
  std::string worst;
  for (const SloTarget& s : o.slos) {
    const double v = slo_value(floor_run.summary, s);
    if (std::isnan(v)) continue;
    if (v / s.limit_s >= c.gap) {
      c.gap = v / s.limit_s;
      worst = s.name();
      c.reason = s.name() + " is " + format_number("%.1f ms", v * 1e3) + " at " +
                 load_text(o.load, floor_load, state.report.sessions) +
                 format_number(" (limit %.1f ms)", s.limit_s * 1e3);
      c.suggestion = "relax " + s.name() + format_number(" to %.0f ms", std::ceil(v * 1.05 * 1e3)) +
                     ", or use a faster GPU / a larger TP";
    }
  }
  if (worst.empty()) {
    c.reason =
        "misses " + b.fail_reason + " even at " + load_text(o.load, b.hi, state.report.sessions);
    c.suggestion = "a faster GPU or a larger TP";
  }
  c.predicted = floor_run.summary;
}

// What bounds a replica that runs out of capacity: KV blocks, or which roofline side its
// typical step sits on (tokens per step x 2 FLOPs per active parameter against streaming
// its weights once).
std::string capacity_limit(const PlanCandidate& c, const HardwareSpec& gpu, const ModelSpec& model,
                           const MemoryPlan& plan, const Evaluation& probe) {
  const MetricsSummary& m = probe.summary;
  const double completed = static_cast<double>(std::max<uint64_t>(1, m.completed));
  const double tokens_per_request =
      static_cast<double>(m.input_tokens + m.output_tokens) / completed;
  if (m.preemptions > 0 ||
      static_cast<double>(c.kv_cache_tokens) < c.max_num_seqs * tokens_per_request) {
    return "KV capacity";
  }
  const double tokens_per_step =
      static_cast<double>(m.input_tokens - m.cached_prompt_tokens + m.output_tokens) /
      static_cast<double>(std::max<int64_t>(1, probe.steps));
  const double flops =
      2.0 * static_cast<double>(model.active_params()) / (c.tp * c.pp) * tokens_per_step;
  const double compute_s = flops / (gpu.peak_flops(c.engine.dtype.value_or(model.native_dtype)) *
                                    gpu.compute_efficiency);
  const double memory_s =
      static_cast<double>(plan.weights_bytes) / (gpu.memory_bandwidth_Bps * gpu.memory_efficiency);
  return compute_s > memory_s ? "compute" : "bandwidth";
}

// What bounds a disaggregated group that runs out of capacity: the role whose queue the
// saturated requests wait in (a prefill instance's, or a decode instance's admission).
std::string disaggregated_limit(const Evaluation& probe) {
  const auto& segments = probe.summary.time.segments;
  const double prefill_wait_s = segments[static_cast<size_t>(Segment::kEngineQueue)].mean_s;
  const double decode_wait_s = segments[static_cast<size_t>(Segment::kDecodeQueue)].mean_s;
  return prefill_wait_s >= decode_wait_s ? "prefill capacity" : "decode capacity";
}

// A load passed: what limits it, and the replicas, cost and verdict at the target.
void size_sustained(PlanState& state, size_t i, const Bisection& b) {
  PlanCandidate& c = state.candidates[i];
  const PlanOptions& o = state.options;
  const double capacity_load = qps_target(state) ? c.capacity : c.slots();
  if (b.fail_reason != "throughput" && b.lo < kCapacityLimitedFraction * capacity_load) {
    c.limit = "SLO " + b.fail_reason;
  } else if (c.disaggregated()) {
    c.limit = disaggregated_limit(state.probes[i]);
  } else {
    c.limit = capacity_limit(c, state.gpus[state.gpu_of[i]], state.scenario.config.model,
                             state.memory_plans[i], state.probes[i]);
  }
  c.reason = "sustains " + load_text(o.load, b.lo, state.report.sessions) +
             (c.disaggregated() ? " per group" : " per replica") + "; limited by " + c.limit;
  c.replicas = static_cast<int>(std::ceil(o.target_load / b.lo - 1e-9));
  c.predicted = c.at_sustained;
  price_out(c, o);
  within_limits(c, o);
}

void search_candidate(PlanState& state, size_t i) {
  const Bisection b = bisect(state, i);
  state.candidates[i].sustained = b.lo;
  if (b.lo == 0) {
    mark_unreachable(state, i, b);
  } else {
    size_sustained(state, i, b);
  }
}

// The search never goes above its upper bound, so replicas >= target / bound and the cost
// is at least this (dollars per hour).
double cost_lower_bound(const PlanCandidate& c, const PlanState& state) {
  return std::ceil(state.options.target_load / search_bound(c, qps_target(state)) - 1e-9) *
         c.gpus_per_replica * c.price_per_gpu_hour;
}

// The K-th cheapest feasible cost found so far, dollars per hour; infinite until K are
// known, or with search_all.
double kth_cheapest(std::vector<double>& feasible_costs, const PlanOptions& o) {
  if (o.search_all || feasible_costs.size() < static_cast<size_t>(o.top_k)) {
    return std::numeric_limits<double>::infinity();
  }
  std::sort(feasible_costs.begin(), feasible_costs.end());
  return feasible_costs[static_cast<size_t>(o.top_k) - 1];
}

void mark_dominated(PlanCandidate& c, double lower_bound, double bound, int top_k) {
  c.status = CandidateStatus::kDominated;
  c.limit = "cost";
  c.reason = format_number("costs at least $%.2f/hour", lower_bound) +
             format_number(" (capacity %.3g req/s per replica)", c.capacity) +
             format_number(", more than the top %.0f found", top_k) +
             format_number(" ($%.2f/hour)", bound);
  c.gap = lower_bound;
}

}  // namespace

// A candidate whose cost bound exceeds the K-th cheapest feasible cost found so far cannot
// enter the top K and is not searched. Waves of fixed size in bound order keep this
// independent of threads.
void search_loads(PlanState& state) {
  probe_saturation(state);
  std::vector<double> lower_bound(state.candidates.size(), 0);  // dollars per hour
  std::vector<size_t> pending;
  for (size_t i = 0; i < state.candidates.size(); ++i) {
    const PlanCandidate& c = state.candidates[i];
    if (c.status != CandidateStatus::kFeasible) continue;
    lower_bound[i] = cost_lower_bound(c, state);
    pending.push_back(i);
  }
  std::stable_sort(pending.begin(), pending.end(),
                   [&](size_t a, size_t b) { return lower_bound[a] < lower_bound[b]; });
  std::vector<double> feasible_costs;  // dollars per hour
  for (size_t start = 0; start < pending.size(); start += kSearchWave) {
    const double bound = kth_cheapest(feasible_costs, state.options);
    std::vector<size_t> wave;
    for (size_t k = start; k < std::min(pending.size(), start + kSearchWave); ++k) {
      const size_t i = pending[k];
      if (lower_bound[i] > bound) {
        mark_dominated(state.candidates[i], lower_bound[i], bound, state.options.top_k);
      } else {
        wave.push_back(i);
      }
    }
    state.share_for_candidates(
        wave, [&](size_t i) { search_candidate(state, i); }, SharedOutcome::kCandidate);
    for (size_t i : wave) {
      const PlanCandidate& c = state.candidates[i];
      if (c.status != CandidateStatus::kInterrupted) ++state.report.searched;
      if (c.status == CandidateStatus::kFeasible) feasible_costs.push_back(c.cost_per_hour);
    }
  }
}

}  // namespace servesim
