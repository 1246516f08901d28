#include "sim/serving/simulated_executor.h"

#include <algorithm>

#include "base/mix64.h"

namespace servesim {

SimulatedExecutor::SimulatedExecutor(const CostModel& cost_model, int sliding_window)
    : cost_(cost_model), stages_(std::max(1, cost_model.num_stages())) {
  whole_.sliding_window = sliding_window;
  micro_.resize(static_cast<size_t>(stages_));
  for (BatchShape& m : micro_) m.sliding_window = sliding_window;
  stage_free_s_.resize(static_cast<size_t>(stages_));
}

void SimulatedExecutor::enable_speculation(std::shared_ptr<const SpeculativeCostModel> cost,
                                           uint64_t seed) {
  spec_ = std::move(cost);
  spec_seed_ = seed;
  proposers_.sliding_window = whole_.sliding_window;
}

void SimulatedExecutor::add_draft_time(const SchedulerOutput& output) {
  proposers_.clear();
  for (const ScheduledSequence& s : output.sequences) {
    // Context after the step, as if every draft were accepted: an upper bound by at most k.
    if (s.samples)
      proposers_.add_sequence(1, s.num_computed_tokens + s.num_new_tokens, false, true);
  }
  last_.draft_s = spec_->draft_s(proposers_);
  last_.total_s += last_.draft_s;
}

int SimulatedExecutor::accepted_drafts(uint64_t stream, uint64_t first_position,
                                       int num_spec) const {
  const std::vector<double>& acceptance = spec_->config().acceptance;
  const uint64_t key = mix64(spec_seed_ ^ mix64(stream ^ 0x5350454344524654ULL));
  int accepted = 0;
  while (accepted < num_spec) {
    const uint64_t bits = mix64(key + first_position + static_cast<uint64_t>(accepted));
    const double u = static_cast<double>(bits >> 11) * 0x1.0p-53;  // uniform in [0, 1)
    if (!(u < acceptance[static_cast<size_t>(accepted)])) break;
    ++accepted;
  }
  return accepted;
}

bool SimulatedExecutor::drafts_follow(uint64_t stream, uint64_t position) const {
  const double rate = spec_->config().match_rate;
  if (rate >= 1) return true;
  const uint64_t key = mix64(spec_seed_ ^ mix64(stream ^ 0x4e4752414d4d4154ULL));
  const double u = static_cast<double>(mix64(key + position) >> 11) * 0x1.0p-53;
  return u < rate;
}

void SimulatedExecutor::overlap_host_work() {
  double& host_s = last_.op_s[static_cast<size_t>(Op::kOverhead)];
  const double gpu_s = last_.total_s - host_s;
  const double hideable_s = *host_overlap_ * host_s;
  const double exposed_s = (host_s - hideable_s) + std::max(0.0, hideable_s - gpu_s);
  last_.total_s = gpu_s + exposed_s;
  host_s = exposed_s;
}

double SimulatedExecutor::step_time_s(const SchedulerOutput& output) {
  if (stages_ == 1) {
    whole_.clear();
    for (const ScheduledSequence& s : output.sequences) {
      whole_.add_sequence(s.num_new_tokens, s.num_computed_tokens, s.is_prefill, s.samples,
                          s.num_spec_tokens);
    }
    last_ = cost_.predict(whole_);
    if (spec_) add_draft_time(output);
    if (host_overlap_) overlap_host_work();
    return last_.total_s;
  }

  // Split into micro-batches: each sequence goes to the one with the fewest tokens so far,
  // so a long prefill chunk does not pile up with others.
  const size_t used = std::min(micro_.size(), output.sequences.size());
  for (size_t i = 0; i < used; ++i) micro_[i].clear();
  for (const ScheduledSequence& s : output.sequences) {
    size_t best = 0;
    for (size_t i = 1; i < used; ++i) {
      if (micro_[i].num_tokens < micro_[best].num_tokens) best = i;
    }
    micro_[best].add_sequence(s.num_new_tokens, s.num_computed_tokens, s.is_prefill, s.samples,
                              s.num_spec_tokens);
  }

  const size_t overhead = static_cast<size_t>(Op::kOverhead);
  std::fill(stage_free_s_.begin(), stage_free_s_.end(), 0.0);
  last_ = StepTime{};
  double step_overhead_s = 0;
  double end_s = 0;
  for (size_t i = 0; i < used; ++i) {
    const StepTime t = cost_.predict(micro_[i]);
    step_overhead_s = std::max(step_overhead_s, t.op_s[overhead]);
    const double stage_s = t.total_s - t.op_s[overhead];
    const double transfer_s = cost_.stage_transfer_s(micro_[i].num_tokens);
    double ready_s = 0;  // when this micro-batch's input is at the next stage
    for (size_t s = 0; s < stage_free_s_.size(); ++s) {
      const double start_s = std::max(ready_s, stage_free_s_[s]);
      stage_free_s_[s] = start_s + stage_s;
      ready_s = stage_free_s_[s] + (s + 1 < stage_free_s_.size() ? transfer_s : 0.0);
    }
    end_s = std::max(end_s, stage_free_s_.back());
    for (size_t op = 0; op < kNumOps; ++op) {
      if (op != overhead) last_.op_s[op] += t.op_s[op];
    }
    last_.extrapolated = last_.extrapolated || t.extrapolated;
  }
  last_.op_s[overhead] = step_overhead_s;
  last_.total_s = end_s + step_overhead_s;
  if (host_overlap_) overlap_host_work();
  return last_.total_s;
}

}  // namespace servesim
