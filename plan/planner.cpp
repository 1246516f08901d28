#include "plan/planner.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "models/config_error.h"
#include "models/json_file.h"
#include "plan/byte_stream.h"
#include "plan/plan_text.h"
#include "plan/slo_check.h"
#include "sim/serving/scenario.h"
#include "sim/serving/simulation.h"

namespace servesim {
namespace {

// The stopping rule of the per-replica search (docs/planning.md).
constexpr double kStopRelativeWidth = 0.05;  // stop when (hi - lo) <= 5% of hi
constexpr int kMaxSearchSteps = 7;           // bisection steps after the saturation probe
// An open-loop run keeps up when completed requests/s reach this fraction of the offered
// rate; below it the queue grows without bound and a longer run would miss every SLO.
constexpr double kMinThroughputFraction = 0.9;
// A load that is this close to the probe's capacity is limited by capacity, not latency.
constexpr double kCapacityLimitedFraction = 0.8;
constexpr int kExtraVerifyReplicas = 2;         // replicas added when verification misses
constexpr uint64_t kMaxVerifyRequestScale = 8;  // verification runs <= 8x --requests
constexpr int kDefaultTp[] = {1, 2, 4, 8};
constexpr double kInfiniteGap = 1e300;
// Candidates searched between two updates of the cost bound; fixed, so the set searched
// does not depend on the thread count.
constexpr size_t kSearchWave = 16;

struct Evaluation {
  bool pass = false;
  std::string failed;  // the first constraint missed: "ttft:p99", "error rate", "throughput"
  MetricsSummary summary;
  int64_t steps = 0;  // steps of replica 0
};

// Everything the searches share, read-only once built.
class PlanContext {
 public:
  PlanContext(const PlanOptions& options, SimulationConfig base, nlohmann::json open_arrival)
      : options_(options), base_(std::move(base)), open_arrival_(std::move(open_arrival)) {
    const WorkloadSpec& w = base_.workload;
    reuses_prefixes_ = w.shared_prefix.has_value() || w.multi_turn.has_value();
    longest_request_tokens_ =
        w.prompt_tokens.distribution().max() + w.output_tokens.distribution().max();
    if (!open_arrival_.is_null()) {
      base_mean_qps_ = ArrivalProcess::from_json(open_arrival_, "workload.arrival").mean_rate_qps();
    }
  }

  const SimulationConfig& base() const { return base_; }

  SimulationConfig config(const HardwareSpec& gpu, const PlanCandidate& c, int replicas,
                          PlanLoad load, double value, uint64_t requests) const {
    SimulationConfig cfg = base_;
    cfg.gpu = gpu;
    cfg.parallel = ParallelConfig{c.tp, c.pp, replicas};
    cfg.engine.max_num_seqs = c.max_num_seqs;
    if (!cfg.engine.num_gpu_blocks_override && !reuses_prefixes_) {
      // Blocks beyond what max_num_seqs sequences of the longest request can hold are never
      // used when no prefix is ever reused, yet allocating them costs more than a short run
      // on a large deployment; capping them leaves every scheduling decision unchanged.
      const double per_seq = std::min<double>(c.engine.max_model_len, longest_request_tokens_);
      const int64_t needed = static_cast<int64_t>(c.max_num_seqs) *
                             (static_cast<int64_t>(std::ceil(per_seq / c.engine.block_size)) + 1);
      if (needed < c.kv_cache_tokens / c.engine.block_size) {
        cfg.engine.num_gpu_blocks_override = needed;
      }
    }
    cfg.metrics.price_per_gpu_hour = 0;  // each GPU's own catalog price
    cfg.sample_interval_s = 0;
    WorkloadSpec& w = cfg.workload;
    w.num_requests = requests;
    w.steps.clear();
    if (load == PlanLoad::kConcurrency) {
      // Clients of a closed-loop scenario keep their think time when the target counts
      // clients; the saturation probe of a QPS plan wants a full batch, so none.
      if (w.kind != WorkloadKind::kClosedLoop || options_.load == PlanLoad::kQps) {
        w.think_time_s = Distribution::fixed(0.0);
      }
      w.kind = WorkloadKind::kClosedLoop;
      w.clients = std::max(1, static_cast<int>(value));
    } else {
      w.kind = WorkloadKind::kOpenLoop;
      if (open_arrival_.is_null()) {
        w.arrival = ArrivalProcess::poisson(value);
      } else {
        // Scale the scenario's own process so its burstiness (gamma CV, on/off) is kept.
        nlohmann::json a = open_arrival_;
        a["rate_qps"] = a["rate_qps"].get<double>() * value / base_mean_qps_;
        w.arrival = ArrivalProcess::from_json(a, "workload.arrival");
      }
    }
    return cfg;
  }

