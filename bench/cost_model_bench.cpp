// Cost of one RooflineCostModel::predict() call, the simulator's per-step hot path, and of
// building the BatchShape it reads. Target: predict() well under 1 us.
#include <benchmark/benchmark.h>

#include "models/batch_shape.h"
#include "models/catalog.h"
#include "models/engine_config.h"
#include "models/parallel_config.h"
#include "models/roofline_cost_model.h"

namespace servesim {
namespace {

RooflineCostModel make_model(const std::string& model, const std::string& gpu, int tp, int pp) {
  const Catalog catalog;
  ParallelConfig parallel;
  parallel.tp = tp;
  parallel.pp = pp;
  return RooflineCostModel(catalog.resolve_model(model), catalog.resolve_gpu(gpu), parallel,
                           EngineConfig{});
}

// A mixed continuous-batching step: one 512-token prefill chunk and 255 decodes.
BatchShape mixed_step(int sliding_window) {
  BatchShape b;
  b.sliding_window = sliding_window;
  b.add_sequence(512, 1024, true, false);
  for (int i = 0; i < 255; ++i) b.add_sequence(1, 200 + 13 * i, false, true);
  return b;
}

void BM_PredictDense(benchmark::State& state) {
  const RooflineCostModel cm = make_model("Llama-3.1-8B", "H100-SXM", 1, 1);
  const BatchShape b = mixed_step(0);
  for (auto _ : state) benchmark::DoNotOptimize(cm.predict(b));
}
BENCHMARK(BM_PredictDense);

void BM_PredictMoeTp8Pp2(benchmark::State& state) {
  const RooflineCostModel cm = make_model("DeepSeek-V3", "H200", 8, 2);
  const BatchShape b = mixed_step(0);
  for (auto _ : state) benchmark::DoNotOptimize(cm.predict(b));
}
BENCHMARK(BM_PredictMoeTp8Pp2);

void BM_PredictSlidingMoe(benchmark::State& state) {
  const RooflineCostModel cm = make_model("GPT-OSS-20B", "H100-SXM", 1, 1);
  const BatchShape b = mixed_step(128);
  for (auto _ : state) benchmark::DoNotOptimize(cm.predict(b));
}
BENCHMARK(BM_PredictSlidingMoe);

// The caller's O(sequences) part, per sequence added.
void BM_BatchShapeAddSequence(benchmark::State& state) {
  BatchShape b;
  b.sliding_window = 128;
  int i = 0;
  for (auto _ : state) {
    b.add_sequence(1, 100 + (i++ & 1023), false, true);
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_BatchShapeAddSequence);

}  // namespace
}  // namespace servesim

BENCHMARK_MAIN();
