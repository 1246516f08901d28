#include "sim/service/client_connection_pool.h"

#include <algorithm>
#include <stdexcept>

namespace servesim {

ClientConnectionPool::ClientConnectionPool(std::string name, int connections)
    : name_(std::move(name)), connections_(connections) {
  if (connections_ < 1) throw std::invalid_argument("ClientConnectionPool: no connections");
}

void ClientConnectionPool::advance(double now_s) {
  const double dt = now_s - last_s_;
  held_integral_ += dt * held_;
  waiting_integral_ += dt * static_cast<double>(waiting());
  last_s_ = now_s;
}

void ClientConnectionPool::grant(double waited_s) {
  ++held_;
  ++granted_;
  wait_total_s_ += waited_s;
}

bool ClientConnectionPool::acquire(uint64_t key, double now_s) {
  advance(now_s);
  if (held_ < connections_) {
    grant(0);
    return true;
  }
  waiting_.push_back({key, now_s});
  max_waiting_ = std::max<uint64_t>(max_waiting_, waiting());
  return false;
}

std::optional<uint64_t> ClientConnectionPool::release(double now_s) {
  if (held_ <= 0) throw std::logic_error("ClientConnectionPool::release: no connection held");
  advance(now_s);
  --held_;
  ++released_;
  while (!waiting_.empty()) {
    const Waiter next = waiting_.front();
    waiting_.pop_front();
    if (withdrawn_.erase(next.key) > 0) continue;
    grant(now_s - next.since_s);
    return next.key;
  }
  return std::nullopt;
}

void ClientConnectionPool::withdraw(uint64_t key, double now_s) {
  advance(now_s);
  withdrawn_.insert(key);
  // Without a connection coming free the withdrawn would pile up at the front; drop them there.
  while (!waiting_.empty() && withdrawn_.count(waiting_.front().key) > 0) {
    withdrawn_.erase(waiting_.front().key);
    waiting_.pop_front();
  }
}

StationStats ClientConnectionPool::stats(double now_s) const {
  StationStats s;
  s.name = name_;
  s.workers = connections_;
  s.jobs = released_;
  const double end_s = std::max(now_s, last_s_);
  const double held = held_integral_ + (end_s - last_s_) * held_;
  const double waiting_s = waiting_integral_ + (end_s - last_s_) * static_cast<double>(waiting());
  if (end_s > 0) {
    s.utilisation = std::min(1.0, held / (connections_ * end_s));
    s.mean_queue = waiting_s / end_s;
  }
  s.max_queue = max_waiting_;
  if (granted_ > 0) {
    s.mean_wait_s = wait_total_s_ / static_cast<double>(granted_);
    s.mean_service_s = held / static_cast<double>(granted_);
  }
  return s;
}

}  // namespace servesim