  // offered_qps: open loop's offered rate (checked against throughput); NaN for closed.
  Evaluation evaluate(const SimulationConfig& cfg, double offered_qps, bool early_stop) const {
    Simulation simulation(cfg);
    SloWatch watch(options_.slos, options_.max_error_rate, cfg.workload.num_requests, cfg.metrics);
    NullObserver quiet;
    Observer& observer = early_stop ? static_cast<Observer&>(watch) : quiet;
    const SimulationResult result = simulation.run(observer);
    Evaluation e;
    e.summary = result.summary;
    e.steps = result.replicas.empty() ? 0 : result.replicas.front().steps;
    e.failed = watch.failed();
    if (!e.failed.empty()) return e;
    e.failed = first_missed_slo(result.summary, options_.slos);
    if (!e.failed.empty()) return e;
    const double errors = std::isnan(result.summary.error_rate) ? 0 : result.summary.error_rate;
    if (errors > options_.max_error_rate) {
      e.failed = "error rate";
      return e;
    }
    if (!std::isnan(offered_qps) &&
        !(result.summary.request_throughput >= kMinThroughputFraction * offered_qps)) {
      e.failed = "throughput";
      return e;
    }
    e.pass = true;
    return e;
  }

 private:
  const PlanOptions& options_;
  SimulationConfig base_;
  nlohmann::json open_arrival_;  // the scenario's open-loop arrival JSON; null if none
  double base_mean_qps_ = 1;
  bool reuses_prefixes_ = true;        // shared prefixes or sessions hit the prefix cache
  double longest_request_tokens_ = 0;  // prompt + output, tokens; may be infinite
};

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

int rank_group(const PlanCandidate& c) {
  switch (c.status) {
    case CandidateStatus::kFeasible:
      return c.verified ? 0 : 1;
    case CandidateStatus::kDominated:
      return 2;
    case CandidateStatus::kOverLimits:
      return 3;
    case CandidateStatus::kSloUnreachable:
      return 4;
    case CandidateStatus::kDoesNotFit:
      return 5;
    case CandidateStatus::kInvalid:
      break;
  }
  return 6;
}

bool rank_before(const PlanCandidate& a, const PlanCandidate& b) {
  const int ga = rank_group(a);
  const int gb = rank_group(b);
  if (ga != gb) return ga < gb;
  if (ga <= 1) {
    if (a.cost_per_hour != b.cost_per_hour) return a.cost_per_hour < b.cost_per_hour;
    if (a.headroom != b.headroom) return a.headroom > b.headroom;
    return a.total_gpus < b.total_gpus;
  }
  return a.gap < b.gap;
}

void price_out(PlanCandidate& c, const PlanOptions& o) {
  c.total_gpus = c.replicas * c.gpus_per_replica;
  c.cost_per_hour = c.total_gpus * c.price_per_gpu_hour;
  c.headroom = c.replicas * c.sustained / o.target_load - 1.0;
  const double tokens_per_s =
      c.verified ? c.predicted.total_token_throughput
                 : c.at_sustained.total_token_throughput * o.target_load / c.sustained;
  c.usd_per_million_tokens = tokens_per_s > 0 ? c.cost_per_hour / (tokens_per_s * 3600) * 1e6 : 0;
}

// Checks --max-gpus and the budget; on a miss sets status, reason, suggestion and gap.
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

// What the search steps write into a candidate and its probe, field by field, for the ranks
// that did not run them (share_for). `field` is called with each member in a fixed order.
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

template <typename E, typename Field>
void evaluation_fields(E& e, Field&& field) {
  field(e.pass);
  field(e.failed);
  field(e.summary);
  field(e.steps);
}

std::string resolve_workload_path(const std::string& path, const std::string& base_dir) {
  const std::filesystem::path candidate = std::filesystem::path(base_dir) / path;
  if (base_dir.empty() || std::filesystem::path(path).is_absolute() ||
      !std::filesystem::exists(candidate)) {
    return path;
  }
  return candidate.string();
}

bool fixed_key(const std::vector<std::string>& fixed, const std::string& key) {
  return std::any_of(fixed.begin(), fixed.end(),
                     [&](const std::string& f) { return f.rfind(key + "=", 0) == 0; });
}

void check_options(const PlanOptions& o) {
  const char* target = o.load == PlanLoad::kQps ? "--target-qps" : "--target-concurrency";
  if (!(o.target_load > 0) || !std::isfinite(o.target_load)) {
    throw ConfigError(std::string(target) + " must be > 0");
  }
  if (o.load == PlanLoad::kConcurrency && o.target_load != std::floor(o.target_load)) {
    throw ConfigError("--target-concurrency must be a whole number of clients");
  }
  if (!(o.max_error_rate >= 0 && o.max_error_rate < 1)) {
    throw ConfigError("--max-error-rate must be in [0, 1), e.g. 0.01");
  }
  if (o.top_k < 1) throw ConfigError("--top must be >= 1");
  if (o.requests < 20 || o.requests > 10000000) {
    throw ConfigError("--requests must be in [20, 10000000]");
  }
  for (const auto& [name, list] : {std::pair<const char*, const std::vector<int>*>{"--tp", &o.tp},
                                   {"--pp", &o.pp},
                                   {"--max-num-seqs", &o.max_num_seqs}}) {
    for (int v : *list) {
      if (v < 1)
        throw ConfigError(std::string(name) + " values must be >= 1, got " + std::to_string(v));
    }
  }
  if (o.max_gpus && *o.max_gpus < 1) throw ConfigError("--max-gpus must be >= 1");
  if (o.max_budget_per_hour && !(*o.max_budget_per_hour > 0)) {
    throw ConfigError("--max-budget-per-hour must be > 0 dollars");
  }
  check_unique_slos(o.slos);
  for (const char* key : {"gpu", "parallel.tensor_parallel_size", "parallel.pipeline_parallel_size",
                          "engine.max_num_seqs"}) {
    const bool listed = (std::string(key) == "gpu" && !o.gpus.empty()) ||
                        (std::string(key) == "parallel.tensor_parallel_size" && !o.tp.empty()) ||
                        (std::string(key) == "parallel.pipeline_parallel_size" && !o.pp.empty()) ||
                        (std::string(key) == "engine.max_num_seqs" && !o.max_num_seqs.empty());
    if (listed && fixed_key(o.fixed, key)) {
      throw ConfigError(std::string("--fix ") + key +
                        " contradicts the candidate list given for it; drop one");
    }
  }
}

}  // namespace

PlanReport plan(const PlanOptions& options, const Catalog& catalog) {
  SoloWorkShare alone;
  return plan(options, catalog, alone);
}

PlanReport plan(const PlanOptions& options_in, const Catalog& catalog, WorkShare& share) {
  PlanOptions o = options_in;
  check_options(o);

  const bool from_file = !o.scenario_path.empty();
  if (!from_file && !o.scenario.is_object()) {
    throw ConfigError(
        "plan: no workload: give a scenario file, or --model NAME --input-len N --output-len N");
  }
  const std::string origin = from_file ? o.scenario_path : "command line";
  nlohmann::json scenario_json = from_file ? load_json_file(o.scenario_path) : o.scenario;
  apply_overrides(scenario_json, o.fixed);
  const std::string base_dir = std::filesystem::path(o.scenario_path).parent_path().string();
  const Scenario scenario = parse_scenario(scenario_json, base_dir, origin, catalog);
  const SimulationConfig& base = scenario.config;
  if (base.workload.kind == WorkloadKind::kTrace) {
    throw ConfigError(origin +
                      ": workload: plan scales a synthetic workload; a trace has fixed arrivals "
                      "(use a poisson/gamma/closed workload with the trace's lengths)");
  }
  if (o.slos.empty()) o.slos = slos_from_scenario(base.metrics.slo);
  if (o.slos.empty()) {
    throw ConfigError("plan: no SLO given; add --slo ttft:p99=0.5" +
                      (from_file ? " (or an slo block to " + o.scenario_path + ")" : ""));
  }

  // The scenario's open-loop arrival JSON, scaled per evaluation to keep its shape.
  nlohmann::json open_arrival;
  if (base.workload.kind == WorkloadKind::kOpenLoop) {
    nlohmann::json w = scenario_json.at("workload");
    if (w.is_string()) w = load_json_file(resolve_workload_path(w.get<std::string>(), base_dir));
    if (w.contains("arrival")) open_arrival = w["arrival"];
  }
  const PlanContext context(o, base, open_arrival);

  // Candidate axes.
  std::vector<HardwareSpec> gpus;
  if (fixed_key(o.fixed, "gpu")) {
    gpus.push_back(base.gpu);
  } else if (o.gpus.empty()) {
    gpus = catalog.gpus();
  } else {
    for (const std::string& g : o.gpus) gpus.push_back(catalog.resolve_gpu(g));
  }
  std::vector<int> tps = o.tp;
  if (tps.empty()) {
    if (fixed_key(o.fixed, "parallel.tensor_parallel_size")) {
      tps = {base.parallel.tp};
    } else {
      tps.assign(std::begin(kDefaultTp), std::end(kDefaultTp));
    }
  }
  std::vector<int> pps = o.pp.empty() ? std::vector<int>{base.parallel.pp} : o.pp;
  std::vector<int> seqs =
      o.max_num_seqs.empty() ? std::vector<int>{base.engine.max_num_seqs} : o.max_num_seqs;

  const int min_replica_gpus =
      *std::min_element(tps.begin(), tps.end()) * *std::min_element(pps.begin(), pps.end());
  if (o.max_gpus && *o.max_gpus < min_replica_gpus) {
    throw ConfigError("contradictory limits: --max-gpus " + std::to_string(*o.max_gpus) +
                      " is below the smallest replica (" + std::to_string(min_replica_gpus) +
                      " GPUs from --tp x --pp)");
  }
  if (o.max_budget_per_hour) {
    double cheapest = std::numeric_limits<double>::infinity();
    for (const HardwareSpec& g : gpus) cheapest = std::min(cheapest, g.price_per_hour_usd);
    if (cheapest * min_replica_gpus > *o.max_budget_per_hour) {
      throw ConfigError(format_number("contradictory limits: --max-budget-per-hour %.2f",
                                      *o.max_budget_per_hour) +
                        format_number(" buys no replica (the cheapest costs $%.2f/hour)",
                                      cheapest * min_replica_gpus));
    }
  }

  // Enumerate and prune.
  std::vector<PlanCandidate> candidates;
  std::vector<size_t> gpu_of;
  std::vector<MemoryPlan> plans;
  for (size_t g = 0; g < gpus.size(); ++g) {
    for (int tp : tps) {
      for (int pp : pps) {
        for (int mns : seqs) {
          PlanCandidate c;
          c.gpu = gpus[g].name;
          c.tp = tp;
          c.pp = pp;
          c.gpus_per_replica = tp * pp;
          c.price_per_gpu_hour = gpus[g].price_per_hour_usd;
          EngineConfig engine = base.engine;
          engine.max_num_seqs = mns;
          const ParallelConfig parallel{tp, pp, 1};
          MemoryPlan mp;
          try {
            parallel.validate(base.model);
            engine.resolved_for(base.model, gpus[g]).validate(base.model);
            mp = MemoryPlan::compute_unchecked(base.model, gpus[g], parallel, engine);
            c.engine = mp.engine;
            c.max_num_seqs = mp.engine.max_num_seqs;
            c.kv_cache_tokens = mp.kv_cache_tokens;
            c.status = CandidateStatus::kFeasible;
            if (!mp.fits()) MemoryPlan::compute(base.model, gpus[g], parallel, engine);
          } catch (const ConfigError& e) {
            c.reason = e.what();
            c.gap = kInfiniteGap;
            if (c.status == CandidateStatus::kFeasible) {
              c.status = CandidateStatus::kDoesNotFit;
              c.limit = "memory";
              c.suggestion =
                  "more GPUs per replica (TP/PP), a GPU with more memory, or a lower "
                  "max_model_len";
            } else {
              c.limit = "invalid";
            }
          }
          c.replicas = 1;
          c.total_gpus = c.gpus_per_replica;
          c.cost_per_hour = c.total_gpus * c.price_per_gpu_hour;
          if (c.status == CandidateStatus::kFeasible) within_limits(c, o);
          candidates.push_back(c);
          gpu_of.push_back(g);
          plans.push_back(mp);
        }
      }
    }
  }
  if (std::all_of(candidates.begin(), candidates.end(),
                  [](const PlanCandidate& c) { return c.status == CandidateStatus::kInvalid; })) {
    throw ConfigError(
        "plan: empty candidate set: no GPU x --tp x --pp x --max-num-seqs "
        "combination is valid" +
        (candidates.empty() ? std::string() : " (" + candidates.front().reason + ")"));
  }

  PlanReport report;
  report.model = base.model.name;
  report.model_repo = base.model.hf_repo;
  report.scenario = scenario.name;
  report.load = o.load;
  report.target_load = o.target_load;
  report.slos = o.slos;
  report.max_error_rate = o.max_error_rate;
  report.requests = o.requests;
  report.enumerated = candidates.size();

  // Search each survivor: probe, bisection, classification.
  std::vector<size_t> survivors;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].status == CandidateStatus::kFeasible) survivors.push_back(i);
  }
  report.simulated = survivors.size();
  std::vector<Evaluation> probes(candidates.size());
  auto run_one = [&](size_t i, PlanLoad kind, double value, bool early_stop) {
    PlanCandidate& c = candidates[i];
    ++c.evaluations;
    const SimulationConfig cfg = context.config(gpus[gpu_of[i]], c, 1, kind, value, o.requests);
    return context.evaluate(cfg, kind == PlanLoad::kQps ? value : std::nan(""), early_stop);
  };
  auto pack_candidate = [&](size_t i, ByteWriter& out) {
    outcome_fields(candidates[i], [&](const auto& v) { out.write(v); });
  };
  auto unpack_candidate = [&](size_t i, ByteReader& in) {
    outcome_fields(candidates[i], [&](auto& v) { in.read(v); });
  };
  // Saturation probes first: they bound what each candidate can sustain.
  auto saturate = [&](size_t k) {
    const size_t i = survivors[k];
    PlanCandidate& c = candidates[i];
    try {
      probes[i] = run_one(i, PlanLoad::kConcurrency, c.max_num_seqs, false);
    } catch (const ConfigError& e) {
      c.status = CandidateStatus::kInvalid;
      c.reason = e.what();
      c.limit = "invalid";
      c.gap = kInfiniteGap;
      return;
    }
    c.capacity = probes[i].summary.request_throughput;
    if (!(c.capacity > 0)) {
      c.status = CandidateStatus::kInvalid;
      c.reason = "the saturation probe completed no request";
      c.limit = "invalid";
      c.gap = kInfiniteGap;
    }
  };
  share_for(
      share, survivors.size(), o.threads, saturate,
      [&](size_t k, ByteWriter& out) {
        pack_candidate(survivors[k], out);
        evaluation_fields(probes[survivors[k]], [&](const auto& v) { out.write(v); });
      },
      [&](size_t k, ByteReader& in) {
        unpack_candidate(survivors[k], in);
        evaluation_fields(probes[survivors[k]], [&](auto& v) { in.read(v); });
      });
  // The search never goes above its upper bound, so replicas >= target / bound and the
  // cost is at least lower_bound[i]: a candidate whose bound exceeds the K-th cheapest
  // feasible cost found so far cannot enter the top K and is not searched (unless
  // search_all). Waves of fixed size in bound order keep this independent of threads.
  const bool qps = o.load == PlanLoad::kQps;
  std::vector<double> lower_bound(candidates.size(), 0);
  std::vector<size_t> pending;
  for (size_t i : survivors) {
    PlanCandidate& c = candidates[i];
    if (c.status != CandidateStatus::kFeasible) continue;
    const double bound = qps ? c.capacity : 2.0 * c.max_num_seqs;
    lower_bound[i] =
        std::ceil(o.target_load / bound - 1e-9) * c.gpus_per_replica * c.price_per_gpu_hour;
    pending.push_back(i);
  }
  std::stable_sort(pending.begin(), pending.end(),
                   [&](size_t a, size_t b) { return lower_bound[a] < lower_bound[b]; });
  auto search = [&](size_t i) {
    PlanCandidate& c = candidates[i];
    const HardwareSpec& gpu = gpus[gpu_of[i]];
    auto run = [&](PlanLoad kind, double value, bool early_stop) {
      return run_one(i, kind, value, early_stop);
    };
    const Evaluation& probe = probes[i];
    double lo = 0;
    double hi = qps ? c.capacity : 2.0 * c.max_num_seqs;
    std::string fail_reason = "throughput";
    for (int step = 0; step < kMaxSearchSteps; ++step) {
      const double mid = qps ? (lo + hi) / 2 : std::floor((lo + hi) / 2);
      if (mid <= lo) break;
      Evaluation e = run(o.load, mid, true);
      if (e.pass) {
        lo = mid;
        c.at_sustained = e.summary;
      } else {
        hi = mid;
        fail_reason = e.failed;
      }
      if (lo > 0 && hi - lo <= std::max(qps ? 0.0 : 1.0, kStopRelativeWidth * hi)) break;
    }
    c.sustained = lo;
    if (lo == 0) {
      // Measure how far off the SLOs are at the lowest load tried, in full.
      const Evaluation floor_run = run(o.load, qps ? hi : std::max(1.0, hi), false);
      c.status = CandidateStatus::kSloUnreachable;
      c.limit = "SLO " + fail_reason;
      c.gap = 1;
      std::string worst;
      for (const SloTarget& s : o.slos) {
        const double v = slo_value(floor_run.summary, s);
        if (std::isnan(v)) continue;
        if (v / s.limit_s >= c.gap) {
          c.gap = v / s.limit_s;
          worst = s.name();
          c.reason = s.name() + " is " + format_number("%.1f ms", v * 1e3) + " at " +
                     load_text(o.load, qps ? hi : std::max(1.0, hi)) +
                     format_number(" (limit %.1f ms)", s.limit_s * 1e3);
          c.suggestion = "relax " + s.name() +
                         format_number(" to %.0f ms", std::ceil(v * 1.05 * 1e3)) +
                         ", or use a faster GPU / a larger TP";
        }
      }
      if (worst.empty()) {
        c.reason = "misses " + fail_reason + " even at " + load_text(o.load, hi);
        c.suggestion = "a faster GPU or a larger TP";
      }
      c.predicted = floor_run.summary;
      return;
    }
    const double capacity_load = qps ? c.capacity : c.max_num_seqs;
    if (fail_reason != "throughput" && lo < kCapacityLimitedFraction * capacity_load) {
      c.limit = "SLO " + fail_reason;
    } else {
      c.limit = capacity_limit(c, gpu, base.model, plans[i], probe);
    }
    c.reason = "sustains " + load_text(o.load, lo) + " per replica; limited by " + c.limit;
    c.replicas = static_cast<int>(std::ceil(o.target_load / lo - 1e-9));
    c.predicted = c.at_sustained;
    price_out(c, o);
    within_limits(c, o);
  };
  std::vector<double> feasible_costs;
  for (size_t start = 0; start < pending.size(); start += kSearchWave) {
    double bound = std::numeric_limits<double>::infinity();
    if (!o.search_all && feasible_costs.size() >= static_cast<size_t>(o.top_k)) {
      std::sort(feasible_costs.begin(), feasible_costs.end());
      bound = feasible_costs[static_cast<size_t>(o.top_k) - 1];
    }
    std::vector<size_t> wave;
    for (size_t k = start; k < std::min(pending.size(), start + kSearchWave); ++k) {
      const size_t i = pending[k];
      if (lower_bound[i] > bound) {
        PlanCandidate& c = candidates[i];
        c.status = CandidateStatus::kDominated;
        c.limit = "cost";
        c.reason = format_number("costs at least $%.2f/hour", lower_bound[i]) +
                   format_number(" (capacity %.3g req/s per replica)", c.capacity) +
                   format_number(", more than the top %.0f found", o.top_k) +
                   format_number(" ($%.2f/hour)", bound);
        c.gap = lower_bound[i];
      } else {
        wave.push_back(i);
      }
    }
    report.searched += wave.size();
    share_for(
        share, wave.size(), o.threads, [&](size_t k) { search(wave[k]); },
        [&](size_t k, ByteWriter& out) { pack_candidate(wave[k], out); },
        [&](size_t k, ByteReader& in) { unpack_candidate(wave[k], in); });
    for (size_t i : wave) {
      if (candidates[i].status == CandidateStatus::kFeasible) {
        feasible_costs.push_back(candidates[i].cost_per_hour);
      }
    }
  }

  // Verify the cheapest K with the whole cluster at the target load.
  std::vector<size_t> order(candidates.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rank_before(candidates[a], candidates[b]); });
  std::vector<size_t> to_verify;
  for (size_t i : order) {
    if (candidates[i].status != CandidateStatus::kFeasible) break;
    if (to_verify.size() == static_cast<size_t>(o.top_k)) break;
    to_verify.push_back(i);
  }
  auto verify = [&](size_t k) {
    PlanCandidate& c = candidates[to_verify[k]];
    const HardwareSpec& gpu = gpus[gpu_of[to_verify[k]]];
    const int first = c.replicas;
    std::string missed;
    for (int r = first; r <= first + kExtraVerifyReplicas; ++r) {
      PlanCandidate trial = c;
      trial.replicas = r;
      trial.total_gpus = r * c.gpus_per_replica;
      trial.cost_per_hour = trial.total_gpus * c.price_per_gpu_hour;
      if (!within_limits(trial, o)) break;
      const uint64_t requests =
          o.requests * std::min<uint64_t>(static_cast<uint64_t>(r), kMaxVerifyRequestScale);
      const SimulationConfig cfg = context.config(gpu, c, r, o.load, o.target_load, requests);
      ++c.evaluations;
      const Evaluation e =
          context.evaluate(cfg, o.load == PlanLoad::kQps ? o.target_load : std::nan(""), false);
      if (e.pass) {
        c.replicas = r;
        c.verified = true;
        c.predicted = e.summary;
        price_out(c, o);
        if (r > first)
          c.reason += "; verification added " + std::to_string(r - first) + " replica(s)";
        return;
      }
      missed = e.failed;
    }
    c.status = CandidateStatus::kSloUnreachable;
    c.reason = "the full-cluster simulation at the target misses " +
               (missed.empty() ? std::string("the limits") : missed) + " with up to " +
               std::to_string(first + kExtraVerifyReplicas) + " replicas";
    c.suggestion = "more replicas than the single-replica search predicts";
    c.gap = 1;
  };
  share_for(
      share, to_verify.size(), o.threads, verify,
      [&](size_t k, ByteWriter& out) { pack_candidate(to_verify[k], out); },
      [&](size_t k, ByteReader& in) { unpack_candidate(to_verify[k], in); });

  for (const PlanCandidate& c : candidates)
    report.simulations += static_cast<uint64_t>(c.evaluations);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rank_before(candidates[a], candidates[b]); });
  std::vector<size_t> rank_of(candidates.size());
  for (size_t r = 0; r < order.size(); ++r) {
    rank_of[order[r]] = r;
    report.candidates.push_back(candidates[order[r]]);
  }

  // Pareto frontier over every searched candidate: at its SLO-bound load and saturated.
  std::vector<ParetoPoint> points;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const PlanCandidate& c = candidates[i];
    auto add = [&](const MetricsSummary& m, const char* load) {
      if (!(m.tpot.mean_s > 0) || !(m.output_throughput > 0)) return;
      points.push_back(
          {rank_of[i], load, 1.0 / m.tpot.mean_s, m.output_throughput / c.gpus_per_replica});
    };
    if (c.sustained > 0) add(c.at_sustained, "slo");
    if (probes[i].summary.completed > 0) add(probes[i].summary, "saturation");
  }
  std::sort(points.begin(), points.end(), [](const ParetoPoint& a, const ParetoPoint& b) {
    if (a.tokens_per_s_per_user != b.tokens_per_s_per_user)
      return a.tokens_per_s_per_user > b.tokens_per_s_per_user;
    if (a.tokens_per_s_per_gpu != b.tokens_per_s_per_gpu)
      return a.tokens_per_s_per_gpu > b.tokens_per_s_per_gpu;
    return a.candidate < b.candidate;
  });
  double best_per_gpu = -1;
  for (const ParetoPoint& p : points) {
    if (p.tokens_per_s_per_gpu > best_per_gpu) {
      best_per_gpu = p.tokens_per_s_per_gpu;
      report.pareto.push_back(p);
    }
  }
  std::reverse(report.pareto.begin(), report.pareto.end());
  return report;
}

}  // namespace servesim
