#include "kernels/cuda/event_timeline.h"

#include "kernels/cuda/cuda_check.h"

namespace servesim::cuda {

EventTimeline::~EventTimeline() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

void EventTimeline::record(Stream stream) {
  if (used_ == events_.size()) {
    cudaEvent_t e = nullptr;
    check_cuda(cudaEventCreate(&e), "cudaEventCreate");
    events_.push_back(e);
  }
  check_cuda(cudaEventRecord(events_[used_++], stream), "cudaEventRecord");
}

void EventTimeline::begin(Stream stream) {
  record(stream);
}

void EventTimeline::end(Stream stream, size_t category) {
  intervals_.push_back(Interval{used_ - 1, category});
  record(stream);
}

void EventTimeline::add_seconds(std::span<double> seconds) const {
  for (const Interval& i : intervals_) {
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, events_[i.start], events_[i.start + 1]),
               "cudaEventElapsedTime");
    seconds[i.category] += ms * 1e-3;
  }
}

}  // namespace servesim::cuda
