// RunRecorder: the Observer the GUI's worker thread hands to Simulation::run(). It keeps what
// the views need and nothing per token: the deployment's time series (replicas summed per
// sample time, thinned to at most 2 x max_points by doubling a stride whenever the buffer
// fills, so memory stays bounded however long the run), and TTFT/TPOT/E2E of every counted
// completed request (one float each) for the latency CDFs; for agent workloads, the records of
// the first max_sessions sessions to end, with their calls' spans (it asks for spans only
// while it still needs records, so a long run stops paying for them). Progress goes to a callback,
// at most every kProgressInterval of wall time; stopping reads an atomic flag.
//
// Thread-safety: the observer methods run on the simulation's thread; the stop flag may be
// set from any thread. Build the snapshot parts (timeline(), cdf()) after run() returns.
#pragma once

#include <QElapsedTimer>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "gui/run_snapshot.h"
#include "sim/core/observer.h"
#include "sim/metrics/metrics.h"

namespace servesim::gui {

class RunRecorder final : public Observer {
 public:
  // fraction is done/total in [0, 1], or -1 when the total is unknown.
  using ProgressFn = std::function<void(double fraction, double sim_time_s)>;
  static constexpr int64_t kProgressIntervalMs = 50;

  RunRecorder(std::shared_ptr<const std::atomic<bool>> stop, MetricsOptions metrics,
              ProgressFn progress, size_t max_points = 2000,
              size_t max_sessions = RunSnapshot::kMaxSessionRecords);

  void on_progress(double sim_time_s, uint64_t done, uint64_t total) override;
  void on_request_done(const RequestRecord& record) override;
  void on_sample(const TimeSample& sample) override;
  void on_session_done(const SessionRecord& record) override;
  bool wants_session_spans() override { return sessions_.size() < max_sessions_; }
  bool should_stop() override { return stop_->load(std::memory_order_relaxed); }

  std::vector<TimelinePoint> timeline() const;
  // `points` + 1 rows at quantiles 0, 1/points, ..., 1 (nearest rank); empty without data.
  std::vector<CdfPoint> cdf(int points = 200) const;
  const std::vector<SessionRecord>& sessions() const { return sessions_; }

 private:
  void push(const TimelinePoint& point);

  std::shared_ptr<const std::atomic<bool>> stop_;
  MetricsOptions metrics_;
  ProgressFn progress_;
  size_t max_points_;
  QElapsedTimer since_progress_;

  std::vector<TimelinePoint> points_;
  TimelinePoint pending_;  // replicas seen so far at pending_.time_s
  int pending_replicas_ = 0;
  uint64_t seen_points_ = 0;
  uint64_t stride_ = 1;

  std::vector<float> ttft_s_;
  std::vector<float> tpot_s_;
  std::vector<float> e2e_s_;

  size_t max_sessions_;
  std::vector<SessionRecord> sessions_;
};

}  // namespace servesim::gui
