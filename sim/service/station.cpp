#include "sim/service/station.h"

#include <algorithm>
#include <stdexcept>

namespace servesim {

Station::Station(std::string name, int workers, int64_t queue_capacity)
    : name_(std::move(name)), workers_(workers), capacity_(queue_capacity) {
  if (workers_ < 1 || capacity_ < 0) throw std::invalid_argument("Station: bad size");
}

void Station::advance(double now_s) {
  const double dt = now_s - last_s_;
  busy_integral_ += dt * busy_;
  queue_integral_ += dt * static_cast<double>(queue_.size());
  last_s_ = now_s;
}

void Station::start(const StationJob& job, double now_s) {
  ++busy_;
  ++started_;
  wait_total_s_ += now_s - job.arrival_s;
  service_total_s_ += job.service_s;
}

Station::Arrival Station::arrive(const StationJob& job, double now_s, bool droppable) {
  advance(now_s);
  if (busy_ < workers_) {
    start(job, now_s);
    return Arrival::kStarted;
  }
  if (droppable && capacity_ > 0 && static_cast<int64_t>(queue_.size()) >= capacity_) {
    ++rejected_;
    return Arrival::kRejected;
  }
  queue_.push_back(job);
  max_queue_ = std::max<uint64_t>(max_queue_, queue_.size());
  return Arrival::kQueued;
}

std::optional<StationJob> Station::finish(double now_s) {
  if (busy_ <= 0) throw std::logic_error("Station::finish: no job in service");
  advance(now_s);
  --busy_;
  ++completed_;
  if (queue_.empty()) return std::nullopt;
  const StationJob next = queue_.front();
  queue_.pop_front();
  start(next, now_s);
  return next;
}

nlohmann::json station_json(const StationStats& s) {
  return {{"name", s.name},
          {"workers", s.workers},
          {"jobs", s.jobs},
          {"rejected", s.rejected},
          {"utilisation", s.utilisation},
          {"mean_queue", s.mean_queue},
          {"max_queue", s.max_queue},
          {"mean_wait_ms", s.mean_wait_s * 1e3},
          {"mean_service_ms", s.mean_service_s * 1e3}};
}

void print_stations(std::FILE* out, const std::vector<StationStats>& stations) {
  if (stations.empty()) return;
  // Names longer than the column ("frontend Llama-3.1-70B") widen it for every row.
  int width = 20;
  for (const StationStats& s : stations) width = std::max(width, static_cast<int>(s.name.size()));
  std::fprintf(out, "  %-*s workers      jobs  busy  queue mean/max  wait ms  service ms\n", width,
               "stations");
  for (const StationStats& s : stations) {
    std::fprintf(out, "  %-*s %7d %9llu  %3.0f%%  %8.1f/%-6llu %8.2f %11.2f\n", width,
                 s.name.c_str(), s.workers, static_cast<unsigned long long>(s.jobs),
                 100 * s.utilisation, s.mean_queue, static_cast<unsigned long long>(s.max_queue),
                 s.mean_wait_s * 1e3, s.mean_service_s * 1e3);
  }
}

StationStats Station::stats(double now_s) const {
  StationStats s;
  s.name = name_;
  s.workers = workers_;
  s.jobs = completed_;
  s.rejected = rejected_;
  const double end_s = std::max(now_s, last_s_);
  const double busy = busy_integral_ + (end_s - last_s_) * busy_;
  const double waiting = queue_integral_ + (end_s - last_s_) * static_cast<double>(queue_.size());
  if (end_s > 0) {
    s.utilisation = std::min(1.0, busy / (workers_ * end_s));
    s.mean_queue = waiting / end_s;
  }
  s.max_queue = max_queue_;
  if (started_ > 0) {
    s.mean_wait_s = wait_total_s_ / static_cast<double>(started_);
    s.mean_service_s = service_total_s_ / static_cast<double>(started_);
  }
  return s;
}

}  // namespace servesim
