// ConnectionPool: the load generator's keep-alive connections to the one endpoint, at most
// max_connections open at once. A caller acquires a slot — an idle connection when one is
// waiting, else a fresh unconnected stream while fewer than max_connections exist, else it
// waits in FIFO order for a slot to be released — and releases it when its response ended,
// keeping the connection for the next request when the exchange left it reusable.
//
// Waiting: a waiter parks on its own timer, which release() cancels to wake it; a waiter
// whose deadline passes (or that the caller cancels through the timer it passed in) gets no
// slot. Ownership: the pool owns idle streams; an acquired stream belongs to the caller until
// release(). Thread-safety: none — one io_context thread uses it.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <vector>

#include "serve/loadtest/asio_config.h"

namespace servesim {

class ConnectionPool {
 public:
  struct Lease {
    std::unique_ptr<net::beast::tcp_stream> stream;  // null: no slot (deadline or cancelled)
    bool reused = false;                             // an idle, already connected stream
  };

  ConnectionPool(net::asio::any_io_executor executor, size_t max_connections);

  // Waits at most until `deadline`; `waiter` is the caller's timer (cancel it to give up).
  net::asio::awaitable<Lease> acquire(net::asio::steady_timer& waiter,
                                      net::Clock::time_point deadline, const bool& give_up);
  // `keep`: the stream is connected and its last exchange ended cleanly with keep-alive.
  void release(std::unique_ptr<net::beast::tcp_stream> stream, bool keep);
  // Closes the idle connections.
  void close_idle();

  const net::asio::any_io_executor& executor() const { return executor_; }
  size_t open() const { return open_; }
  size_t waiting() const { return waiters_.size(); }

 private:
  void wake_one();

  net::asio::any_io_executor executor_;
  size_t max_connections_;
  size_t open_ = 0;  // slots taken: idle + leased
  std::vector<std::unique_ptr<net::beast::tcp_stream>> idle_;
  std::deque<net::asio::steady_timer*> waiters_;
};

}  // namespace servesim
