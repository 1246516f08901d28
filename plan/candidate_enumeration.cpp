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

// The engine flags one candidate varies from the engine it starts from (the scenario's, or a
// disaggregated role's).
struct EngineVariant {
  std::optional<int> max_num_seqs;    // nullopt: the engine's own; 0: vLLM's default for the GPU
  std::optional<double> offload_gib;  // host KV tier, GiB; nullopt: the engine's own; 0: none
  std::optional<int> speculative_tokens;  // draft tokens per step; nullopt: the engine's own
};

struct ParallelAxes {
  std::vector<int> tps;
  std::vector<int> pps;
  std::vector<ExpertPlacement> placements;
  std::vector<EngineVariant> variants;  // --max-num-seqs x --kv-offloading-size x speculation
  // Disaggregated groups: P:D counts and each role's TP; no ratios: none searched.
  std::vector<PdRatio> ratios;
  std::vector<int> prefill_tps;
  std::vector<int> decode_tps;
};

// A disaggregated group's GPUs: indices into PlanState::gpus.
struct RolePair {
  size_t prefill = 0;
  size_t decode = 0;
};

std::vector<HardwareSpec> gpu_axis(const PlanState& state) {
  const PlanOptions& o = state.options;
  if (is_fixed(o, "gpu")) return {state.scenario.config.gpu};
  if (o.gpus.empty()) return state.catalog.gpus();
  std::vector<HardwareSpec> gpus;
  for (const std::string& g : o.gpus) gpus.push_back(state.catalog.resolve_gpu(g));
  return gpus;
}

// Index of `gpu` in state.gpus, appended when it is not there.
size_t index_of(PlanState& state, const HardwareSpec& gpu) {
  for (size_t i = 0; i < state.gpus.size(); ++i) {
    if (state.gpus[i].name == gpu.name) return i;
  }
  state.gpus.push_back(gpu);
  return state.gpus.size() - 1;
}

// The indices of one role's GPUs: `names` (from `flag`) resolved, or the GPU axis (the first
// `axis` GPUs). Throws ConfigError naming the flag for a GPU the catalog does not know.
std::vector<size_t> role_gpus(PlanState& state, const std::vector<std::string>& names,
                              const char* flag, size_t axis) {
  std::vector<size_t> indices;
  for (const std::string& name : names) {
    try {
      indices.push_back(index_of(state, state.catalog.resolve_gpu(name)));
    } catch (const ConfigError& e) {
      // The catalog names --gpu, the flag of simulate and memory.
      const std::string what = e.what();
      const std::string theirs = "--gpu: ";
      throw ConfigError(std::string(flag) + ": " +
                        (what.rfind(theirs, 0) == 0 ? what.substr(theirs.size()) : what));
    }
  }
  for (size_t g = 0; indices.empty() && g < axis; ++g) indices.push_back(g);
  return indices;
}

// Every prefill GPU with every decode GPU when a role's GPUs are listed; none when they are
// not (each group's roles share a GPU of the axis). Appends the GPUs not on the axis.
std::vector<RolePair> role_pairs(PlanState& state) {
  const PlanOptions& o = state.options;
  if (o.prefill_gpus.empty() && o.decode_gpus.empty()) return {};
  const size_t axis = state.gpus.size();
  const std::vector<size_t> prefill = role_gpus(state, o.prefill_gpus, "--prefill-gpus", axis);
  const std::vector<size_t> decode = role_gpus(state, o.decode_gpus, "--decode-gpus", axis);
  std::vector<RolePair> pairs;
  for (size_t d : decode) {
    for (size_t p : prefill) pairs.push_back({p, d});
  }
  return pairs;
}

// MoE models search experts tensor parallel and expert parallel (vLLM
// --enable-expert-parallel) over 1, 2 and 4 data-parallel ranks per server (and the ranks of a
// disaggregated scenario's expert-parallel decode instances); --fix
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
    // A disaggregated scenario's own wide-EP instances are searched too.
    const DisaggregatedRole& decode = state.scenario.config.disaggregation.decode;
    const bool listed =
        std::any_of(placements.begin(), placements.end(),
                    [&](const ExpertPlacement& p) { return p.dp == decode.parallel.dp; });
    if (state.scenario.config.disaggregation.enabled && decode.parallel.lockstep() && !listed) {
      placements.push_back({true, decode.parallel.dp});
    }
  }
  return placements;
}

