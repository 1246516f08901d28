// Simulator throughput: the issue's reference workload (Llama-2-7B on one A100-80GB, TP 1,
// vLLM scheduler, Poisson 2 QPS, 512 prompt / 128 output tokens, 20,000 requests), the same
// at other sizes to show cost linear in requests, and 1,000,000 requests over 16 replicas
// with the peak resident memory; all of them engine-only ("service": "none"). The reference
// also runs behind vLLM's API server (the default frontend a scenario without a service block
// gets) and behind a fuller service path (network, gateway, API server). Results and commands:
// docs/performance.md.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include "models/catalog.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

// A path every request and every engine step crosses: 10 ms RTT, a two-worker gateway, one
// API server process with intake and per-step output jobs.
nlohmann::json reference_service() {
  return nlohmann::json::parse(R"({
    "network": {"rtt_s": {"type": "lognormal", "mean": 0.01, "std": 0.003}},
    "gateway": {"workers": 2, "request_s": {"type": "exponential", "mean": 0.001}},
    "frontend": {"request_s": 0.002, "per_prompt_token_s": 1e-6, "step_s": 0.0002,
                 "per_output_token_s": 3e-5, "cv": 0.3}})");
}

enum class Path { kEngineOnly, kDefaultFrontend, kService };

SimulationConfig reference_config(int64_t requests, int replicas, Path path) {
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
  if (path == Path::kEngineOnly) j["service"] = "none";
  if (path == Path::kService) j["service"] = reference_service();
  return parse_scenario(j, "", "bench", Catalog()).config;
}

void run_once(benchmark::State& state, int64_t requests, int replicas,
              Path path = Path::kEngineOnly) {
  const SimulationConfig config = reference_config(requests, replicas, path);
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

// The service layer's budget: at most 1.5x BM_Reference20k, for both.
void BM_Reference20kVllmFrontend(benchmark::State& state) {
  run_once(state, 20000, 1, Path::kDefaultFrontend);
}
BENCHMARK(BM_Reference20kVllmFrontend)->Unit(benchmark::kMillisecond);

void BM_Reference20kService(benchmark::State& state) {
  run_once(state, 20000, 1, Path::kService);
}
BENCHMARK(BM_Reference20kService)->Unit(benchmark::kMillisecond);

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
