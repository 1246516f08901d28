// WaitingQueue: the requests waiting for admission, as vLLM's FCFSRequestQueue (a deque:
// arrivals at the back, preempted requests prepended) or PriorityRequestQueue (a heap on
// (priority, arrival)). Holds sequence slots; storage grows by doubling and is never
// released, so a queue that has reached its peak size does not allocate. Not thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/sched/scheduler_config.h"

namespace servesim {

// A double-ended ring buffer of int32 slots.
class SlotDeque {
 public:
  explicit SlotDeque(size_t capacity = 16) : buf_(std::max<size_t>(capacity, 1)) {}

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int32_t front() const { return buf_[head_]; }
  int32_t operator[](size_t i) const { return buf_[(head_ + i) % buf_.size()]; }

  void push_back(int32_t slot) {
    grow_if_full();
    buf_[(head_ + size_) % buf_.size()] = slot;
    ++size_;
  }
  void push_front(int32_t slot) {
    grow_if_full();
    head_ = (head_ + buf_.size() - 1) % buf_.size();
    buf_[head_] = slot;
    ++size_;
  }
  int32_t pop_front() {
    const int32_t slot = buf_[head_];
    head_ = (head_ + 1) % buf_.size();
    --size_;
    return slot;
  }
  // Removes the first occurrence of `slot`, keeping order. O(size). Returns whether found.
  bool erase(int32_t slot) {
    for (size_t i = 0; i < size_; ++i) {
      if ((*this)[i] != slot) continue;
      for (size_t j = i; j + 1 < size_; ++j) {
        buf_[(head_ + j) % buf_.size()] = buf_[(head_ + j + 1) % buf_.size()];
      }
      --size_;
      return true;
    }
    return false;
  }
  void reserve(size_t n) {
    if (n > buf_.size()) regrow(n);
  }

 private:
  void grow_if_full() {
    if (size_ == buf_.size()) regrow(buf_.size() * 2);
  }
  void regrow(size_t cap) {
    std::vector<int32_t> next(cap);
    for (size_t i = 0; i < size_; ++i) next[i] = (*this)[i];
    buf_.swap(next);
    head_ = 0;
  }

  std::vector<int32_t> buf_;
  size_t head_ = 0;
  size_t size_ = 0;
};

// Ordering key of a waiting request under QueueOrder::kPriority (smaller goes first).
struct WaitingKey {
  int priority = 0;
  double arrival_s = 0;
  uint64_t arrival_order = 0;
  friend bool operator<(const WaitingKey& a, const WaitingKey& b) {
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.arrival_s != b.arrival_s) return a.arrival_s < b.arrival_s;
    return a.arrival_order < b.arrival_order;
  }
};

class WaitingQueue {
 public:
  explicit WaitingQueue(QueueOrder order) : order_(order) {}

  QueueOrder order() const { return order_; }
  size_t size() const { return order_ == QueueOrder::kFcfs ? fifo_.size() : heap_.size(); }
  bool empty() const { return size() == 0; }

  // The next request to admit.
  int32_t front() const { return order_ == QueueOrder::kFcfs ? fifo_.front() : heap_.front().slot; }

  // A new arrival.
  void add(int32_t slot, const WaitingKey& key) {
    if (order_ == QueueOrder::kFcfs) {
      fifo_.push_back(slot);
    } else {
      heap_push(slot, key);
    }
  }
  // A preempted request: first in line under FCFS, by its key under priority.
  void prepend(int32_t slot, const WaitingKey& key) {
    if (order_ == QueueOrder::kFcfs) {
      fifo_.push_front(slot);
    } else {
      heap_push(slot, key);
    }
  }
  int32_t pop_front() {
    if (order_ == QueueOrder::kFcfs) return fifo_.pop_front();
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const int32_t slot = heap_.back().slot;
    heap_.pop_back();
    return slot;
  }
  // Removes `slot` wherever it is. O(size). Returns whether it was queued.
  bool erase(int32_t slot) {
    if (order_ == QueueOrder::kFcfs) return fifo_.erase(slot);
    auto it =
        std::find_if(heap_.begin(), heap_.end(), [slot](const Entry& e) { return e.slot == slot; });
    if (it == heap_.end()) return false;
    *it = heap_.back();
    heap_.pop_back();
    std::make_heap(heap_.begin(), heap_.end(), Later{});
    return true;
  }
  void reserve(size_t n) {
    fifo_.reserve(n);
    heap_.reserve(n);
  }

 private:
  struct Entry {
    WaitingKey key;
    int32_t slot;
  };
  struct Later {  // std heap is a max-heap; put the smallest key on top
    bool operator()(const Entry& a, const Entry& b) const { return b.key < a.key; }
  };
  void heap_push(int32_t slot, const WaitingKey& key) {
    heap_.push_back(Entry{key, slot});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }

  QueueOrder order_;
  SlotDeque fifo_;
  std::vector<Entry> heap_;
};

}  // namespace servesim
