// EventTimeline: per-category GPU time of the work enqueued on one stream, measured with CUDA
// events as the engine's per-op profile needs it. Intervals are recorded without waiting; their
// durations are read after the stream has been synchronised, so profiling adds event records
// but no synchronisation inside a step.
//
//   timeline.clear();
//   timeline.begin(stream); ...kernels...; timeline.end(category_index);
//   synchronize(stream); timeline.add_seconds(per_category);
//
// Ownership: owns its events (the pool only grows). Thread-safety: none.
// Invariants: begin() and end() alternate; intervals do not nest.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "kernels/cuda/cuda_types.h"

struct CUevent_st;

namespace servesim::cuda {

class EventTimeline {
 public:
  EventTimeline() = default;
  ~EventTimeline();
  EventTimeline(const EventTimeline&) = delete;
  EventTimeline& operator=(const EventTimeline&) = delete;

  // Forgets the recorded intervals (keeps the events for reuse).
  void clear() {
    intervals_.clear();
    used_ = 0;
  }
  // Records the start of an interval on `stream`.
  void begin(Stream stream);
  // Records its end; its duration will be added to category `category`.
  void end(Stream stream, size_t category);
  // Adds each interval's seconds to seconds[category]. REQUIRES: the stream was synchronised
  // after the last end(); every category < seconds.size().
  void add_seconds(std::span<double> seconds) const;

 private:
  struct Interval {
    size_t start;     // index of the start event in events_
    size_t category;  // where the duration goes
  };
  // Records the next event of the pool on `stream`, creating it when the pool is exhausted.
  void record(Stream stream);

  std::vector<CUevent_st*> events_;  // cudaEvent_t pool; events [0, used_) are recorded
  size_t used_ = 0;
  std::vector<Interval> intervals_;  // the end event of an interval is its start + 1
};

}  // namespace servesim::cuda
