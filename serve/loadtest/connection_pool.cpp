#include "serve/loadtest/connection_pool.h"

#include <algorithm>

namespace servesim {

ConnectionPool::ConnectionPool(net::asio::any_io_executor executor, size_t max_connections)
    : executor_(std::move(executor)), max_connections_(std::max<size_t>(1, max_connections)) {}

net::asio::awaitable<ConnectionPool::Lease> ConnectionPool::acquire(net::asio::steady_timer& waiter,
                                                                    net::Clock::time_point deadline,
                                                                    const bool& give_up) {
  while (!give_up) {
    if (!idle_.empty()) {
      Lease lease{std::move(idle_.back()), true};
      idle_.pop_back();
      co_return lease;
    }
    if (open_ < max_connections_) {
      ++open_;
      co_return Lease{std::make_unique<net::beast::tcp_stream>(executor_), false};
    }
    waiters_.push_back(&waiter);
    waiter.expires_at(deadline);
    boost::system::error_code ec;
    co_await waiter.async_wait(net::with_ec(ec));
    // A wake-up removed us; a deadline or a give-up did not.
    if (auto it = std::find(waiters_.begin(), waiters_.end(), &waiter); it != waiters_.end()) {
      waiters_.erase(it);
    }
    if (!ec || give_up) {
      // The deadline passed or the caller gave up: pass on a wake-up that may have been ours.
      if (!idle_.empty() || open_ < max_connections_) wake_one();
      break;
    }
  }
  co_return Lease{};
}

void ConnectionPool::release(std::unique_ptr<net::beast::tcp_stream> stream, bool keep) {
  if (keep && stream) {
    stream->expires_never();
    idle_.push_back(std::move(stream));
  } else {
    if (stream) {
      boost::system::error_code ignored;
      stream->socket().shutdown(net::tcp::socket::shutdown_both, ignored);
      stream->close();
    }
    --open_;
  }
  wake_one();
}

void ConnectionPool::close_idle() {
  for (auto& stream : idle_) stream->close();
  open_ -= idle_.size();
  idle_.clear();
}

void ConnectionPool::wake_one() {
  if (waiters_.empty()) return;
  net::asio::steady_timer* waiter = waiters_.front();
  waiters_.pop_front();
  waiter->cancel();
}

}  // namespace servesim
