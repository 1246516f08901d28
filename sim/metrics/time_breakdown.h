// TimeBreakdown: where the time of ok requests went — for each segment of the request path
// (retries, network, gateway, API server, pre-model stages, engine queue, prefill, decode,
// stream)
// its mean and p50/p95/p99, and its share of the mean E2E and of the mean TTFT — plus the
// TTFT the server sees (the client's less the network both ways) and failures by cause.
// TimeBreakdownCollector gathers it from RequestRecords in bounded memory (one
// QuantileSketch per segment, within 0.5% relative error).
//
// Shares: a segment's mean over the mean E2E (they sum to 1 over the E2E segments); TTFT
// shares cover the segments up to the first token plus first_token_stream (sum to 1), and
// are 0 for decode and stream. Thread-safety: none; one collector per run.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string_view>

#include "sim/core/request_record.h"
#include "sim/metrics/quantile_sketch.h"

namespace servesim {

enum class Segment : uint8_t {
  kRetry,  // failed attempts and backoff before the last attempt
  kNetwork,
  kGateway,
  kFrontend,
  kPreModel,
  kEngineQueue,
  kPrefill,
  kDecodeQueue,
  kKvTransfer,
  kDecode,
  kStream,
  kFirstTokenStream,
  kPool,  // waiting for a client-side pool's connection (service.pools), before the send
};
inline constexpr size_t kNumSegments = 13;

std::string_view to_string(Segment segment);  // "retry", "network", ... (CSV/JSON names)
double segment_s(const RequestSegments& segments, Segment segment);  // seconds
// Whether the segment lies on the way to the first token (its TTFT share can be non-zero).
bool counts_in_ttft(Segment segment);

struct SegmentStats {
  double mean_s = 0;
  double p50_s = 0;
  double p95_s = 0;
  double p99_s = 0;
  double share_of_e2e = 0;   // mean segment / mean E2E
  double share_of_ttft = 0;  // mean segment / mean TTFT; 0 past the first token
};

struct TimeBreakdown {
  uint64_t count = 0;  // ok requests behind the numbers
  std::array<SegmentStats, kNumSegments> segments;
  double mean_client_ttft_s = 0;  // as the client measures it
  double mean_server_ttft_s = 0;  // the client's less the network both ways and the retries
  std::array<uint64_t, kNumFailureCauses> failures{};  // requests failed, by FailureCause
  // True when anything above the engine took time (a service path was simulated).
  bool has_service() const;
};

// summary.json's "where_time_went": per segment mean/p50/p95/p99 (ms) and shares, the client-
// and server-side mean TTFT, and "errors_by_cause".
nlohmann::json time_breakdown_json(const TimeBreakdown& breakdown);
// The table's "where the time went" block: one line per segment that took time.
void print_time_breakdown(std::FILE* out, const TimeBreakdown& breakdown);

class TimeBreakdownCollector {
 public:
  // Counts a failed record's cause, or an ok record's segments.
  void add(const RequestRecord& record);
  TimeBreakdown summary() const;

 private:
  std::array<QuantileSketch, kNumSegments> sketches_;
  std::array<double, kNumSegments> sums_s_{};
  std::array<uint64_t, kNumFailureCauses> failures_{};
  double sum_ttft_s_ = 0;
  double sum_e2e_s_ = 0;
  uint64_t count_ = 0;
};

}  // namespace servesim
