// TraceSource: the RequestSource that replays a trace file through a TraceReader, one row
// ahead, so memory stays constant whatever the trace length. Each row is a one-turn
// session; Mooncake block hash ids are passed through in RequestSpec::block_hashes.
// Prompts and outputs of 0 tokens are replayed as 1 token: every request reads and writes
// at least one. num_requests and duration_s (from the WorkloadSpec) cut the replay short.
// Thread-safety: none.
#pragma once

#include <optional>

#include "sim/workload/request_source.h"
#include "sim/workload/trace_reader.h"
#include "sim/workload/workload.h"

namespace servesim {

class TraceSource final : public RequestSource {
 public:
  // REQUIRES: spec.trace. Throws ConfigError when the file cannot be read.
  explicit TraceSource(const WorkloadSpec& spec);

  std::optional<double> next_arrival_s() override;
  RequestSpec pop() override;
  void on_request_done(const RequestSpec& request, double now_s) override;
  bool finished() override { return !next_arrival_s(); }
  uint64_t expected_total() const override { return num_requests_; }

 private:
  void fill();

  TraceReader reader_;
  uint64_t num_requests_;
  double duration_s_;
  TraceRow row_;
  bool has_row_ = false;
  bool done_ = false;
  uint64_t issued_ = 0;
};

}  // namespace servesim
