#include "calibration/serving/serving_case_builder.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "calibration/measured/measured_run_reader.h"
#include "models/config_error.h"
#include "models/cuda_graph_mode.h"
#include "models/engine_config.h"
#include "models/hardware_spec.h"
#include "sim/workload/replay_source.h"

namespace servesim {
namespace {

// Lower-case letters and digits only, without a vendor prefix: "NVIDIA H100_SXM" -> "h100sxm".
std::string normalised(const std::string& name) {
  std::string out;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (out.rfind("nvidia", 0) == 0) out.erase(0, 6);
  return out;
}

// Names agree when one contains the other once normalised ("h100sxm" and "h100";
// "qwenqwen332b" and "qwen332b"), or when they name the same catalog entry.
bool same_name(const std::string& recorded, const std::vector<std::string>& ours) {
  const std::string r = normalised(recorded);
  for (const std::string& name : ours) {
    const std::string o = normalised(name);
    if (!o.empty() && (r.find(o) != std::string::npos || o.find(r) != std::string::npos))
      return true;
  }
  return false;
}

void check_model(const MeasuredRun& run, const SimulationConfig& base, const Catalog& catalog) {
  if (run.model.empty()) return;
  std::string resolved;
  try {
    resolved = catalog.resolve_checkpoint_name(run.model).name;
  } catch (const ConfigError&) {
  }
  if (resolved == base.model.name || same_name(run.model, {base.model.name, base.model.hf_repo}))
    return;
  throw ConfigError(run.source + ": the run served model '" + run.model +
                    "', the scenario deploys '" + base.model.name +
                    "'; pass the run's model (--model or the scenario's \"model\")");
}

void check_gpu(const MeasuredRun& run, const SimulationConfig& base) {
  if (run.gpu.empty()) return;
  std::vector<std::string> ours = base.gpu.aliases;
  ours.push_back(base.gpu.name);
  if (same_name(run.gpu, ours)) return;
  throw ConfigError(run.source + ": the run was measured on GPU '" + run.gpu +
                    "', the scenario deploys '" + base.gpu.name +
                    "'; pass the run's GPU (--gpu or the scenario's \"gpu\")");
}

double tokens_per_request(double stated, uint64_t total, uint64_t completed) {
  if (std::isfinite(stated) && stated > 0) return stated;
  if (completed > 0 && total > 0) return static_cast<double>(total) / completed;
  return MeasuredRequest::kNone;
}

// The load shape, issuing `count` requests.
void set_load(const MeasuredLoad& load, uint64_t count, WorkloadSpec& w) {
  if (load.max_concurrency) {
    w.kind = WorkloadKind::kClosedLoop;
    w.clients = *load.max_concurrency;
  } else if (std::isfinite(load.request_rate_per_s)) {
    w.kind = WorkloadKind::kOpenLoop;
    w.arrival = load.burstiness == 1.0 ? ArrivalProcess::poisson(load.request_rate_per_s)
                                       : ArrivalProcess::gamma(load.request_rate_per_s,
                                                               1.0 / std::sqrt(load.burstiness));
  } else {
    w.kind = WorkloadKind::kClosedLoop;  // every request sent at t = 0
    w.clients = static_cast<int>(std::min<uint64_t>(count, 1'000'000));
  }
  w.ramp_up_s = 0;
  w.think_time_s = Distribution::fixed(0.0);
}

// `tokens` exactly, or uniform in [range_ratio x tokens, tokens] (whole tokens, at least 1).
LengthDistribution length_of(double tokens, double range_ratio, const std::string& where) {
  const int most = std::max(1, static_cast<int>(std::lround(tokens)));
  if (range_ratio >= 1.0) return LengthDistribution::fixed(most);
  const int least = std::max(1, static_cast<int>(range_ratio * most));
  return LengthDistribution::from_json({{"type", "uniform"}, {"min", least}, {"max", most}}, where,
                                       "");
}

// Engine limits are summed in doubles (exact here) and capped at INT_MAX: a row's lengths may
// each be up to INT_MAX, and the scenario's own checks then refuse a max_model_len the model
// cannot take.
int capped_tokens(double tokens) {
  return static_cast<int>(std::min<double>(tokens, std::numeric_limits<int>::max()));
}

// --max-num-seqs = the row's clients, as both generated launches set it.
double sequences_for(uint64_t clients) {
  return std::min<double>(static_cast<double>(clients), 1'000'000);
}

// The limits BenchmarkProtocol::kAiconfiguratorGenerated describes, for `clients` in flight.
void set_generated_engine_limits(uint64_t clients, double prompt, double output,
                                 EngineConfig& engine) {
  const double margin = BenchmarkProtocol::kGeneratedTokenMargin;
  const double seqs = sequences_for(clients);
  engine.max_num_seqs = capped_tokens(seqs);
  engine.max_num_batched_tokens = capped_tokens(seqs + std::round(prompt) + margin);
  engine.max_model_len = capped_tokens(std::round(prompt) + std::round(output) + margin);
}

// The engine BenchmarkProtocol::kInferenceMaxRecipe describes, for `clients` in flight.
void set_inferencemax_engine(const MeasuredRun& run, uint64_t clients, double prompt, double output,
                             const HardwareSpec& gpu, EngineConfig& engine) {
  const double isl = std::round(prompt), osl = std::round(output);
  engine.max_num_seqs = capped_tokens(sequences_for(clients));
  if (gpu.name == BenchmarkProtocol::kInferenceMaxB200) {
    engine.max_num_seqs = BenchmarkProtocol::kInferenceMaxB200Sequences;
    engine.cudagraph_mode = CudaGraphMode::kFullDecodeOnly;
  }
  engine.max_num_batched_tokens = BenchmarkProtocol::kInferenceMaxTokenBudget;
  if (isl == 1024 && osl == 1024) {
    engine.max_model_len = capped_tokens(isl + osl + 20);
  } else if (isl == 8192 || osl == 8192) {
    engine.max_model_len = capped_tokens(isl + osl + 200);
  } else {
    engine.max_model_len = 10240;
  }
  engine.kv_cache_dtype = DType::kFp8;
  engine.async_scheduling = true;
  engine.enable_prefix_caching = false;
  if (run.engine_version.empty()) engine.vllm_version = VllmVersion::parse("0.10", run.source);
}

void set_aggregate_workload(const MeasuredRun& run, SimulationConfig& c) {
  const MetricsSummary& s = run.summary;
  const double prompt =
      tokens_per_request(run.prompt_tokens_per_request, s.input_tokens, s.completed);
  const double output =
      tokens_per_request(run.output_tokens_per_request, s.output_tokens, s.completed);
  if (!std::isfinite(prompt) || !std::isfinite(output))
    throw ConfigError(run.source +
                      ": the run records neither per-request lengths nor token totals; save it "
                      "with per-request data (vllm bench serve --save-detailed)");
  WorkloadSpec w;
  w.seed = c.workload.seed;
  // The base scenario says whether the benchmark reused a small dataset of prompts; the runs'
  // records do not.
  w.distinct_prompts = c.workload.distinct_prompts;
  uint64_t count = s.completed;
  double range_ratio = 1.0;
  if (count == 0) {
    const BenchmarkProtocol& p = run.protocol;
    const uint64_t clients = static_cast<uint64_t>(run.load.max_concurrency.value_or(1));
    count = std::max<uint64_t>(static_cast<uint64_t>(p.requests_per_client) * clients,
                               static_cast<uint64_t>(p.min_requests));
    c.metrics.warmup_requests = static_cast<uint64_t>(p.warmup_per_client) * clients;
    range_ratio = p.range_ratio;
    switch (p.engine_launch) {
      case BenchmarkProtocol::EngineLaunch::kVllmDefaults:
        break;
      case BenchmarkProtocol::EngineLaunch::kAiconfiguratorGenerated:
        set_generated_engine_limits(clients, prompt, output, c.engine);
        break;
      case BenchmarkProtocol::EngineLaunch::kInferenceMaxRecipe:
        set_inferencemax_engine(run, clients, prompt, output, c.gpu, c.engine);
        break;
    }
  } else {
    c.metrics.warmup_requests = 0;
  }
  w.prompt_tokens = length_of(prompt, range_ratio, run.source + ": prompt tokens");
  w.output_tokens = length_of(output, range_ratio, run.source + ": output tokens");
  w.num_requests = count;
  set_load(run.load, count, w);
  c.workload = w;
}

bool measured_any(const MetricsSummary& s) {
  for (const ServingMetricSpec& m : serving_metric_specs())
    if (m.fitted && std::isfinite(m.get(s)) && m.get(s) > 0) return true;
  return false;
}

}  // namespace

ServingFitCase make_serving_case(const MeasuredRun& run, const SimulationConfig& base,
                                 const Catalog& catalog) {
  check_model(run, base, catalog);
  check_gpu(run, base);
  if (!measured_any(run.summary))
    throw ConfigError(run.source + ": the run measured no TTFT, TPOT, E2E or throughput to fit to");
  ServingFitCase out{run.source, base, run.summary};
  if (run.tensor_parallel_size > 0) out.config.parallel.tp = run.tensor_parallel_size;
  if (run.pipeline_parallel_size > 0) out.config.parallel.pp = run.pipeline_parallel_size;
  if (run.weight_dtype) out.config.engine.dtype = run.weight_dtype;
  if (!run.engine_version.empty())
    out.config.engine.vllm_version =
        VllmVersion::parse(run.engine_version, run.source + ": engine_version");
  out.config.sample_interval_s = 0;
  if (run.requests.empty()) {
    set_aggregate_workload(run, out.config);
  } else {
    WorkloadSpec w;
    w.seed = base.workload.seed;
    w.replay = std::make_shared<const ReplaySpec>(replay_spec_from(run));
    out.config.workload = w;
    out.config.metrics.warmup_requests = 0;
  }
  return out;
}

std::vector<bool> held_out_runs(size_t count, double fraction) {
  if (!(fraction >= 0 && fraction < 1))
    throw ConfigError("--holdout: must be a fraction in [0, 1), e.g. 0.25 (got " +
                      std::to_string(fraction) + ")");
  // floor(count x fraction) < count runs are held out, so at least one is always fitted.
  std::vector<bool> out(count, false);
  for (size_t i = 0; i < count; ++i)
    out[i] = std::floor((i + 1) * fraction) > std::floor(i * fraction);
  return out;
}

}  // namespace servesim
