// parallel_for: runs body(i) for i in [0, count) on up to `threads` std::threads, handing
// out indices from a shared counter so slow items do not stall a fixed partition. Used by
// sweeps and the planner, whose items are independent simulations.
//
// Determinism is the caller's: body(i) must write only to slot i of its own output, so the
// result does not depend on the thread count or on which thread ran which index.
// Exceptions: every index still runs; afterwards the exception of the lowest failing index
// is rethrown (the same one whatever the thread count).
// threads <= 0 means std::thread::hardware_concurrency(). Thread-safe to call; blocks.
#pragma once

#include <cstddef>
#include <functional>

namespace servesim {

// Threads actually used for `threads` as a user gives it (<= 0: all cores, at least 1).
int resolve_thread_count(int threads);

void parallel_for(size_t count, int threads, const std::function<void(size_t)>& body);

}  // namespace servesim
