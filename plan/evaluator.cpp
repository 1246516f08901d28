#include "plan/evaluator.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace servesim {
namespace {

// An open-loop run keeps up when completed requests/s reach this fraction of the offered
// rate; below it the queue grows without bound and a longer run would miss every SLO.
constexpr double kMinThroughputFraction = 0.9;

}  // namespace

Evaluator::Evaluator(const PlanOptions& options, SimulationConfig base, nlohmann::json open_arrival,
                     nlohmann::json kv_transfer)
    : slos_(options.slos),
      max_error_rate_(options.max_error_rate),
      target_load_(options.load),
      base_(std::move(base)),
      open_arrival_(std::move(open_arrival)),
      kv_transfer_(std::move(kv_transfer)) {
  const WorkloadSpec& w = base_.workload;
  reuses_prefixes_ =
      w.shared_prefix.has_value() || w.multi_turn.has_value() || w.distinct_prompts > 0;
  longest_request_tokens_ =
      w.prompt_tokens.distribution().max() + w.output_tokens.distribution().max();
  if (!open_arrival_.is_null()) {
    base_mean_qps_ = ArrivalProcess::from_json(open_arrival_, "workload.arrival").mean_rate_qps();
  }
}

SimulationConfig Evaluator::config(const HardwareSpec& gpu, const HardwareSpec& prefill_gpu,
                                   const PlanCandidate& c, int replicas, PlanLoad load,
                                   double value, uint64_t requests) const {
  SimulationConfig cfg = base_;
  cfg.gpu = gpu;
  // An expert-parallel replica is a whole server of c.dp lock-stepped data-parallel ranks.
  cfg.parallel.tp = c.tp;
  cfg.parallel.pp = c.pp;
  cfg.parallel.enable_expert_parallel = c.expert_parallel;
  cfg.parallel.dp = c.expert_parallel ? c.dp : replicas;
  cfg.parallel.servers = c.expert_parallel ? replicas : 1;
  cfg.engine.max_num_seqs = c.max_num_seqs;
  cfg.engine.kv_offloading_size_gib = c.engine.kv_offloading_size_gib;
  cfg.engine.kv_offloading_bandwidth_Bps = c.engine.kv_offloading_bandwidth_Bps;
  cfg.engine.speculative = c.engine.speculative;
  if (c.disaggregated()) {
    set_disaggregation(cfg, gpu, prefill_gpu, c, replicas);
  } else {
    cfg.disaggregation.enabled = false;
    cap_kv_blocks(cfg, c);
  }
  // The planner deploys every aggregated replica as a vllm serve of its own, each with its own
  // API server, where one simulated deployment of dp replicas has the one that `vllm serve
  // --data-parallel-size` starts. (A disaggregated deployment's decode instances have theirs
  // in the simulation itself.)
  if (cfg.service.enabled && !c.disaggregated()) cfg.service.frontend.station.workers *= replicas;
  cfg.metrics.price_per_gpu_hour = 0;  // each GPU's own catalog price
  cfg.sample_interval_s = 0;
  cfg.workload.num_requests = requests;
  cfg.workload.steps.clear();
  set_load(cfg.workload, load, value);
  return cfg;
}

KvTransferSpec Evaluator::kv_transfer(const HardwareSpec& prefill,
                                      const HardwareSpec& decode) const {
  if (kv_transfer_.is_null()) return KvTransferSpec();
  return KvTransferSpec::from_json(kv_transfer_, "disaggregation.kv_transfer", prefill, decode);
}

const EngineConfig& Evaluator::role_engine(bool prefill) const {
  const DisaggregationSpec& d = base_.disaggregation;
  if (!d.enabled) return base_.engine;
  return prefill ? d.prefill.engine : d.decode.engine;
}

// `groups` copies of the candidate's group: its instance counts scaled, each role's own GPU, TP,
// expert placement (an instance: one server of c.dp ranks) and the engine flags it starts
// from with the candidate's max_num_seqs, speculation and host KV tier for that role.
void Evaluator::set_disaggregation(SimulationConfig& cfg, const HardwareSpec& gpu,
                                   const HardwareSpec& prefill_gpu, const PlanCandidate& c,
                                   int groups) const {
  DisaggregationSpec& d = cfg.disaggregation;
  d.enabled = true;
  d.kv_transfer = kv_transfer(prefill_gpu, gpu);
  for (const bool prefill : {true, false}) {
    DisaggregatedRole& role = prefill ? d.prefill : d.decode;
    role.instances = groups * (prefill ? c.prefill_instances : c.decode_instances);
    role.gpu = prefill ? prefill_gpu : gpu;
    role.parallel = base_.parallel;
    role.parallel.tp = prefill ? c.prefill_tp : c.tp;
    role.parallel.pp = c.pp;
    role.parallel.dp = c.dp;
    role.parallel.enable_expert_parallel = c.expert_parallel;
    role.parallel.servers = 1;
    role.engine = role_engine(prefill);
    role.engine.max_num_seqs = prefill ? c.prefill_engine.max_num_seqs : c.max_num_seqs;
    const EngineConfig& candidate = prefill ? c.prefill_engine : c.engine;
    role.engine.speculative = candidate.speculative;
    role.engine.kv_offloading_size_gib = candidate.kv_offloading_size_gib;
    role.engine.kv_offloading_bandwidth_Bps = candidate.kv_offloading_bandwidth_Bps;
  }
  cfg.parallel.dp = 1;
  cfg.parallel.servers = 1;
}

