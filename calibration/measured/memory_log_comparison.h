// MemoryLogComparison: servesim's MemoryPlan set beside what a vLLM start-up log printed,
// term by term (total, requested, weights, activation, non-torch, CUDA graphs, KV bytes,
// blocks, tokens, max concurrency), and MemoryLogFit: the per-GPU non-torch overhead and
// activation / CUDA-graph terms that make servesim's KV figure match the log's, as the
// engine JSON keys that carry them.
//
// deployment_from_log() turns a log into the model, parallelism and engine flags it states,
// each unless the caller's flags already set it (flags win: the caller says which it was
// given). Plain values; thread-safe. Throws ConfigError with the fix on bad input.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "calibration/measured/vllm_startup_log.h"
#include "models/catalog.h"
#include "models/memory_plan.h"

namespace servesim {

// Which deployment settings the caller fixed itself; the log fills in the others.
struct GivenSettings {
  bool tp = false;
  bool pp = false;
  bool dtype = false;
  bool kv_cache_dtype = false;
  bool max_model_len = false;
  bool gpu_memory_utilization = false;
  bool max_num_seqs = false;
  bool max_num_batched_tokens = false;
  bool block_size = false;
  bool enforce_eager = false;
  bool enable_chunked_prefill = false;
  bool vllm_version = false;
  bool gpu_memory_bytes = false;
};

// The catalog model the log's config line names, looked up by Hugging Face repository, also
// without an -Instruct/-Chat/-FP8/-hf suffix; none or not found: ConfigError asking for --model.
ModelSpec model_named_in_log(const VllmStartupLog& log, const Catalog& catalog);

// Fills in `parallel` and `engine` from the log where `given` leaves them free. A log of a
// release servesim does not model is refused unless the caller gave the version.
void deployment_from_log(const VllmStartupLog& log, const GivenSettings& given,
                         ParallelConfig& parallel, EngineConfig& engine);

struct MemoryLogComparison {
  // One term: the log's figure when it printed one, servesim's, in `unit`.
  struct Term {
    std::string key;    // JSON name: "weights_bytes"
    std::string label;  // table label
    std::string unit;   // "bytes", "blocks", "tokens", "x"
    std::optional<double> log;
    double servesim = 0;
  };

  VllmStartupLog log;
  MemoryPlan plan;
  std::vector<Term> terms;

  static MemoryLogComparison compare(const VllmStartupLog& log, const MemoryPlan& plan);
  // servesim / log - 1 for KV tokens (from blocks when the log gives only those).
  std::optional<double> kv_tokens_error() const;
  const Term* term(const std::string& key) const;

  nlohmann::json to_json() const;
  std::string to_table() const;
};

struct MemoryLogFit {
  int64_t non_torch_bytes = 0;
  int64_t activation_bytes = 0;
  int64_t cuda_graph_bytes = 0;   // subtracted from the KV budget (0 before vLLM 0.21)
  std::string activation_source;  // "log" or "servesim"
  std::string cuda_graph_source;  // "log", "servesim" or "not subtracted"
  MemoryPlan plan;                // recomputed with the fitted terms

  // Fits against the log's blocks or KV tokens (mid-block; else its KV GiB) with servesim's
  // weights: the non-torch term takes what the other terms leave.
  // Throws ConfigError when the log has no KV figure or the fit needs a negative overhead.
  static MemoryLogFit fit(const VllmStartupLog& log, const ModelSpec& model,
                          const HardwareSpec& gpu, const ParallelConfig& parallel,
                          const EngineConfig& engine);
  // {"non_torch_memory_gib": ..., "activation_memory_gib": ..., "cuda_graph_memory_gib": ...}
  nlohmann::json engine_keys() const;
  nlohmann::json to_json() const;
  std::string to_text() const;
};

}  // namespace servesim
