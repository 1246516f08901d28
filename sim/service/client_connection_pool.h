// ClientConnectionPool: the books of one client-side connection pool (service.pools) —
// `connections` keep-alive connections, each carrying one request attempt at a time, and the
// attempts waiting for one in first-come, first-served order. The pool hands out connections; the
// service path says when an attempt has one and when it lets it go (its answer ended, or its
// client gave up), and may withdraw a waiter that timed out.
//
//   if (pool.acquire(key, now_s)) send(key);       // else it waits
//   ... when the attempt's answer is over:  if (auto next = pool.release(now_s)) send(*next);
//
// Statistics are time integrals over the run, as a Station's: utilisation = connection-seconds
// held over connections × elapsed, mean and largest number waiting, mean wait per attempt
// granted and connection-seconds per attempt granted (its mean hold) — a pool at 100% with a queue
// is what caps a client that shares it. Invariants: held() <= connections; an attempt waits only
// while every connection is held. Not thread-safe; one simulation owns it.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_set>

#include "sim/metrics/station_stats.h"

namespace servesim {

class ClientConnectionPool {
 public:
  // REQUIRES: connections >= 1. `name` labels its stats row.
  ClientConnectionPool(std::string name, int connections);

  // Attempt `key` wants a connection at now_s: true when it has one now, false when it waits.
  bool acquire(uint64_t key, double now_s);
  // An attempt holding a connection lets it go at now_s; the longest waiter, if any, takes it
  // (its key is returned, and it holds the connection from now_s). REQUIRES: held() > 0.
  std::optional<uint64_t> release(double now_s);
  // A waiting attempt stops waiting (its client gave up). REQUIRES: it is waiting.
  void withdraw(uint64_t key, double now_s);

  int held() const { return held_; }
  size_t waiting() const { return waiting_.size() - withdrawn_.size(); }
  // Statistics up to now_s (the run's end), as a station row named after the pool.
  StationStats stats(double now_s) const;

 private:
  struct Waiter {
    uint64_t key = 0;
    double since_s = 0;  // seconds; when it began to wait
  };

  void advance(double now_s);
  void grant(double waited_s);

  std::string name_;
  int connections_ = 0;
  int held_ = 0;
  std::deque<Waiter> waiting_;              // withdrawn ones are skipped when they come up
  std::unordered_set<uint64_t> withdrawn_;  // keys in waiting_ that gave up
  double last_s_ = 0;
  double held_integral_ = 0;     // connection-seconds
  double waiting_integral_ = 0;  // waiter-seconds
  uint64_t granted_ = 0;
  uint64_t released_ = 0;
  uint64_t max_waiting_ = 0;
  double wait_total_s_ = 0;  // seconds, over granted attempts
};

}  // namespace servesim
