// `servesim plan (SCENARIO.json | --model NAME --input-len N --output-len N [--arrival A])
// (--target-qps Q | --target-concurrency C) [--slo ttft:p99=0.5 ...] [--gpus ...] [--tp ...]
// [--pp ...] [--max-num-seqs ...] [--max-gpus N] [--max-budget-per-hour D]
// [--fix key=value ...] [--top K] [--requests N] [--threads N] [--pareto] [--search-all]
// [--json] [--out DIR]`: the capacity planner (plan/planner.h, docs/planning.md). Prints a
// ranked table and the winner's `vllm serve` line, or, when nothing meets the SLOs, the
// closest candidates and what would have to change. --out writes plan.csv, plan.json and
// pareto.csv. Without a scenario file the flags build one in memory: the catalog model,
// vLLM's default engine flags, fixed prompt and output lengths. Under mpirun the ranks share
// the candidates (cli/process_work_share.h); rank 0 prints and writes, the others stay
// silent. Not thread-safe (CLI process).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace servesim {

struct PlanCommandOptions {
  std::string scenario;  // empty: the workload flags below describe it
  std::string model;
  std::optional<int64_t> input_len;    // tokens per prompt
  std::optional<int64_t> output_len;   // tokens per answer
  std::optional<std::string> arrival;  // poisson (default), constant or gamma:CV
  std::optional<double> target_qps;
  std::optional<int> target_concurrency;
  std::vector<std::string> slos;
  double max_error_rate = 0;
  std::vector<std::string> gpus;
  std::vector<int> tp;
  std::vector<int> pp;
  std::vector<int> max_num_seqs;
  std::vector<double> kv_offloading_sizes;  // GiB; 0 = none; empty: the scenario's
  std::vector<int> num_speculative_tokens;  // draft tokens; 0 = none; empty: the scenario's
  std::vector<std::string> pd;              // "P:D" groups, or "none"; empty: the scenario's
  std::vector<int> prefill_tp;
  std::vector<int> decode_tp;
  std::vector<std::string> prefill_gpus;
  std::vector<std::string> decode_gpus;
  bool no_aggregated = false;
  std::optional<int> max_gpus;
  std::optional<double> max_budget_per_hour;
  std::vector<std::string> fixed;
  int top = 3;
  int rows = 10;
  uint64_t requests = 2000;
  int threads = 0;
  bool pareto = false;
  bool search_all = false;
  bool json = false;
  std::string out_dir;
};

CLI::App* add_plan_command(CLI::App& app, PlanCommandOptions& options);

// Throws ConfigError for bad input; returns the process exit code otherwise.
int run_plan_command(const PlanCommandOptions& options);

}  // namespace servesim
