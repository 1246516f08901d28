// RopeTable (CUDA): rotary position embedding on the GPU, rotating fp32 query and key heads in
// place with the cos/sin table of the CPU RopeTable (kernels/rope.h) copied to the device, so
// both backends rotate by the same angles.
//
// Ownership: owns the device copy of the table. Immutable after construction; apply() may run
// on any stream. Invariants: the table covers max_positions() positions.
#pragma once

#include <cstdint>

#include "kernels/cuda/cuda_types.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/rope.h"

namespace servesim::cuda {

class RopeTable {
 public:
  // Uploads `host`'s table (synchronously on the default stream).
  explicit RopeTable(const servesim::RopeTable& host);

  int head_dim() const { return head_dim_; }
  int max_positions() const { return max_positions_; }

  // As servesim::RopeTable::apply: x (num_tokens, row_stride) fp32 on the device, head h of row
  // t at x + t * row_stride + h * head_dim; positions: (num_tokens) device int32.
  // REQUIRES: every position < max_positions() (the runner checks them on the host).
  void apply(float* x, int64_t num_tokens, int64_t row_stride, int num_heads,
             const int32_t* positions, Stream stream) const;

 private:
  int head_dim_;
  int max_positions_;
  DeviceBuffer cos_;  // (max_positions, head_dim / 2) fp32
  DeviceBuffer sin_;  // (max_positions, head_dim / 2) fp32
};

}  // namespace servesim::cuda