// Every combination of the engine-flag axes, in the order max_num_seqs, offload, speculation.
std::vector<EngineVariant> engine_variants(const PlanOptions& o) {
  std::vector<std::optional<int>> seqs(o.max_num_seqs.begin(), o.max_num_seqs.end());
  if (seqs.empty()) seqs.push_back(std::nullopt);
  std::vector<std::optional<double>> offload;
  for (double gib : o.kv_offloading_sizes) offload.push_back(std::max(gib, 0.0));
  if (offload.empty()) offload.push_back(std::nullopt);
  std::vector<std::optional<int>> speculation(o.num_speculative_tokens.begin(),
                                              o.num_speculative_tokens.end());
  if (speculation.empty()) speculation.push_back(std::nullopt);
  std::vector<EngineVariant> variants;
  for (const std::optional<int>& n : seqs) {
    for (const std::optional<double>& gib : offload) {
      for (const std::optional<int>& k : speculation) variants.push_back({n, gib, k});
    }
  }
  return variants;
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
  axes.variants = engine_variants(o);
  axes.ratios = o.pd_ratios.value_or(std::vector<PdRatio>{});
  axes.prefill_tps = o.prefill_tp.empty() ? axes.tps : o.prefill_tp;
  axes.decode_tps = o.decode_tp.empty() ? axes.tps : o.decode_tp;
  return axes;
}

// k draft tokens per step of the scenario's speculation `from`: one acceptance rate holds at
// any k; a per-position list is cut to k, and a k beyond its length has no figure for the
// positions past it (ConfigError).
void set_speculative_tokens(EngineConfig& e, int k, const std::optional<SpeculativeConfig>& from) {
  if (k == 0) {
    e.speculative.reset();
    return;
  }
  SpeculativeConfig s = *from;
  std::vector<double>& a = s.acceptance;
  if (!a.empty()) {
    const bool one_rate = std::all_of(a.begin(), a.end(), [&](double p) { return p == a.front(); });
    if (one_rate) {
      a.assign(static_cast<size_t>(k), a.front());
    } else if (static_cast<size_t>(k) > a.size()) {
      throw ConfigError("engine.speculative.acceptance_per_position gives " +
                        std::to_string(a.size()) + " positions, too few for " + std::to_string(k) +
                        " draft tokens: list " + std::to_string(k) + " (or give acceptance_rate)");
    } else {
      a.resize(static_cast<size_t>(k));
    }
  }
  s.num_speculative_tokens = k;
  e.speculative = std::move(s);
}

// `engine` with the variant's flags. Throws ConfigError for a speculation the scenario's
// acceptance figures cannot describe.
EngineConfig with_variant(EngineConfig engine, const EngineVariant& v,
                          const std::optional<SpeculativeConfig>& speculation) {
  if (v.max_num_seqs) engine.max_num_seqs = *v.max_num_seqs;
  if (v.offload_gib && *v.offload_gib > 0) {
    engine.kv_offloading_size_gib = *v.offload_gib;
  } else if (v.offload_gib) {
    engine.kv_offloading_size_gib.reset();
    engine.kv_offloading_bandwidth_Bps.reset();
  }
  if (v.speculative_tokens) set_speculative_tokens(engine, *v.speculative_tokens, speculation);
  return engine;
}

// Limits that not even the smallest, cheapest replica meets are a mistake in the input,
// not a plan with no feasible candidate.
int smallest(const std::vector<int>& values) {
  return *std::min_element(values.begin(), values.end());
}

// GPUs of the smallest replica (or group) the axes make.
int min_replica_gpus(const PlanOptions& o, const ParallelAxes& axes) {
  int dp = std::numeric_limits<int>::max();
  for (const ExpertPlacement& placement : axes.placements) dp = std::min(dp, placement.dp);
  const int pp = smallest(axes.pps) * dp;
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
                      " GPUs from --tp x --pp x expert-parallel ranks, or a --pd group)");
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
                   const EngineVariant& variant) {
  const HardwareSpec& gpu = state.gpus[g];
  PlanCandidate c;
  c.gpu = gpu.name;
  c.tp = tp;
  c.pp = pp;
  c.expert_parallel = placement.expert_parallel;
  c.dp = placement.dp;
  c.gpus_per_replica = tp * pp * placement.dp;
  c.price_per_gpu_hour = gpu.price_per_hour_usd;
  const SimulationConfig& base = state.scenario.config;
  MemoryPlan mp;
  try {
    mp = prune(c, base.model, gpu, with_variant(base.engine, variant, speculation_of(base)));
  } catch (const ConfigError& e) {
    mark_invalid(c, e.what());
  }
  c.replicas = 1;
  c.total_gpus = c.gpus_per_replica;
  c.cost_per_hour = c.total_gpus * c.price_per_gpu_hour;
  if (c.status == CandidateStatus::kFeasible) within_limits(c, state.options);
  state.candidates.push_back(std::move(c));
  state.gpu_of.push_back(g);
  state.prefill_gpu_of.push_back(g);
  state.memory_plans.push_back(std::move(mp));
}

