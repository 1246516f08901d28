// Station: one CPU-bound stage of the request path above the engine — a gateway, an API
// server process, a retrieval service — as a queueing station: `workers` jobs in service at
// once (processes × threads), the rest waiting first-come first-served in a queue of at most
// `queue_capacity` jobs (0: unbounded). The station only keeps the books; the caller samples
// each job's service time and schedules its completion on the event loop.
//
//   if (station.arrive(job, now_s) == Station::Arrival::kStarted) schedule(now_s + job.service_s);
//   ... at the completion:  if (auto next = station.finish(now_s)) schedule(now_s +
//   next->service_s);
//
// Statistics are time integrals over the run (utilisation = busy worker-seconds over
// workers × elapsed; mean queue length), so a saturated station shows as utilisation → 1
// with a growing queue — the signature of a CPU stage capping throughput.
// Invariants: busy() <= workers; queued() <= queue_capacity when bounded; a job waits only
// while every worker is busy. Not thread-safe; one simulation owns it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/metrics/station_stats.h"

namespace servesim {

struct StationJob {
  uint64_t id = 0;       // the caller's job id (a request, an output batch)
  double service_s = 0;  // seconds of work once a worker takes it
  double arrival_s = 0;  // seconds; when it reached the station
};

// summary.json's "service.stations" entries; utilisation as a fraction, times in ms.
nlohmann::json station_json(const StationStats& stats);
// One table line per station: workers, jobs, utilisation, mean and max queue, mean wait.
void print_stations(std::FILE* out, const std::vector<StationStats>& stations);

class Station {
 public:
  enum class Arrival { kStarted, kQueued, kRejected };

  // REQUIRES: workers >= 1, queue_capacity >= 0 (0: unbounded).
  Station(std::string name, int workers, int64_t queue_capacity);

  // A job reaches the station at now_s: a free worker takes it (kStarted: the caller
  // schedules its completion at now_s + job.service_s), or it waits, or — when `droppable`
  // and the queue is full — it is refused. Work the station owes (an API server's output
  // processing) is not droppable and may exceed the capacity.
  Arrival arrive(const StationJob& job, double now_s, bool droppable = true);
  // A worker finishes its job at now_s and takes the next waiting job, returned so the caller
  // can schedule its completion. REQUIRES: busy() > 0.
  std::optional<StationJob> finish(double now_s);

  int busy() const { return busy_; }
  size_t queued() const { return queue_.size(); }
  const std::string& name() const { return name_; }
  // Statistics up to now_s (the run's end).
  StationStats stats(double now_s) const;

 private:
  void advance(double now_s);
  void start(const StationJob& job, double now_s);

  std::string name_;
  int workers_;
  int64_t capacity_;
  int busy_ = 0;
  std::deque<StationJob> queue_;
  double last_s_ = 0;          // seconds; when the integrals were last advanced
  double busy_integral_ = 0;   // worker-seconds
  double queue_integral_ = 0;  // job-seconds waiting
  uint64_t max_queue_ = 0;
  uint64_t started_ = 0;
  uint64_t completed_ = 0;
  uint64_t rejected_ = 0;
  double wait_total_s_ = 0;     // over started jobs
  double service_total_s_ = 0;  // over started jobs
};

}  // namespace servesim
