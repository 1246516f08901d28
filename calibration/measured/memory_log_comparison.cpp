#include "calibration/measured/memory_log_comparison.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "models/config_error.h"

namespace servesim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

ModelSpec model_of_log(const std::string& name, const Catalog& catalog, const std::string& origin) {
  try {
    return catalog.resolve_checkpoint_name(name);
  } catch (const ConfigError&) {
    throw ConfigError(origin + ": the log's model '" + name +
                      "' is not in the catalog; pass --model NAME or --model config.json");
  }
}

std::optional<DType> weights_dtype_of_log(const VllmStartupLog& log) {
  if (log.quantization && *log.quantization == "fp8") return DType::kFp8;
  if (log.quantization) return std::nullopt;  // other schemes: the checkpoint's own
  if (log.dtype && *log.dtype == "float16") return DType::kFp16;
  if (log.dtype && *log.dtype == "float32") return DType::kFp32;
  return std::nullopt;
}

std::string cell(const MemoryLogComparison::Term& t, double v) {
  char buf[48];
  if (t.unit == "bytes") {
    std::snprintf(buf, sizeof buf, "%.2f GiB", v / kGiB);
  } else if (t.unit == "x") {
    std::snprintf(buf, sizeof buf, "%.2fx", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  }
  return buf;
}

// KV bytes the log's blocks stand for, mid-block since vLLM floors the division; the GiB
// figure (rounded to 0.01 GiB, and rank 0's where workers differ) only when it gives none.
std::optional<int64_t> log_kv_bytes(const VllmStartupLog& log, const MemoryPlan& plan) {
  std::optional<int64_t> blocks = log.num_gpu_blocks;
  if (!blocks && log.kv_cache_tokens) blocks = *log.kv_cache_tokens / plan.engine.block_size;
  if (!blocks) return log.kv_bytes();
  return static_cast<int64_t>((static_cast<double>(*blocks) + 0.5) *
                              static_cast<double>(plan.page_bytes) * plan.layers_per_gpu);
}

}  // namespace

ModelSpec model_named_in_log(const VllmStartupLog& log, const Catalog& catalog) {
  if (!log.model) {
    throw ConfigError(log.origin +
                      ": the log names no model (no 'Initializing ... with config: model=...' "
                      "line); pass --model");
  }
  return model_of_log(*log.model, catalog, log.origin);
}

void deployment_from_log(const VllmStartupLog& log, const GivenSettings& given,
                         ParallelConfig& parallel, EngineConfig& engine) {
  if (!given.tp && log.tensor_parallel_size) parallel.tp = *log.tensor_parallel_size;
  if (!given.pp && log.pipeline_parallel_size) parallel.pp = *log.pipeline_parallel_size;
  if (!given.dtype) engine.dtype = weights_dtype_of_log(log);
  if (!given.kv_cache_dtype && log.kv_cache_dtype && log.kv_cache_dtype->starts_with("fp8")) {
    engine.kv_cache_dtype = DType::kFp8;
  }
  if (!given.max_model_len && log.max_model_len) engine.max_model_len = *log.max_model_len;
  if (!given.gpu_memory_utilization && log.gpu_memory_utilization) {
    engine.gpu_memory_utilization = *log.gpu_memory_utilization;
  }
  if (!given.max_num_seqs && log.max_num_seqs) engine.max_num_seqs = *log.max_num_seqs;
  if (!given.max_num_batched_tokens && log.max_num_batched_tokens) {
    engine.max_num_batched_tokens = *log.max_num_batched_tokens;
  }
  if (!given.block_size && log.block_size) engine.block_size = *log.block_size;
  if (!given.enforce_eager && log.enforce_eager) engine.enforce_eager = *log.enforce_eager;
  if (!given.enable_chunked_prefill && log.enable_chunked_prefill) {
    engine.enable_chunked_prefill = *log.enable_chunked_prefill;
  }
  if (!given.vllm_version && log.unmodelled_version) {
    throw ConfigError(*log.unmodelled_version + "; or pass --vllm-version " +
                      kNewestModelledVllm.to_string() + " to compare the log as that release");
  }
  if (!given.vllm_version && log.version) engine.vllm_version = *log.version;
  if (!given.gpu_memory_bytes && log.total_bytes) engine.gpu_memory_bytes = *log.total_bytes;
}

