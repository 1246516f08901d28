// ThreadPool: a fixed set of worker threads that split one loop at a time with the caller
// (parallel_for). The engine's kernels are short (a decode step of a small model runs ~100
// GEMVs of tens to hundreds of microseconds each), so workers spin briefly on a generation
// counter before sleeping: a condition-variable wake-up per kernel would cost as much as the
// kernel. A loop is cut into a few pieces per participant that anyone may claim, so a worker
// the OS has descheduled (a shared machine) delays the loop by at most its claimed piece,
// not by the whole of its share.
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

  // Splits [0, n) into contiguous ranges, a few per participant, and runs fn(begin, end) on
  // each non-empty one, on whichever participant claims it first; returns when all are done.
  // Ranges are multiples of `grain` except the last, so callers can keep SIMD-width or
  // cache-line alignment.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain = 1);

 private:
  void worker_loop(int index);
  // Claims and runs the pieces of loop `generation` not yet claimed, starting at `first`.
  void run_pieces(uint64_t generation, int first);
  void range_of(int piece, int64_t& begin, int64_t& end) const;

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};  // bumped per parallel_for; workers wait for a change
  // claim_[p]: the last generation whose piece p was claimed. A piece of generation g is
  // claimed by raising it from below g to g, so late workers of older loops claim nothing.
  std::vector<std::atomic<uint64_t>> claim_;
  std::atomic<int> done_{0};  // pieces of the current loop finished
  bool stop_ = false;         // guarded by mutex_
  // The current loop; written before generation_ is bumped, read by a participant only after
  // it claimed a piece of that generation (so the loop cannot have ended).
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  int64_t grain_ = 1;
  int num_pieces_ = 1;
};

}  // namespace servesim
