// Scheduler benchmarks: the cost of one schedule() + update() step.
//
//   BM_Decode256          256 running decodes (prompts of 1024 tokens, 16k-48k KV blocks used),
//                         prefix caching on: the steady state of a busy replica. Every 16th
//                         step of a sequence fills a block that is hashed and cached.
//   BM_MixedPrefillDecode continuous arrivals (512-token prompts over 8 shared system
//                         prompts, 128-token outputs), budget 2048, up to 256 running: decodes,
//                         prefill chunks, prefix hits, finishes and new admissions every step.
//
// Counters: tokens_per_s (scheduled tokens per second of schedule() + update()),
// seqs_per_step, allocs_per_step (global operator new calls inside the timed loop).
// Run: build/<dir>/bench/scheduler_bench --benchmark_repetitions=5
//        --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "engine/sched/scheduler.h"
#include "sim/workload/synthetic_prompt.h"

// GCC pairs the replaced operator delete with the library's operator new when it inlines.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
uint64_t g_allocations = 0;  // single-threaded benchmark: a plain counter suffices
}  // namespace

void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace servesim {
namespace {

constexpr int32_t kVocab = 32000;

// Runs one step, sampling a synthetic token for each sampling sequence.
inline int run_step(Scheduler& s, StepResult& result) {
  const SchedulerOutput& out = s.schedule();
  result.sampled_token_ids.clear();
  for (const ScheduledSequence& e : out.sequences) {
    if (e.samples) {
      result.sampled_token_ids.push_back(
          static_cast<int32_t>((e.request_id * 7919 + e.num_computed_tokens) % kVocab));
    }
  }
  s.update(out, result);
  return out.total_num_tokens;
}

void BM_Decode256(benchmark::State& state) {
  // 256 sequences with 1024-token prompts decoding for kSteps steps: 16k KV blocks in use at
  // the start, 48k at the end, so block records and the prefix-cache map are as large (and as
  // cache-unfriendly) as a real cache's.
  constexpr int kSeqs = 256;
  constexpr int kPrompt = 1024;
  constexpr int kSteps = 2000;
  if (state.max_iterations > kSteps) {
    state.SkipWithError("run with at most kSteps iterations");
    return;
  }
  SchedulerConfig c;
  c.max_num_seqs = kSeqs;
  c.max_num_batched_tokens = 8192;
  c.max_model_len = 8192;
  c.block_size = 16;
  c.num_gpu_blocks = int64_t{kSeqs} * ((kPrompt + kSteps) / c.block_size + 2) + 1;
  Scheduler s(c);
  for (int i = 0; i < kSeqs; ++i) {
    Request r;
    r.id = static_cast<uint64_t>(i);
    r.prompt_token_ids = synthetic_prompt(0, 0, static_cast<uint64_t>(i), kPrompt, kVocab);
    r.max_output_tokens = kSteps + 200;  // none finishes during the run
    r.ignore_eos = true;
    s.add_request(std::move(r));
  }
  StepResult result;
  result.sampled_token_ids.reserve(kSeqs);
  // Prefill everything (8192 tokens per step), then stop at the first pure-decode step.
  for (;;) {
    const SchedulerOutput& out = s.schedule();
    const bool pure =
        out.num_prefill_sequences == 0 && static_cast<int>(out.sequences.size()) == kSeqs;
    result.sampled_token_ids.clear();
    for (const ScheduledSequence& e : out.sequences) {
      if (e.samples) result.sampled_token_ids.push_back(1);
    }
    s.update(out, result);
    if (pure) break;
  }
  int64_t tokens = 0;
  const uint64_t allocs_before = g_allocations;
  for (auto _ : state) {
    tokens += run_step(s, result);
  }
  const uint64_t allocs = g_allocations - allocs_before;
  state.counters["tokens_per_s"] =
      benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
  state.counters["seqs_per_step"] = static_cast<double>(tokens) / state.iterations();
  state.counters["allocs_per_step"] = static_cast<double>(allocs) / state.iterations();
}
BENCHMARK(BM_Decode256)->Iterations(2000)->Unit(benchmark::kMicrosecond);

void BM_MixedPrefillDecode(benchmark::State& state) {
  SchedulerConfig c;
  c.max_num_seqs = 256;
  c.max_num_batched_tokens = 2048;
  c.max_model_len = 4096;
  c.block_size = 16;
  // 4000 blocks (64k tokens): 256 sequences of 640 tokens need ~4300 with the shared prefixes,
  // so the cache runs nearly full and preempts now and then.
  c.num_gpu_blocks = 4000;
  Scheduler s(c);
  uint64_t next_id = 0;
  std::vector<int32_t> prompt;
  auto add = [&] {
    const uint64_t id = next_id++;
    synthetic_prompt_into(prompt, id % 8, 384, id, 128, kVocab);
    Request r;
    r.id = id;
    r.prompt_token_ids = prompt;
    r.max_output_tokens = 128;
    r.ignore_eos = true;
    s.add_request(std::move(r));
  };
  for (int i = 0; i < 512; ++i) add();
  StepResult result;
  result.sampled_token_ids.reserve(256);
  for (int i = 0; i < 2000; ++i) {  // reach a steady mix
    run_step(s, result);
    for (size_t k = 0; k < s.finished().size(); ++k) add();
  }
  int64_t tokens = 0;
  int64_t seqs = 0;
  uint64_t arrival_allocs = 0;
  const uint64_t allocs_before = g_allocations;
  for (auto _ : state) {
    const SchedulerOutput& out = s.schedule();
    result.sampled_token_ids.clear();
    for (const ScheduledSequence& e : out.sequences) {
      if (e.samples) result.sampled_token_ids.push_back(1);
    }
    seqs += static_cast<int64_t>(out.sequences.size());
    tokens += out.total_num_tokens;
    s.update(out, result);
    // Arrivals keep the queue full; building a Request allocates, so those allocations are
    // not counted: allocs_per_step is the scheduler's own.
    const uint64_t before_arrivals = g_allocations;
    for (size_t k = 0; k < s.finished().size(); ++k) add();
    arrival_allocs += g_allocations - before_arrivals;
  }
  const uint64_t allocs = g_allocations - allocs_before - arrival_allocs;
  state.counters["tokens_per_s"] =
      benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
  state.counters["seqs_per_step"] = static_cast<double>(seqs) / state.iterations();
  state.counters["allocs_per_step"] = static_cast<double>(allocs) / state.iterations();
  const SchedulerStats st = s.stats();
  state.counters["hit_rate"] = st.prefix_cache_hit_rate();
  state.counters["preemptions"] = static_cast<double>(st.num_preemptions_total);
}
BENCHMARK(BM_MixedPrefillDecode)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace servesim

BENCHMARK_MAIN();