MemoryLogComparison MemoryLogComparison::compare(const VllmStartupLog& log,
                                                 const MemoryPlan& plan) {
  MemoryLogComparison c{log, plan, {}};
  auto num = [](int64_t v) { return static_cast<double>(v); };
  auto logged = [&](const std::optional<int64_t>& v) -> std::optional<double> {
    if (!v) return std::nullopt;
    return num(*v);
  };
  auto add = [&](const char* key, const char* label, const char* unit, std::optional<double> l,
                 double s) {
    c.terms.push_back({key, label, unit, l, s});
  };
  add("total_bytes", "total memory", "bytes", logged(log.total_bytes), num(plan.total_bytes));
  add("requested_bytes", "requested", "bytes", logged(log.requested_bytes),
      num(plan.requested_bytes));
  add("weights_bytes", "model weights", "bytes",
      logged(log.weights_bytes ? log.weights_bytes : log.model_loading_bytes),
      num(plan.weights_bytes));
  add("activation_bytes", "activation peak", "bytes", logged(log.activation_bytes),
      num(plan.activation_bytes));
  add("non_torch_bytes", "non-torch", "bytes", logged(log.non_torch_bytes),
      num(plan.non_torch_bytes));
  // Releases before 0.21 subtract no graph memory: the log's 0 is implied by its version.
  std::optional<double> graphs_subtracted = logged(log.cuda_graph_estimate_bytes);
  if (!graphs_subtracted && log.version && !log.version->subtracts_cuda_graphs()) {
    graphs_subtracted = 0;
  }
  add("cuda_graph_subtracted_bytes", "CUDA graphs subtracted", "bytes", graphs_subtracted,
      num(plan.cuda_graph_subtracted_bytes()));
  const double capture = plan.cuda_graph_subtracted && !plan.engine.cuda_graph_memory_bytes
                             ? num(plan.cuda_graph_bytes) / kCudaGraphEstimateOverCapture
                             : num(plan.cuda_graph_bytes);
  add("cuda_graph_captured_bytes", "CUDA graph capture", "bytes",
      logged(log.cuda_graph_captured_bytes), capture);
  add("kv_cache_bytes", "KV cache memory", "bytes", logged(log.kv_bytes()),
      num(plan.kv_cache_bytes));
  const int block = plan.engine.block_size;
  std::optional<double> blocks = logged(log.num_gpu_blocks);
  if (!blocks && log.kv_cache_tokens) blocks = num(*log.kv_cache_tokens / block);
  add("num_gpu_blocks", "GPU blocks", "blocks", blocks, num(plan.num_gpu_blocks));
  std::optional<double> tokens = logged(log.kv_cache_tokens);
  if (!tokens && log.num_gpu_blocks) tokens = num(*log.num_gpu_blocks * block);
  add("kv_cache_tokens", "KV cache tokens", "tokens", tokens, num(plan.kv_cache_tokens));
  add("max_concurrency", "max concurrency", "x", log.max_concurrency, plan.max_concurrency);
  return c;
}

const MemoryLogComparison::Term* MemoryLogComparison::term(const std::string& key) const {
  for (const Term& t : terms) {
    if (t.key == key) return &t;
  }
  return nullptr;
}

std::optional<double> MemoryLogComparison::kv_tokens_error() const {
  const Term* t = term("kv_cache_tokens");
  if (t == nullptr || !t->log || *t->log <= 0) return std::nullopt;
  return t->servesim / *t->log - 1.0;
}

nlohmann::json MemoryLogComparison::to_json() const {
  nlohmann::json terms_json = nlohmann::json::object();
  for (const Term& t : terms) {
    nlohmann::json j{{"unit", t.unit}, {"servesim", t.servesim}};
    j["log"] = t.log ? nlohmann::json(*t.log) : nlohmann::json(nullptr);
    j["difference"] = t.log ? nlohmann::json(t.servesim - *t.log) : nlohmann::json(nullptr);
    terms_json[t.key] = j;
  }
  nlohmann::json j{{"log", log.origin}, {"terms", terms_json}, {"plan", plan.to_json()}};
  j["log_vllm_version"] = log.version_text ? nlohmann::json(*log.version_text) : nullptr;
  const auto err = kv_tokens_error();
  j["kv_tokens_error"] = err ? nlohmann::json(*err) : nlohmann::json(nullptr);
  return j;
}

