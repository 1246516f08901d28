#include "sim/metrics/time_breakdown.h"

#include <string>

namespace servesim {

std::string_view to_string(Segment segment) {
  switch (segment) {
    case Segment::kRetry:
      return "retry";
    case Segment::kNetwork:
      return "network";
    case Segment::kGateway:
      return "gateway";
    case Segment::kFrontend:
      return "frontend";
    case Segment::kPreModel:
      return "pre_model";
    case Segment::kEngineQueue:
      return "engine_queue";
    case Segment::kPrefill:
      return "prefill";
    case Segment::kDecodeQueue:
      return "decode_queue";
    case Segment::kKvTransfer:
      return "kv_transfer";
    case Segment::kDecode:
      return "decode";
    case Segment::kStream:
      return "stream";
    case Segment::kPool:
      return "pool";
    case Segment::kFirstTokenStream:
      return "first_token_stream";
  }
  return "unknown";
}

double segment_s(const RequestSegments& s, Segment segment) {
  switch (segment) {
    case Segment::kRetry:
      return s.retry_s;
    case Segment::kNetwork:
      return s.network_s;
    case Segment::kGateway:
      return s.gateway_s;
    case Segment::kFrontend:
      return s.frontend_s;
    case Segment::kPreModel:
      return s.pre_model_s;
    case Segment::kEngineQueue:
      return s.engine_queue_s;
    case Segment::kPrefill:
      return s.prefill_s;
    case Segment::kDecodeQueue:
      return s.decode_queue_s;
    case Segment::kKvTransfer:
      return s.kv_transfer_s;
    case Segment::kDecode:
      return s.decode_s;
    case Segment::kPool:
      return s.pool_s;
    case Segment::kStream:
      return s.stream_s;
    case Segment::kFirstTokenStream:
      return s.first_token_stream_s;
  }
  return 0;
}

bool counts_in_ttft(Segment segment) {
  return segment != Segment::kDecode && segment != Segment::kStream;
}

bool TimeBreakdown::has_service() const {
  for (Segment s :
       {Segment::kRetry, Segment::kPool, Segment::kNetwork, Segment::kGateway, Segment::kFrontend,
        Segment::kPreModel, Segment::kStream, Segment::kFirstTokenStream}) {
    if (segments[static_cast<size_t>(s)].mean_s > 0) return true;
  }
  for (size_t c = 0; c < kNumFailureCauses; ++c) {
    const auto cause = static_cast<FailureCause>(c);
    if (failures[c] > 0 && cause != FailureCause::kTooLong) return true;
  }
  return false;
}

nlohmann::json time_breakdown_json(const TimeBreakdown& b) {
  nlohmann::json segments = nlohmann::json::object();
  for (size_t i = 0; i < kNumSegments; ++i) {
    const SegmentStats& s = b.segments[i];
    segments[std::string(to_string(static_cast<Segment>(i)))] = {
        {"mean_ms", s.mean_s * 1e3},      {"p50_ms", s.p50_s * 1e3},
        {"p95_ms", s.p95_s * 1e3},        {"p99_ms", s.p99_s * 1e3},
        {"share_of_e2e", s.share_of_e2e}, {"share_of_ttft", s.share_of_ttft}};
  }
  nlohmann::json errors = nlohmann::json::object();
  for (size_t c = 1; c < kNumFailureCauses; ++c) {
    errors[std::string(to_string(static_cast<FailureCause>(c)))] = b.failures[c];
  }
  return {{"requests", b.count},
          {"segments", segments},
          {"client_ttft_mean_ms", b.mean_client_ttft_s * 1e3},
          {"server_ttft_mean_ms", b.mean_server_ttft_s * 1e3},
          {"errors_by_cause", errors}};
}

void print_time_breakdown(std::FILE* out, const TimeBreakdown& b) {
  std::fprintf(out,
               "  where the time went (ms)  mean       p50       p95       p99  of E2E  of TTFT\n");
  for (size_t i = 0; i < kNumSegments; ++i) {
    const SegmentStats& s = b.segments[i];
    if (s.mean_s <= 0) continue;
    std::fprintf(out, "  %-20s %9.1f %9.1f %9.1f %9.1f  %5.1f%%   %5.1f%%\n",
                 std::string(to_string(static_cast<Segment>(i))).c_str(), s.mean_s * 1e3,
                 s.p50_s * 1e3, s.p95_s * 1e3, s.p99_s * 1e3, 100 * s.share_of_e2e,
                 100 * s.share_of_ttft);
  }
  const bool retried = b.segments[static_cast<size_t>(Segment::kRetry)].mean_s > 0;
  const bool pooled = b.segments[static_cast<size_t>(Segment::kPool)].mean_s > 0;
  std::fprintf(out, "  TTFT mean: client %.1f ms, server %.1f ms (without the network%s%s)\n",
               b.mean_client_ttft_s * 1e3, b.mean_server_ttft_s * 1e3,
               pooled ? ", the pool wait" : "", retried ? " and the retries" : "");
  std::string failures;
  for (size_t c = 1; c < kNumFailureCauses; ++c) {
    if (b.failures[c] == 0) continue;
    failures += (failures.empty() ? "" : ", ") + std::to_string(b.failures[c]) + " " +
                std::string(to_string(static_cast<FailureCause>(c)));
  }
  if (!failures.empty()) std::fprintf(out, "  failed: %s\n", failures.c_str());
}

void TimeBreakdownCollector::add(const RequestRecord& r) {
  if (r.status != RequestOutcome::kOk) {
    ++failures_[static_cast<size_t>(r.cause)];
    return;
  }
  ++count_;
  sum_ttft_s_ += r.ttft_s();
  sum_e2e_s_ += r.e2e_s();
  for (size_t i = 0; i < kNumSegments; ++i) {
    const double v = segment_s(r.segments, static_cast<Segment>(i));
    sketches_[i].add(v);
    sums_s_[i] += v;
  }
}

TimeBreakdown TimeBreakdownCollector::summary() const {
  TimeBreakdown b;
  b.count = count_;
  b.failures = failures_;
  if (count_ == 0) return b;
  const double n = static_cast<double>(count_);
  const double mean_e2e_s = sum_e2e_s_ / n;
  const double mean_ttft_s = sum_ttft_s_ / n;
  for (size_t i = 0; i < kNumSegments; ++i) {
    SegmentStats& s = b.segments[i];
    const QuantileSketch& q = sketches_[i];
    s.mean_s = sums_s_[i] / n;
    // An all-zero segment (nothing above the engine) reports 0, not the sketch's floor.
    if (q.max() > 0) {
      s.p50_s = q.quantile(50);
      s.p95_s = q.quantile(95);
      s.p99_s = q.quantile(99);
    }
    const auto segment = static_cast<Segment>(i);
    if (segment != Segment::kFirstTokenStream && mean_e2e_s > 0) {
      s.share_of_e2e = s.mean_s / mean_e2e_s;
    }
    if (counts_in_ttft(segment) && mean_ttft_s > 0) s.share_of_ttft = s.mean_s / mean_ttft_s;
  }
  b.mean_client_ttft_s = mean_ttft_s;
  b.mean_server_ttft_s = mean_ttft_s -
                         2 * b.segments[static_cast<size_t>(Segment::kNetwork)].mean_s -
                         b.segments[static_cast<size_t>(Segment::kRetry)].mean_s -
                         b.segments[static_cast<size_t>(Segment::kPool)].mean_s;
  return b;
}

}  // namespace servesim
