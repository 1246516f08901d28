// Ranks as threads, for testing code written against WorkShare without MPI: a ThreadRanks
// group of N, and one ThreadRank (a WorkShare) per thread. all_gather() blocks until every
// rank of the group has handed in its bytes, as MPI_Allgather does. Test-only.
// Thread-safety: one ThreadRank per thread; the group is shared.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "plan/work_share.h"

namespace servesim::testing {

class ThreadRanks {
 public:
  explicit ThreadRanks(int size) : size_(size), slots_(static_cast<size_t>(size)) {}

  std::vector<std::string> exchange(int rank, const std::string& mine) {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t generation = generation_;
    slots_[static_cast<size_t>(rank)] = mine;
    if (++arrived_ == size_) {
      // The last to arrive publishes; the next round cannot complete (and overwrite
      // gathered_) before every rank, the slowest included, has come back for it.
      gathered_ = slots_;
      arrived_ = 0;
      ++generation_;
      done_.notify_all();
    } else {
      done_.wait(lock, [&] { return generation_ != generation; });
    }
    return gathered_;
  }

  int size() const { return size_; }

 private:
  const int size_;
  std::mutex mutex_;
  std::condition_variable done_;
  std::vector<std::string> slots_;
  std::vector<std::string> gathered_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
};

class ThreadRank final : public WorkShare {
 public:
  ThreadRank(ThreadRanks& group, int rank) : group_(group), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return group_.size(); }
  std::vector<std::string> all_gather(const std::string& mine) override {
    return group_.exchange(rank_, mine);
  }

 private:
  ThreadRanks& group_;
  const int rank_;
};

// Runs job(share) on `size` threads, one rank each, and returns what each returned (by rank).
template <typename Result>
std::vector<Result> run_ranks(int size, const std::function<Result(WorkShare&)>& job) {
  ThreadRanks group(size);
  std::vector<Result> results(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      ThreadRank share(group, r);
      results[static_cast<size_t>(r)] = job(share);
    });
  }
  for (std::thread& t : threads) t.join();
  return results;
}

}  // namespace servesim::testing
