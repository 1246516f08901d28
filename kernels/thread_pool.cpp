#include "kernels/thread_pool.h"

#include <stdexcept>

namespace servesim {
namespace {

// About 50 microseconds of polling: longer than the gap between two kernels of a step,
// short enough that an idle engine sleeps.
constexpr int kSpinIterations = 20000;
// Pieces per participant: enough that others can take over a descheduled thread's share,
// few enough that each piece of a GEMM still amortises Eigen's packing of its input.
constexpr int kPiecesPerThread = 4;
// Polls between yields while the caller waits for pieces others are running.
constexpr int kPollsPerYield = 256;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int num_threads)
    : claim_(static_cast<size_t>(num_threads >= 1 ? num_threads : 1) * kPiecesPerThread) {
  if (num_threads < 1) throw std::invalid_argument("ThreadPool: num_threads must be >= 1");
  for (std::atomic<uint64_t>& c : claim_) c.store(0, std::memory_order_relaxed);
  workers_.reserve(static_cast<size_t>(num_threads - 1));
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::range_of(int piece, int64_t& begin, int64_t& end) const {
  const int64_t chunks = (n_ + grain_ - 1) / grain_;
  const int64_t lo = chunks * piece / num_pieces_;
  const int64_t hi = chunks * (piece + 1) / num_pieces_;
  begin = std::min(n_, lo * grain_);
  end = std::min(n_, hi * grain_);
}

void ThreadPool::run_pieces(uint64_t generation, int first) {
  const int pieces = static_cast<int>(claim_.size());
  for (int i = 0; i < pieces; ++i) {
    const int p = (first + i) % pieces;
    uint64_t seen = claim_[static_cast<size_t>(p)].load(std::memory_order_relaxed);
    if (seen >= generation || !claim_[static_cast<size_t>(p)].compare_exchange_strong(
                                  seen, generation, std::memory_order_acq_rel)) {
      continue;
    }
    if (p < num_pieces_) {
      int64_t begin = 0, end = 0;
      range_of(p, begin, end);
      if (begin < end) (*fn_)(begin, end);
    }
    done_.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                              int64_t grain) {
  if (n <= 0) return;
  if (workers_.empty() || n <= grain) {
    fn(0, n);
    return;
  }
  fn_ = &fn;
  n_ = n;
  grain_ = grain < 1 ? 1 : grain;
  num_pieces_ = static_cast<int>(
      std::min<int64_t>(static_cast<int64_t>(claim_.size()), (n + grain_ - 1) / grain_));
  done_.store(0, std::memory_order_relaxed);
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation = generation_.fetch_add(1, std::memory_order_release) + 1;
  }
  wake_.notify_all();
  run_pieces(generation, 0);
  // Only pieces another thread claimed and is still running remain.
  const int total = static_cast<int>(claim_.size());
  for (int polls = 1; done_.load(std::memory_order_acquire) != total; ++polls) {
    if (polls % kPollsPerYield == 0) {
      std::this_thread::yield();
    } else {
      cpu_relax();
    }
  }
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t now = generation_.load(std::memory_order_acquire);
    for (int spin = 0; now == seen && spin < kSpinIterations; ++spin) {
      cpu_relax();
      now = generation_.load(std::memory_order_acquire);
    }
    if (now == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      now = generation_.load(std::memory_order_acquire);
    }
    seen = now;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) return;
    }
    run_pieces(now, index * kPiecesPerThread);
  }
}

}  // namespace servesim
