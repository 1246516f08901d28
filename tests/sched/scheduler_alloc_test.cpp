// Steady-state schedule() + update() must not touch the heap: the output, queues, slab and
// block tables reuse their storage. Counted with a replaced global operator new (skipped under
// AddressSanitizer, which needs its own allocator hooks to check new/delete pairing).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#include "engine/sched/scheduler.h"
#include "sim/workload/synthetic_prompt.h"

#if defined(__SANITIZE_ADDRESS__)
#define SERVESIM_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SERVESIM_COUNT_ALLOCATIONS 0
#else
#define SERVESIM_COUNT_ALLOCATIONS 1
#endif
#else
#define SERVESIM_COUNT_ALLOCATIONS 1
#endif

#if SERVESIM_COUNT_ALLOCATIONS
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
namespace {
uint64_t g_allocations = 0;
}
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
#endif

namespace servesim {
namespace {

#if SERVESIM_COUNT_ALLOCATIONS
// Runs `steps` steps, adding a new request for each one that finishes, and returns the heap
// allocations made inside schedule() and update().
uint64_t allocations_in_steps(Scheduler& s, uint64_t& next_id, int steps, int prompt_len,
                              int output_len) {
  StepResult result;
  result.sampled_token_ids.reserve(1024);
  uint64_t inside = 0;
  for (int i = 0; i < steps; ++i) {
    const uint64_t before = g_allocations;
    const SchedulerOutput& out = s.schedule();
    result.sampled_token_ids.clear();
    for (const ScheduledSequence& e : out.sequences) {
      if (e.samples) result.sampled_token_ids.push_back(static_cast<int32_t>(i % 500));
    }
    s.update(out, result);
    inside += g_allocations - before;
    for (size_t k = 0; k < s.finished().size(); ++k) {
      Request r;
      r.id = next_id;
      r.prompt_token_ids =
          synthetic_prompt(next_id % 4, prompt_len / 2, next_id, prompt_len - prompt_len / 2, 500);
      r.max_output_tokens = output_len + static_cast<int>(next_id % 7);
      r.ignore_eos = true;
      ++next_id;
      s.add_request(std::move(r));
    }
  }
  return inside;
}
#endif

TEST(SchedulerAllocations, SteadyStateStepsDoNotAllocate) {
#if !SERVESIM_COUNT_ALLOCATIONS
  GTEST_SKIP() << "allocation counting is off under AddressSanitizer";
#else
  for (SchedulingPolicy policy : {SchedulingPolicy::kContinuous, SchedulingPolicy::kPrefillFirst,
                                  SchedulingPolicy::kStatic}) {
    SchedulerConfig c;
    c.max_num_seqs = 64;
    c.max_num_batched_tokens = 512;
    c.max_model_len = 1024;
    c.num_gpu_blocks = 600;  // tight: preemptions happen
    c.policy = policy;
    c.queue_order =
        policy == SchedulingPolicy::kPrefillFirst ? QueueOrder::kPriority : QueueOrder::kFcfs;
    Scheduler s(c);
    uint64_t next_id = 0;
    for (int i = 0; i < 96; ++i) {
      Request r;
      r.id = next_id;
      r.prompt_token_ids = synthetic_prompt(next_id % 4, 100, next_id, 100, 500);
      r.max_output_tokens = 60 + static_cast<int>(next_id % 7);
      r.ignore_eos = true;
      ++next_id;
      s.add_request(std::move(r));
    }
    s.release_static_batch(/*no_more_arrivals=*/true);
    allocations_in_steps(s, next_id, 3000, 200, 60);  // warm up to the peak sizes
    const int64_t preemptions_before = s.stats().num_preemptions_total;
    EXPECT_EQ(allocations_in_steps(s, next_id, 2000, 200, 60), 0u)
        << scheduling_policy_name(policy);
    if (policy == SchedulingPolicy::kContinuous) {
      EXPECT_GT(s.stats().num_preemptions_total, preemptions_before);  // the test is not idle
    }
  }
#endif
}

}  // namespace
}  // namespace servesim
