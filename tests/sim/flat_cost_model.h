// FlatCostModel: a CostModel fake for the serving tests (cluster_test, async_scheduling_test):
// every step takes `gpu_s` of GPU work and `host_s` of host work, whatever it holds, so step
// times and event times are known in advance. Header-only, test code; immutable.
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/cost_model.h"

namespace servesim {

class FlatCostModel final : public CostModel {
 public:
  explicit FlatCostModel(double gpu_s = 10e-3, double host_s = 0)
      : gpu_s_(gpu_s), host_s_(host_s) {}
  StepTime predict(const BatchShape&) const override {
    StepTime t;
    t.op_s[static_cast<size_t>(Op::kMlp)] = gpu_s_;
    t.op_s[static_cast<size_t>(Op::kOverhead)] = host_s_;
    t.total_s = gpu_s_ + host_s_;
    return t;
  }
  int num_stages() const override { return 1; }
  double stage_transfer_s(int64_t) const override { return 0; }

 private:
  double gpu_s_;   // seconds of GPU work a step
  double host_s_;  // seconds of host work a step (what asynchronous scheduling can hide)
};

}  // namespace servesim
