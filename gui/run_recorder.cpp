#include "gui/run_recorder.h"

#include <algorithm>
#include <cmath>

namespace servesim::gui {

RunRecorder::RunRecorder(std::shared_ptr<const std::atomic<bool>> stop, MetricsOptions metrics,
                         ProgressFn progress, size_t max_points, size_t max_sessions)
    : stop_(std::move(stop)),
      metrics_(std::move(metrics)),
      progress_(std::move(progress)),
      max_points_(std::max<size_t>(max_points, 1)),
      max_sessions_(max_sessions) {
  since_progress_.start();
}

void RunRecorder::on_progress(double sim_time_s, uint64_t done, uint64_t total) {
  const bool last = total > 0 && done >= total;
  if (!last && since_progress_.elapsed() < kProgressIntervalMs) return;
  since_progress_.restart();
  const double fraction =
      total > 0 ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total)) : -1.0;
  if (progress_) progress_(fraction, sim_time_s);
}

void RunRecorder::on_request_done(const RequestRecord& record) {
  if (record.status != RequestOutcome::kOk) return;
  // The same warm-up rule as MetricsCollector, so the CDFs match the summary's percentiles.
  if (record.arrival_s < metrics_.warmup_s || record.id < metrics_.warmup_requests) return;
  ttft_s_.push_back(static_cast<float>(record.ttft_s()));
  e2e_s_.push_back(static_cast<float>(record.e2e_s()));
  const double tpot = record.tpot_s();
  if (!std::isnan(tpot)) tpot_s_.push_back(static_cast<float>(tpot));
}

void RunRecorder::on_sample(const TimeSample& sample) {
  // Replicas report one after another at the same simulated time: fold them into one point.
  if (pending_replicas_ > 0 && sample.time_s != pending_.time_s) {
    push(pending_);
    pending_replicas_ = 0;
  }
  if (pending_replicas_ == 0) pending_ = TimelinePoint{.time_s = sample.time_s};
  pending_.running += sample.running;
  pending_.waiting += sample.waiting;
  pending_.kv_usage += (sample.kv_usage - pending_.kv_usage) / (pending_replicas_ + 1);
  pending_.tokens_in_step += sample.tokens_in_step;
  pending_.preemptions_total += sample.preemptions_total;
  ++pending_replicas_;
}

void RunRecorder::on_session_done(const SessionRecord& record) {
  if (sessions_.size() >= max_sessions_) return;
  sessions_.push_back(record);
  // The GUI shows no trace lines; they would be the bulk of the copy.
  sessions_.back().trace_json.clear();
}

void RunRecorder::push(const TimelinePoint& point) {
  if (seen_points_++ % stride_ != 0) return;
  points_.push_back(point);
  if (points_.size() < 2 * max_points_) return;
  // Keep every other point: the survivors are the multiples of the doubled stride.
  size_t kept = 0;
  for (size_t i = 0; i < points_.size(); i += 2) points_[kept++] = points_[i];
  points_.resize(kept);
  stride_ *= 2;
}

std::vector<TimelinePoint> RunRecorder::timeline() const {
  std::vector<TimelinePoint> out = points_;
  if (pending_replicas_ > 0) out.push_back(pending_);
  return out;
}

std::vector<CdfPoint> RunRecorder::cdf(int points) const {
  if (e2e_s_.empty() || points < 1) return {};
  auto sorted = [](std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  const std::vector<float> ttft = sorted(ttft_s_);
  const std::vector<float> tpot = sorted(tpot_s_);
  const std::vector<float> e2e = sorted(e2e_s_);
  auto at = [](const std::vector<float>& v, double q) {
    if (v.empty()) return std::nan("");
    const auto rank = static_cast<size_t>(std::lround(q * static_cast<double>(v.size() - 1)));
    return static_cast<double>(v[rank]);
  };
  std::vector<CdfPoint> out;
  out.reserve(static_cast<size_t>(points) + 1);
  for (int i = 0; i <= points; ++i) {
    const double q = static_cast<double>(i) / points;
    out.push_back(
        {.quantile = q, .ttft_s = at(ttft, q), .tpot_s = at(tpot, q), .e2e_s = at(e2e, q)});
  }
  return out;
}

}  // namespace servesim::gui