// Both roles must fit; the decode role's plan is kept (it holds the KV the SLOs depend on).
// The variant applies to both roles' engines; max_num_seqs replaces each role's own only when
// --max-num-seqs lists values (a scenario's roles may set theirs apart).
MemoryPlan prune_disaggregated(PlanCandidate& c, const PlanState& state,
                               const HardwareSpec& prefill_gpu, const HardwareSpec& gpu,
                               const EngineVariant& variant) {
  const std::optional<SpeculativeConfig>& speculation = speculation_of(state.scenario.config);
  EngineConfig prefill_engine;
  EngineConfig decode_engine;
  try {
    (void)state.evaluator.kv_transfer(prefill_gpu, gpu);
    prefill_engine = with_variant(state.evaluator.role_engine(true), variant, speculation);
    decode_engine = with_variant(state.evaluator.role_engine(false), variant, speculation);
  } catch (const ConfigError& e) {
    mark_invalid(c, e.what());
    return MemoryPlan();
  }
  const ModelSpec& model = state.scenario.config.model;
  PlanCandidate prefill = c;
  prefill.tp = c.prefill_tp;
  prune(prefill, model, prefill_gpu, prefill_engine);
  if (prefill.status != CandidateStatus::kFeasible) {
    c.status = prefill.status;
    c.reason = "prefill instance: " + prefill.reason;
    c.limit = prefill.limit;
    c.gap = prefill.gap;
    c.suggestion = prefill.suggestion;
    return MemoryPlan();
  }
  c.prefill_engine = prefill.engine;
  MemoryPlan mp = prune(c, model, gpu, decode_engine);
  if (c.status != CandidateStatus::kFeasible) c.reason = "decode instance: " + c.reason;
  return mp;
}

// One group of ratio.prefill prefill instances (TP prefill_tp) on the pair's prefill GPU and
// ratio.decode decode instances (TP decode_tp) on its decode GPU, both with PP pp and the
// experts placed alike: each instance one server of placement.dp ranks.
void add_disaggregated_candidate(PlanState& state, RolePair gpus, PdRatio ratio, int prefill_tp,
                                 int decode_tp, int pp, ExpertPlacement placement,
                                 const EngineVariant& variant) {
  const HardwareSpec& prefill_gpu = state.gpus[gpus.prefill];
  const HardwareSpec& gpu = state.gpus[gpus.decode];
  PlanCandidate c;
  c.gpu = gpu.name;
  c.prefill_gpu = prefill_gpu.name;
  c.prefill_instances = ratio.prefill;
  c.decode_instances = ratio.decode;
  c.prefill_tp = prefill_tp;
  c.tp = decode_tp;
  c.pp = pp;
  c.expert_parallel = placement.expert_parallel;
  c.dp = placement.dp;
  c.max_num_seqs = variant.max_num_seqs.value_or(state.evaluator.role_engine(false).max_num_seqs);
  const int prefill_gpus = ratio.prefill * prefill_tp * pp * placement.dp;
  const int decode_gpus = ratio.decode * decode_tp * pp * placement.dp;
  c.gpus_per_replica = prefill_gpus + decode_gpus;
  // One GPU type keeps its exact price (ties between candidates compare costs).
  c.price_per_gpu_hour =
      c.mixed_gpus()
          ? (prefill_gpus * prefill_gpu.price_per_hour_usd + decode_gpus * gpu.price_per_hour_usd) /
                c.gpus_per_replica
          : gpu.price_per_hour_usd;
  MemoryPlan mp = prune_disaggregated(c, state, prefill_gpu, gpu, variant);
  c.replicas = 1;
  c.total_gpus = c.gpus_per_replica;
  c.cost_per_hour = c.total_gpus * c.price_per_gpu_hour;
  if (c.status == CandidateStatus::kFeasible) within_limits(c, state.options);
  state.candidates.push_back(std::move(c));
  state.gpu_of.push_back(gpus.decode);
  state.prefill_gpu_of.push_back(gpus.prefill);
  state.memory_plans.push_back(std::move(mp));
}

void add_aggregated_candidates(PlanState& state, size_t g, const ParallelAxes& axes) {
  for (int tp : axes.tps) {
    for (int pp : axes.pps) {
      for (const ExpertPlacement& placement : axes.placements) {
        for (const EngineVariant& variant : axes.variants) {
          add_candidate(state, g, tp, pp, placement, variant);
        }
      }
    }
  }
}

void add_disaggregated_candidates(PlanState& state, RolePair gpus, const ParallelAxes& axes) {
  for (const PdRatio& ratio : axes.ratios) {
    for (int prefill_tp : axes.prefill_tps) {
      for (int decode_tp : axes.decode_tps) {
        for (int pp : axes.pps) {
          for (const ExpertPlacement& placement : axes.placements) {
            for (const EngineVariant& variant : axes.variants) {
              add_disaggregated_candidate(state, gpus, ratio, prefill_tp, decode_tp, pp, placement,
                                          variant);
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
  const size_t axis = state.gpus.size();
  const ParallelAxes axes = parallel_axes(state);
  const std::vector<RolePair> pairs = role_pairs(state);
  check_limits_reachable(state, axes);
  for (size_t g = 0; g < axis; ++g) {
    if (state.options.aggregated) add_aggregated_candidates(state, g, axes);
    if (pairs.empty()) add_disaggregated_candidates(state, {g, g}, axes);
  }
  for (const RolePair& gpus : pairs) add_disaggregated_candidates(state, gpus, axes);
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
