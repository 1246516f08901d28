// Costs of the simulator's core pieces, per operation: event queue push+pop at a realistic
// queue depth, request generation, metrics per request and per token. These bound what the
// whole-simulator targets in DESIGN.md (20,000 requests in <= 1.5 s) leave for the rest.
#include <benchmark/benchmark.h>

#include "sim/core/event_queue.h"
#include "sim/core/rng.h"
#include "sim/metrics/metrics.h"
#include "sim/workload/workload.h"

namespace servesim {
namespace {

void BM_EventQueuePushPop(benchmark::State& state) {
  EventQueue q;
  Rng rng(1);
  const int64_t depth = state.range(0);
  double now = 0.0;
  for (int64_t i = 0; i < depth; ++i) q.push(rng.uniform(), EventKind::kUser, 0, 0);
  for (auto _ : state) {
    const Event e = q.pop();
    now = e.time_s;
    q.push(now + rng.uniform(), EventKind::kUser, 0, e.payload);
  }
  benchmark::DoNotOptimize(now);
}
BENCHMARK(BM_EventQueuePushPop)->Arg(16)->Arg(1024)->Arg(65536);

void BM_OpenLoopRequestGeneration(benchmark::State& state) {
  const WorkloadSpec spec = WorkloadSpec::from_json(
      {{"arrival", {{"type", "poisson"}, {"rate_qps", 2}}},
       {"prompt_tokens", {{"type", "lognormal"}, {"mean", 512}, {"std", 200}}},
       {"output_tokens", 128},
       {"duration_s", 1e12}},
      "", "bench");
  auto src = make_request_source(spec);
  for (auto _ : state) {
    src->next_arrival_s();
    benchmark::DoNotOptimize(src->pop());
  }
}
BENCHMARK(BM_OpenLoopRequestGeneration);

void BM_MetricsPerRequest(benchmark::State& state) {
  MetricsCollector c;
  RequestRecord r;
  r.first_scheduled_s = 0.01;
  r.first_token_s = 0.1;
  r.finish_s = 2.0;
  r.output_tokens = 128;
  r.prompt_tokens = 512;
  uint64_t id = 0;
  for (auto _ : state) {
    r.id = id++;
    c.add(r);
  }
}
BENCHMARK(BM_MetricsPerRequest);

void BM_MetricsPerToken(benchmark::State& state) {
  MetricsCollector c;
  Rng rng(2);
  for (auto _ : state) c.add_itl(0.015 + 0.01 * rng.uniform(), 1, 1.0);
}
BENCHMARK(BM_MetricsPerToken);

}  // namespace
}  // namespace servesim

BENCHMARK_MAIN();
