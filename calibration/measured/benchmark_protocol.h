// BenchmarkProtocol: how a closed-loop benchmark issued its requests when its results keep
// only their means — how many requests per client, how many it left out as warm-up, and how it
// drew their lengths. Published rows (calibration/measured/published_serving_rows.h) record none of
// it, and it decides their TTFT: every client sends its first request at once, so the start of a
// run queues N prompts for the engine, and whether those are in the means, and whether exact
// lengths keep the clients in the phases they started in, moves the mean TTFT more than any
// cost (docs/validation.md, point 6). The caller states it (calibrate serving
// --published-protocol); the simulation of such a run issues its requests by it
// (calibration/serving/serving_case_builder.h).
//
// A plain value; thread-safety: none needed.
#pragma once

#include <string>

namespace servesim {

struct BenchmarkProtocol {
  std::string name = "steady";
  int requests_per_client = 8;  // requests issued: max(this x clients, min_requests)
  int min_requests = 200;
  int warmup_per_client = 2;  // the first this x clients requests are left out of the means
  // Lengths drawn uniformly in [range_ratio x L, L] around the stated L, as SGLang's
  // bench_serving draws them for --random-range-ratio; 1: exactly L.
  double range_ratio = 1.0;
  // How the deployment was started. kVllmDefaults: vLLM's own limits. kAiconfiguratorGenerated:
  // the limits aiconfigurator's generator (its rule_plugin/vllm.rule, --max-num-batched-tokens
  // since its PR #238 of 2026-01-08) derives from the load: for batch size B, prompts of ISL and
  // answers of OSL tokens, --max-num-seqs B, --max-num-batched-tokens B + ISL +
  // kGeneratedTokenMargin, --max-model-len ISL + OSL + kGeneratedTokenMargin, with B = the row's
  // concurrency. kInferenceMaxRecipe: InferenceMAX's October 2025 vLLM launch (v0.10.2 unless
  // the row names its version): --kv-cache-dtype fp8 --async-scheduling
  // --no-enable-prefix-caching --max-num-batched-tokens kInferenceMaxTokenBudget --max-num-seqs
  // = concurrency, --max-model-len ISL + OSL + 20 for 1k/1k, + 200 with an 8k length, else 10240;
  // on B200 (its benchmarks/70b_fp8_b200_docker.sh until the 70B runs ended on 2025-10-29)
  // --max-num-seqs kInferenceMaxB200Sequences and cudagraph_mode FULL_DECODE_ONLY.
  enum class EngineLaunch { kVllmDefaults, kAiconfiguratorGenerated, kInferenceMaxRecipe };
  EngineLaunch engine_launch = EngineLaunch::kVllmDefaults;
  static constexpr int kGeneratedTokenMargin = 1500;     // tokens
  static constexpr int kInferenceMaxTokenBudget = 8192;  // tokens per step
  static constexpr int kInferenceMaxB200Sequences = 512;
  static constexpr const char* kInferenceMaxB200 = "B200";  // the catalog's name for the GPU

  // servesim's convention (scripts/compare_published_h100.sh --protocol steady): the steady
  // state of exact-length clients, max(8 x clients, 200) requests, the first 2 x clients left
  // out.
  static BenchmarkProtocol steady();
  // How InferenceX benchmarks a deployment (its fixed_seq_len runs: SGLang's bench_serving
  // with --random-range-ratio 0.8 and --num-prompts 10 x concurrency, one warm-up request not
  // counted): 10 x clients requests with lengths in [0.8 L, L], none left out.
  static BenchmarkProtocol inferencex();
  // How aiconfigurator's generated deployments are benchmarked (its benchmark/bench_run.sh
  // template: aiperf profile with --isl-stddev/--osl-stddev 0, ignore_eos, --num-requests
  // 20 x concurrency after a warm-up phase of 2 x concurrency requests that is not in the
  // results), on the engine limits its generator writes: 20 x clients requests of exact
  // lengths, all in the means (the measured phase starts every client at once again), on
  // kAiconfiguratorGenerated limits.
  static BenchmarkProtocol aiconfigurator();
  // InferenceMAX's runs (its benchmark_serving.py client as inferencex(), with --ignore-eos) on
  // the vLLM its recipe launched: kInferenceMaxRecipe.
  static BenchmarkProtocol inferencemax();
  // One of the above by name; anything else is a ConfigError naming `field` and the choices.
  static BenchmarkProtocol named(const std::string& name, const std::string& field);
};

}  // namespace servesim
