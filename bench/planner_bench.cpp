// Planner cost: `servesim plan` for Llama-2-7B (the quickstart workload: Poisson arrivals,
// 512-token prompts, 128-token answers; target 50 req/s; SLO ttft:p99 <= 500 ms and
// tpot:p99 <= 50 ms) over every catalog GPU x TP {1,2,4,8} x PP {1,2} x a list of
// max_num_seqs values — 14 x 4 x 2 = 112 candidates per max_num_seqs value, 560 with five.
// Arguments: candidates (112, 224, 560), requests per evaluation (500 to 4000), and
// whether every candidate is searched (search_all, as --pareto does) or the cost bound skips
// those that cannot enter the top 3. All cores. Results and commands: docs/performance.md.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>

#include "models/catalog.h"
#include "plan/planner.h"

namespace servesim {
namespace {

std::string scenario_file() {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "servesim_planner_bench.json";
  std::ofstream(path) << R"({
    "model": "Llama-2-7B", "gpu": "A100-80GB",
    "engine": {"gpu_memory_utilization": 0.9, "max_model_len": 4096},
    "workload": {"arrival": {"type": "poisson", "rate_qps": 2},
                 "prompt_tokens": 512, "output_tokens": 128, "num_requests": 1000},
    "seed": 1})";
  return path.string();
}

double process_cpu_s() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

void BM_Plan(benchmark::State& state) {
  const int64_t candidates = state.range(0);
  PlanOptions o;
  o.scenario_path = scenario_file();
  o.target_load = 50;
  o.slos = {parse_slo_target("ttft:p99=0.5"), parse_slo_target("tpot:p99=0.05")};
  o.tp = {1, 2, 4, 8};
  o.pp = {1, 2};
  const std::vector<int> seqs = {64, 256, 32, 128, 512};
  o.max_num_seqs.assign(seqs.begin(), seqs.begin() + candidates / 112);
  o.requests = static_cast<uint64_t>(state.range(1));
  o.search_all = state.range(2) != 0;
  const Catalog catalog;
  PlanReport report;
  double cpu_s = 0;
  for (auto _ : state) {
    // CPU seconds of every thread: on a shared machine, the figure that does not depend on
    // what else runs (wall time on an idle machine is about cpu_s / cores).
    const double before = process_cpu_s();
    report = plan(o, catalog);
    cpu_s += process_cpu_s() - before;
    benchmark::DoNotOptimize(report.candidates.data());
  }
  state.counters["cpu_s"] = cpu_s / static_cast<double>(state.iterations());
  state.counters["candidates"] = static_cast<double>(report.enumerated);
  state.counters["searched"] = static_cast<double>(report.searched);
  state.counters["simulations"] = static_cast<double>(report.simulations);
  state.SetLabel(report.feasible() ? report.candidates.front().gpu + " TP" +
                                         std::to_string(report.candidates.front().tp) + " x" +
                                         std::to_string(report.candidates.front().replicas)
                                   : "infeasible");
}

BENCHMARK(BM_Plan)
    ->ArgNames({"candidates", "requests", "search_all"})
    ->Args({112, 2000, 0})
    ->Args({224, 2000, 0})
    ->Args({560, 2000, 0})
    ->Args({560, 4000, 0})
    ->Args({560, 500, 0})
    ->Args({560, 1000, 0})
    ->Args({560, 1000, 1})
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

}  // namespace
}  // namespace servesim

BENCHMARK_MAIN();
