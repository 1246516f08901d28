// ThreadPool: a fixed set of worker threads that split one loop at a time with the caller
// (parallel_for). The engine's kernels are short (a decode step of a small model runs ~100
// GEMVs of tens of microseconds each), so workers spin briefly on a generation counter before
// sleeping: a condition-variable wake-up per kernel would cost as much as the kernel.
//
// Ownership: the pool owns its threads and joins them in the destructor.
// Thread-safety: one thread at a time calls parallel_for (the engine's step thread); the
// callback runs concurrently on all participants and must only write disjoint data.
// Invariants: num_threads() >= 1; with 1 thread everything runs on the caller.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace servesim {

class ThreadPool {
 public:
  // `num_threads` participants including the caller. REQUIRES: >= 1.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Splits [0, n) into num_threads() contiguous ranges (the caller takes the first) and runs
  // fn(begin, end) on each non-empty one; returns when all are done. Ranges are multiples of
  // `grain` except the last, so callers can keep SIMD-width or cache-line alignment.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain = 1);

 private:
  void worker_loop(int index);
  void range_of(int participant, int64_t& begin, int64_t& end) const;

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};  // bumped per parallel_for; workers wait for a change
  std::atomic<int> pending_{0};          // workers still running the current loop
  bool stop_ = false;                    // guarded by mutex_
  // The current loop; written before generation_ is bumped, read after it changes.
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  int64_t grain_ = 1;
};

}  // namespace servesim