// Blocks beyond what max_num_seqs sequences of the longest request can hold are never used
// when no prefix is ever reused, yet allocating them costs more than a short run on a large
// deployment; capping them leaves every scheduling decision unchanged.
void Evaluator::cap_kv_blocks(SimulationConfig& cfg, const PlanCandidate& c) const {
  if (cfg.engine.num_gpu_blocks_override || reuses_prefixes_) return;
  const double per_seq = std::min<double>(c.engine.max_model_len, longest_request_tokens_);
  const int64_t per_seq_blocks = static_cast<int64_t>(std::ceil(per_seq / c.engine.block_size)) + 1;
  // vLLM refuses a cache that cannot hold one max_model_len sequence, however few run at once.
  const int64_t one_full_sequence =
      (c.engine.max_model_len + c.engine.block_size - 1) / c.engine.block_size;
  const int64_t needed =
      std::max(static_cast<int64_t>(c.max_num_seqs) * per_seq_blocks, one_full_sequence);
  if (needed < c.kv_cache_tokens / c.engine.block_size) {
    cfg.engine.num_gpu_blocks_override = needed;
  }
}

void Evaluator::set_load(WorkloadSpec& w, PlanLoad load, double value) const {
  if (load == PlanLoad::kConcurrency) {
    // Clients of a closed-loop scenario keep their think time when the target counts
    // clients; the saturation probe of a QPS plan wants a full batch, so none.
    if (w.kind != WorkloadKind::kClosedLoop || target_load_ == PlanLoad::kQps) {
      w.think_time_s = Distribution::fixed(0.0);
    }
    w.kind = WorkloadKind::kClosedLoop;
    w.clients = std::max(1, static_cast<int>(value));
    return;
  }
  w.kind = WorkloadKind::kOpenLoop;
  if (open_arrival_.is_null()) {
    w.arrival = ArrivalProcess::poisson(value);
    return;
  }
  // Scale the scenario's own process so its burstiness (gamma CV, on/off) is kept.
  nlohmann::json a = open_arrival_;
  a["rate_qps"] = a["rate_qps"].get<double>() * value / base_mean_qps_;
  w.arrival = ArrivalProcess::from_json(a, "workload.arrival");
}

Evaluation Evaluator::evaluate(const SimulationConfig& cfg, double offered_qps,
                               bool early_stop) const {
  Simulation simulation(cfg);
  SloWatch watch(slos_, max_error_rate_, cfg.workload.num_requests, cfg.metrics);
  NullObserver quiet;
  Observer& observer = early_stop ? static_cast<Observer&>(watch) : quiet;
  const SimulationResult result = simulation.run(observer);
  Evaluation e;
  e.summary = result.summary;
  e.steps = result.replicas.empty() ? 0 : result.replicas.front().steps;
  e.failed = watch.failed();
  if (e.failed.empty()) e.failed = first_missed_slo(result.summary, slos_);
  if (!e.failed.empty()) return e;
  const double errors = std::isnan(result.summary.error_rate) ? 0 : result.summary.error_rate;
  if (errors > max_error_rate_) {
    e.failed = "error rate";
    return e;
  }
  // Held to the rate this run's arrivals had when it is below the rate asked: 100 Poisson
  // arrivals can come 13% slower than asked, and the same draws scaled do at every load, so
  // comparing with the rate asked refused such a run at any load.
  const double arrived_qps = std::isnan(result.summary.arrival_rate)
                                 ? offered_qps
                                 : std::min(offered_qps, result.summary.arrival_rate);
  if (!std::isnan(offered_qps) &&
      !(result.summary.request_throughput >= kMinThroughputFraction * arrived_qps)) {
    e.failed = "throughput";
    return e;
  }
  e.pass = true;
  return e;
}

}  // namespace servesim
