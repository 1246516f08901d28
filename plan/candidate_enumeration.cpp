#include "plan/candidate_enumeration.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "models/config_error.h"
#include "plan/candidate_outcome.h"
#include "plan/plan_text.h"

namespace servesim {
namespace {

constexpr int kDefaultTp[] = {1, 2, 4, 8};
// Data-parallel ranks of one expert-parallel server tried for a MoE model.
constexpr int kDefaultExpertParallelDp[] = {1, 2, 4};

// One way to place the experts: tensor parallel (expert_parallel false, dp 1) or one
// expert-parallel server of dp data-parallel ranks.
struct ExpertPlacement {
  bool expert_parallel = false;
  int dp = 1;
};

struct ParallelAxes {
  std::vector<int> tps;
  std::vector<int> pps;
  std::vector<ExpertPlacement> placements;
  std::vector<int> seqs;  // max_num_seqs values; 0 takes vLLM's default for the GPU
  std::vector<std::optional<double>> offload;  // host KV tier, GiB; nullopt = none
  // Disaggregated groups: P:D counts and each role's TP; no ratios: none searched.
  std::vector<PdRatio> ratios;
  std::vector<int> prefill_tps;
  std::vector<int> decode_tps;
};

std::vector<HardwareSpec> gpu_axis(const PlanState& state) {
  const PlanOptions& o = state.options;
  if (is_fixed(o, "gpu")) return {state.scenario.config.gpu};
  if (o.gpus.empty()) return state.catalog.gpus();
  std::vector<HardwareSpec> gpus;
  for (const std::string& g : o.gpus) gpus.push_back(state.catalog.resolve_gpu(g));
  return gpus;
}

// MoE models search experts tensor parallel and expert parallel (vLLM
// --enable-expert-parallel) over 1, 2 and 4 data-parallel ranks per server; --fix
// parallel.enable_expert_parallel=... keeps one, --fix parallel.data_parallel_size=D one D.
std::vector<ExpertPlacement> expert_placements(const PlanState& state) {
  const PlanOptions& o = state.options;
  const ParallelConfig& base = state.scenario.config.parallel;
  const bool fixed = is_fixed(o, "parallel.enable_expert_parallel");
  if (!state.scenario.config.model.is_moe() || (fixed && !base.enable_expert_parallel)) {
    return {{false, 1}};
  }
  std::vector<ExpertPlacement> placements;
  if (!fixed) placements.push_back({false, 1});
  if (is_fixed(o, "parallel.data_parallel_size")) {
    placements.push_back({true, base.dp});
  } else {
    for (int dp : kDefaultExpertParallelDp) placements.push_back({true, dp});
  }
  return placements;
}

ParallelAxes parallel_axes(const PlanState& state) {
  const PlanOptions& o = state.options;
  const SimulationConfig& base = state.scenario.config;
  ParallelAxes axes;
  axes.tps = o.tp;
  if (axes.tps.empty()) {
    if (is_fixed(o, "parallel.tensor_parallel_size")) {
      axes.tps = {base.parallel.tp};
    } else {
      axes.tps.assign(std::begin(kDefaultTp), std::end(kDefaultTp));
    }
  }
  axes.pps = o.pp.empty() ? std::vector<int>{base.parallel.pp} : o.pp;
  axes.placements = expert_placements(state);
  axes.seqs = o.max_num_seqs.empty() ? std::vector<int>{base.engine.max_num_seqs} : o.max_num_seqs;
  axes.ratios = o.pd_ratios.value_or(std::vector<PdRatio>{});
  axes.prefill_tps = o.prefill_tp.empty() ? axes.tps : o.prefill_tp;
  axes.decode_tps = o.decode_tp.empty() ? axes.tps : o.decode_tp;
  if (o.kv_offloading_sizes.empty()) {
    axes.offload = {base.engine.kv_offloading_size_gib};
  } else {
    for (double gib : o.kv_offloading_sizes) {
      axes.offload.push_back(gib > 0 ? std::optional<double>(gib) : std::nullopt);
    }
  }
  return axes;
}

// Limits that not even the smallest, cheapest replica meets are a mistake in the input,
// not a plan with no feasible candidate.
int smallest(const std::vector<int>& values) {
  return *std::min_element(values.begin(), values.end());
}

// GPUs of the smallest replica (or group) the axes make.
int min_replica_gpus(const PlanOptions& o, const ParallelAxes& axes) {
  const int pp = smallest(axes.pps);
  int gpus = o.aggregated ? smallest(axes.tps) * pp : std::numeric_limits<int>::max();
  for (const PdRatio& r : axes.ratios) {
    gpus = std::min(
        gpus, (r.prefill * smallest(axes.prefill_tps) + r.decode * smallest(axes.decode_tps)) * pp);
  }
  return gpus;
}

void check_limits_reachable(const PlanState& state, const ParallelAxes& axes) {
  const PlanOptions& o = state.options;
  const int min_gpus = min_replica_gpus(o, axes);
  if (o.max_gpus && *o.max_gpus < min_gpus) {
    throw ConfigError("contradictory limits: --max-gpus " + std::to_string(*o.max_gpus) +
                      " is below the smallest replica (" + std::to_string(min_gpus) +
                      " GPUs from --tp x --pp, or a --pd group)");
  }
  if (o.max_budget_per_hour) {
    double cheapest = std::numeric_limits<double>::infinity();  // dollars per GPU-hour
    for (const HardwareSpec& g : state.gpus) cheapest = std::min(cheapest, g.price_per_hour_usd);
    if (cheapest * min_gpus > *o.max_budget_per_hour) {
      throw ConfigError(
          format_number("contradictory limits: --max-budget-per-hour %.2f",
                        *o.max_budget_per_hour) +
          format_number(" buys no replica (the cheapest costs $%.2f/hour)", cheapest * min_gpus));
    }
  }
}

// Resolves the candidate's engine flags and sizes its memory; on a rejection marks it
// invalid, or does-not-fit when only memory rules it out.
MemoryPlan prune(PlanCandidate& c, const ModelSpec& model, const HardwareSpec& gpu,
                 EngineConfig engine) {
  ParallelConfig parallel{c.tp, c.pp, c.dp};
  parallel.enable_expert_parallel = c.expert_parallel;
  MemoryPlan mp;
  try {
    parallel.validate(model);
    engine.resolved_for(model, gpu).validate(model);
    mp = MemoryPlan::compute_unchecked(model, gpu, parallel, engine);
    c.engine = mp.engine;
    c.max_num_seqs = mp.engine.max_num_seqs;
    c.kv_cache_tokens = mp.kv_cache_tokens;
    c.status = CandidateStatus::kFeasible;
    // compute() throws the memory planner's own one-line reason.
    if (!mp.fits()) MemoryPlan::compute(model, gpu, parallel, engine);
  } catch (const ConfigError& e) {
    if (c.status != CandidateStatus::kFeasible) {
      mark_invalid(c, e.what());
      return mp;
    }
    c.reason = e.what();
    c.gap = kInfiniteGap;
    c.status = CandidateStatus::kDoesNotFit;
    c.limit = "memory";
    c.suggestion =
        "more GPUs per replica (TP/PP), a GPU with more memory, or a lower "
        "max_model_len";
  }
  return mp;
}

void add_candidate(PlanState& state, size_t g, int tp, int pp, ExpertPlacement placement,
                   int max_num_seqs, std::optional<double> offload_gib) {
  const HardwareSpec& gpu = state.gpus[g];
  PlanCandidate c;
  c.gpu = gpu.name;
  c.tp = tp;
  c.pp = pp;
  c.expert_parallel = placement.expert_parallel;
  c.dp = placement.dp;
  c.gpus_per_replica = tp * pp * placement.dp;
  c.price_per_gpu_hour = gpu.price_per_hour_usd;
  EngineConfig engine = state.scenario.config.engine;
  engine.max_num_seqs = max_num_seqs;
  engine.kv_offloading_size_gib = offload_gib;
  if (!offload_gib) engine.kv_offloading_bandwidth_Bps.reset();
  MemoryPlan mp = prune(c, state.scenario.config.model, gpu, engine);
  c.replicas = 1;
  c.total_gpus = c.gpus_per_replica;
  c.cost_per_hour = c.total_gpus * c.price_per_gpu_hour;
  if (c.status == CandidateStatus::kFeasible) within_limits(c, state.options);
  state.candidates.push_back(std::move(c));
  state.gpu_of.push_back(g);
  state.memory_plans.push_back(std::move(mp));
}

// Both roles must fit; the decode role's plan is kept (it holds the KV the SLOs depend on).
// max_num_seqs replaces each role's own only when --max-num-seqs lists values: a scenario's
// roles may set theirs apart.
MemoryPlan prune_disaggregated(PlanCandidate& c, const PlanState& state, const HardwareSpec& gpu,
                               int max_num_seqs) {
  const bool listed = !state.options.max_num_seqs.empty();
  try {
    (void)state.evaluator.kv_transfer(gpu);
  } catch (const ConfigError& e) {
    mark_invalid(c, e.what());
    return MemoryPlan();
  }
  const ModelSpec& model = state.scenario.config.model;
  PlanCandidate prefill = c;
  prefill.tp = c.prefill_tp;
  EngineConfig prefill_engine = state.evaluator.role_engine(true);
  if (listed) prefill_engine.max_num_seqs = max_num_seqs;
  prune(prefill, model, gpu, prefill_engine);
  if (prefill.status != CandidateStatus::kFeasible) {
    c.status = prefill.status;
    c.reason = "prefill instance: " + prefill.reason;
    c.limit = prefill.limit;
    c.gap = prefill.gap;
    c.suggestion = prefill.suggestion;
    return MemoryPlan();
  }
  c.prefill_engine = prefill.engine;
  EngineConfig decode_engine = state.evaluator.role_engine(false);
  if (listed) decode_engine.max_num_seqs = max_num_seqs;
  MemoryPlan mp = prune(c, model, gpu, decode_engine);
  if (c.status != CandidateStatus::kFeasible) c.reason = "decode instance: " + c.reason;
  return mp;
}

// One group of ratio.prefill prefill instances (TP prefill_tp) and ratio.decode decode
// instances (TP decode_tp), both with PP pp on GPU g.
void add_disaggregated_candidate(PlanState& state, size_t g, PdRatio ratio, int prefill_tp,
                                 int decode_tp, int pp, int max_num_seqs,
                                 std::optional<double> offload_gib) {
  const HardwareSpec& gpu = state.gpus[g];
  PlanCandidate c;
  c.gpu = gpu.name;
  c.prefill_instances = ratio.prefill;
  c.decode_instances = ratio.decode;
  c.prefill_tp = prefill_tp;
  c.tp = decode_tp;
  c.pp = pp;
  c.max_num_seqs = max_num_seqs;
  c.gpus_per_replica = (ratio.prefill * prefill_tp + ratio.decode * decode_tp) * pp;
  c.price_per_gpu_hour = gpu.price_per_hour_usd;
  MemoryPlan mp;
  if (offload_gib) {
    mark_invalid(c, "KV offload with disaggregation is not modelled yet");
  } else {
    mp = prune_disaggregated(c, state, gpu, max_num_seqs);
  }
  c.replicas = 1;
  c.total_gpus = c.gpus_per_replica;
  c.cost_per_hour = c.total_gpus * c.price_per_gpu_hour;
  if (c.status == CandidateStatus::kFeasible) within_limits(c, state.options);
  state.candidates.push_back(std::move(c));
  state.gpu_of.push_back(g);
  state.memory_plans.push_back(std::move(mp));
}

void add_aggregated_candidates(PlanState& state, size_t g, const ParallelAxes& axes) {
  for (int tp : axes.tps) {
    for (int pp : axes.pps) {
      for (const ExpertPlacement& placement : axes.placements) {
        for (int max_num_seqs : axes.seqs) {
          for (const std::optional<double>& offload : axes.offload) {
            add_candidate(state, g, tp, pp, placement, max_num_seqs, offload);
          }
        }
      }
    }
  }
}

void add_disaggregated_candidates(PlanState& state, size_t g, const ParallelAxes& axes) {
  for (const PdRatio& ratio : axes.ratios) {
    for (int prefill_tp : axes.prefill_tps) {
      for (int decode_tp : axes.decode_tps) {
        for (int pp : axes.pps) {
          for (int max_num_seqs : axes.seqs) {
            for (const std::optional<double>& offload : axes.offload) {
              add_disaggregated_candidate(state, g, ratio, prefill_tp, decode_tp, pp, max_num_seqs,
                                          offload);
            }
          }
        }
      }
    }
  }
}

}  // namespace

void enumerate_candidates(PlanState& state) {
  state.gpus = gpu_axis(state);
  const ParallelAxes axes = parallel_axes(state);
  check_limits_reachable(state, axes);
  for (size_t g = 0; g < state.gpus.size(); ++g) {
    if (state.options.aggregated) add_aggregated_candidates(state, g, axes);
    add_disaggregated_candidates(state, g, axes);
  }
  const std::vector<PlanCandidate>& candidates = state.candidates;
  if (std::all_of(candidates.begin(), candidates.end(),
                  [](const PlanCandidate& c) { return c.status == CandidateStatus::kInvalid; })) {
    throw ConfigError(
        "plan: empty candidate set: no GPU x --tp x --pp x --max-num-seqs (x --pd) "
        "combination is valid" +
        (candidates.empty() ? std::string() : " (" + candidates.front().reason + ")"));
  }
  state.order.resize(candidates.size());
  for (size_t i = 0; i < state.order.size(); ++i) state.order[i] = i;
  state.report.enumerated = candidates.size();
}

}  // namespace servesim