std::string MemoryLogComparison::to_table() const {
  std::ostringstream out;
  char line[256];
  std::snprintf(
      line, sizeof line, "%s vs servesim: %s on %d x %s (TP %d, PP %d), vLLM %s\n\n",
      log.origin.c_str(), plan.model_name.c_str(), plan.parallel.gpus_per_replica(),
      plan.gpu_name.c_str(), plan.parallel.tp, plan.parallel.pp,
      log.version_text ? log.version_text->c_str() : plan.engine.vllm_version.to_string().c_str());
  out << line;
  std::snprintf(line, sizeof line, "  %-24s %14s %14s %14s %8s\n", "per GPU", "log", "servesim",
                "difference", "%");
  out << line;
  for (const Term& t : terms) {
    const std::string l = t.log ? cell(t, *t.log) : "-";
    const std::string diff = t.log ? cell(t, t.servesim - *t.log) : "-";
    std::string pct = "-";
    if (t.log && std::abs(*t.log) > 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%+.1f%%", (t.servesim / *t.log - 1.0) * 100.0);
      pct = buf;
    }
    std::snprintf(line, sizeof line, "  %-24s %14s %14s %14s %8s\n", t.label.c_str(), l.c_str(),
                  cell(t, t.servesim).c_str(), diff.c_str(), pct.c_str());
    out << line;
  }
  return out.str();
}

MemoryLogFit MemoryLogFit::fit(const VllmStartupLog& log, const ModelSpec& model,
                               const HardwareSpec& gpu, const ParallelConfig& parallel,
                               const EngineConfig& engine) {
  const MemoryPlan base = MemoryPlan::compute_unchecked(model, gpu, parallel, engine);
  const std::optional<int64_t> target = log_kv_bytes(log, base);
  if (!target) {
    throw ConfigError(log.origin +
                      ": --fit needs the log's KV figure ('Available KV cache "
                      "memory', 'GPU KV cache size' or '# GPU blocks')");
  }
  MemoryLogFit f;
  f.activation_bytes = log.activation_bytes ? *log.activation_bytes : base.activation_bytes;
  f.activation_source = log.activation_bytes ? "log" : "servesim";
  if (log.cuda_graph_estimate_bytes) {
    f.cuda_graph_bytes = *log.cuda_graph_estimate_bytes;
    f.cuda_graph_source = "log";
  } else {
    f.cuda_graph_bytes = base.cuda_graph_subtracted_bytes();
    f.cuda_graph_source = base.cuda_graph_subtracted ? "servesim" : "not subtracted";
  }
  // What the log's KV figure leaves for the overhead servesim cannot see in it.
  f.non_torch_bytes =
      base.requested_bytes - base.weights_bytes - f.activation_bytes - f.cuda_graph_bytes - *target;
  if (f.non_torch_bytes < 0) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  ": the log's KV memory (%.2f GiB) exceeds what servesim's weights (%.2f GiB) "
                  "and activations leave by %.2f GiB; check --model, --dtype and --tp",
                  static_cast<double>(*target) / kGiB,
                  static_cast<double>(base.weights_bytes) / kGiB,
                  static_cast<double>(-f.non_torch_bytes) / kGiB);
    throw ConfigError(log.origin + buf);
  }
  EngineConfig fitted = engine;
  fitted.non_torch_memory_bytes = f.non_torch_bytes;
  fitted.activation_memory_bytes = f.activation_bytes;
  fitted.cuda_graph_memory_bytes = f.cuda_graph_bytes;
  f.plan = MemoryPlan::compute_unchecked(model, gpu, parallel, fitted);
  return f;
}

nlohmann::json MemoryLogFit::engine_keys() const {
  auto gib = [](int64_t b) { return std::round(static_cast<double>(b) / kGiB * 1e4) / 1e4; };
  return {{"non_torch_memory_gib", gib(non_torch_bytes)},
          {"activation_memory_gib", gib(activation_bytes)},
          {"cuda_graph_memory_gib", gib(cuda_graph_bytes)}};
}

nlohmann::json MemoryLogFit::to_json() const {
  return {{"engine", engine_keys()},
          {"activation_source", activation_source},
          {"cuda_graph_source", cuda_graph_source},
          {"kv_cache_tokens", plan.kv_cache_tokens},
          {"num_gpu_blocks", plan.num_gpu_blocks}};
}

std::string MemoryLogFit::to_text() const {
  std::ostringstream out;
  out << "\nfit: non-torch " << engine_keys()["non_torch_memory_gib"].get<double>()
      << " GiB (what the log's KV figure leaves), activation "
      << engine_keys()["activation_memory_gib"].get<double>() << " GiB (" << activation_source
      << "), CUDA graphs " << engine_keys()["cuda_graph_memory_gib"].get<double>() << " GiB ("
      << cuda_graph_source << ") -> " << plan.kv_cache_tokens << " KV tokens\n";
  out << "engine keys for the scenario: {\"engine\": " << engine_keys().dump() << "}\n";
  return out.str();
}

}  // namespace servesim
