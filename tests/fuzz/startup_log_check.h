// What a VllmStartupLog that parsed must hold, checked by the start-up log fuzz targets: byte
// figures small enough that the memory arithmetic built on them cannot overflow, counts that
// fit their fields (no wrapped integer), finite ratios, and at least one KV figure.
// Stateless; thread-safety: none needed.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>

#include "calibration/measured/vllm_startup_log.h"
#include "tests/fuzz/measured_run_check.h"

namespace servesim::fuzz {

// 2^50 bytes (1 PiB) per GPU: far beyond any card, far below where sums of terms overflow.
constexpr int64_t kMaxLoggedBytes = int64_t{1} << 50;

inline void check_startup_log(const VllmStartupLog& log) {
  for (const std::optional<int64_t>* bytes :
       {&log.total_bytes, &log.requested_bytes, &log.model_loading_bytes, &log.weights_bytes,
        &log.non_torch_bytes, &log.activation_bytes, &log.peak_torch_bytes, &log.kv_reserved_bytes,
        &log.available_kv_bytes, &log.cuda_graph_estimate_bytes, &log.cuda_graph_captured_bytes}) {
    expect(!*bytes || (**bytes >= -kMaxLoggedBytes && **bytes <= kMaxLoggedBytes),
           "a byte figure beyond 1 PiB (an overflow in the GiB conversion?)");
  }
  for (const std::optional<int64_t>* count :
       {&log.kv_cache_tokens, &log.num_gpu_blocks, &log.num_cpu_blocks}) {
    expect(!*count || **count >= 0, "a negative block or token count");
  }
  for (const std::optional<int>* count :
       {&log.tensor_parallel_size, &log.pipeline_parallel_size, &log.max_model_len, &log.block_size,
        &log.max_num_seqs, &log.max_num_batched_tokens, &log.concurrency_len,
        &log.cuda_graphs_piecewise, &log.cuda_graphs_full}) {
    expect(!*count || **count >= 0, "a count that wrapped to a negative int");
  }
  for (const std::optional<double>* ratio : {&log.gpu_memory_utilization, &log.max_concurrency}) {
    expect(!*ratio || (std::isfinite(**ratio) && **ratio >= 0), "a ratio not finite and >= 0");
  }
  expect(log.kv_bytes() || log.kv_cache_tokens || log.num_gpu_blocks, "no KV figure");
  expect(!log.version || log.version_text, "a version without its text");
  expect(!(log.version && log.unmodelled_version), "a version both modelled and not");
}

}  // namespace servesim::fuzz
