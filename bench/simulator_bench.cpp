// Simulator throughput: the reference workload (Llama-2-7B on one A100-80GB, TP 1,
// vLLM scheduler, Poisson 2 QPS, 512 prompt / 128 output tokens, 20,000 requests), the same
// at other sizes to show cost linear in requests, and 1,000,000 requests over 16 replicas
// with the peak resident memory. Results and commands: docs/performance.md.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include "models/catalog.h"
#include "sim/run/scenario.h"
#include "sim/run/simulation.h"

namespace servesim {
namespace {

SimulationConfig reference_config(int64_t requests, int replicas) {
  nlohmann::json j = {{"model", "Llama-2-7B"},
                      {"gpu", "A100-80GB"},
                      {"parallel", {{"data_parallel_size", replicas}}},
                      {"engine", {{"max_model_len", 4096}}},
                      {"workload",
                       {{"arrival", {{"type", "poisson"}, {"rate_qps", 2.0 * replicas}}},
                        {"prompt_tokens", 512},
                        {"output_tokens", 128},
                        {"num_requests", requests}}},
                      {"seed", 1}};
  return parse_scenario(j, "", "bench", Catalog()).config;
}

void run_once(benchmark::State& state, int64_t requests, int replicas) {
  const SimulationConfig config = reference_config(requests, replicas);
  uint64_t completed = 0;
  for (auto _ : state) {
    Simulation sim(config);
    NullObserver observer;
    const SimulationResult r = sim.run(observer);
    completed = r.summary.completed;
    benchmark::DoNotOptimize(r.fingerprint);
  }
  state.counters["requests"] = static_cast<double>(completed);
  state.counters["requests_per_s"] = benchmark::Counter(
      static_cast<double>(completed), benchmark::Counter::kIsIterationInvariantRate);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["peak_rss_MiB"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
}

void BM_Reference20k(benchmark::State& state) {
  run_once(state, 20000, 1);
}
BENCHMARK(BM_Reference20k)->Unit(benchmark::kMillisecond);

void BM_Scaling(benchmark::State& state) {
  run_once(state, state.range(0), 1);
}
BENCHMARK(BM_Scaling)->Arg(5000)->Arg(10000)->Arg(20000)->Arg(40000)->Unit(benchmark::kMillisecond);

void BM_Cluster16x1M(benchmark::State& state) {
  run_once(state, 1000000, 16);
}
BENCHMARK(BM_Cluster16x1M)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
}  // namespace servesim

BENCHMARK_MAIN();
