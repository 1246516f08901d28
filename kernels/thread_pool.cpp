#include "kernels/thread_pool.h"

#include <stdexcept>

namespace servesim {
namespace {

// About 50 microseconds of polling: longer than the gap between two kernels of a step,
// short enough that an idle engine sleeps.
constexpr int kSpinIterations = 20000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads < 1) throw std::invalid_argument("ThreadPool: num_threads must be >= 1");
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

void ThreadPool::range_of(int participant, int64_t& begin, int64_t& end) const {
  const int64_t chunks = (n_ + grain_ - 1) / grain_;
  const int64_t parts = num_threads();
  const int64_t lo = chunks * participant / parts;
  const int64_t hi = chunks * (participant + 1) / parts;
  begin = std::min(n_, lo * grain_);
  end = std::min(n_, hi * grain_);
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
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  int64_t begin = 0, end = 0;
  range_of(0, begin, end);
  if (begin < end) fn(begin, end);
  while (pending_.load(std::memory_order_acquire) != 0) cpu_relax();
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
    int64_t begin = 0, end = 0;
    range_of(index, begin, end);
    if (begin < end) (*fn_)(begin, end);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace servesim
