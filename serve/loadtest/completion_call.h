// CompletionCall: one streamed completion request, from its due time to the end of its
// response, on a connection from the ConnectionPool: waits for a slot, connects if the slot
// is new, POSTs the body, reads the response header, then reads the chunked body as it
// arrives, decoding server-sent events and stamping each output chunk with the wall clock.
// Every failure ends the call with an ErrorCause instead of an exception.
//
// Timeout: one deadline, due time + timeout_s, covers the wait for a slot, connect, write
// and every read (beast::tcp_stream's expiry). A kept-alive connection that the server
// closed while it sat idle fails before any response byte; such a call is retried once on a
// new connection, as HTTP clients do, and does not count as an error.
// cancel() (Ctrl-C, --max-duration-s) aborts whatever the call waits on; it then ends as
// kCancelled. Ownership: borrows the pool and the target, which outlive it. Thread-safety:
// none — everything runs on the io_context's one thread.
#pragma once

#include <string>

#include "serve/loadtest/asio_config.h"
#include "serve/loadtest/call_result.h"
#include "serve/loadtest/connection_pool.h"
#include "serve/loadtest/stream_chunk.h"

namespace servesim {

// Where every call goes; shared by all calls of a run.
struct CallTarget {
  net::tcp::resolver::results_type endpoints;  // resolved once, at the start
  std::string host_header;
  std::string target;  // request target, e.g. "/v1/completions"
  ApiKind api = ApiKind::kCompletions;
  net::Clock::time_point start;  // time 0 of the run's clock
};

class CompletionCall {
 public:
  CompletionCall(ConnectionPool& pool, const CallTarget& target, RequestSpec spec, std::string body,
                 double timeout_s);

  // Runs the call to its end; result() is final afterwards.
  net::asio::awaitable<void> run();
  void cancel();

  const CallResult& result() const { return result_; }

 private:
  enum class Attempt { kDone, kRetry };

  double now_s() const;
  net::asio::awaitable<Attempt> attempt();
  net::asio::awaitable<bool> connect();
  net::asio::awaitable<void> read_stream(
      net::http::response_parser<net::http::buffer_body>& parser);
  net::asio::awaitable<void> read_error_body(
      net::http::response_parser<net::http::buffer_body>& parser);
  void on_event(const std::string& data, double now_s);
  void fail(ErrorCause cause, std::string detail);
  void fail(const boost::system::error_code& ec, const char* during);
  void finish_stream(bool body_done);
  void release(bool keep);

  ConnectionPool& pool_;
  const CallTarget& target_;
  std::string body_;
  net::Clock::time_point deadline_;
  net::asio::steady_timer waiter_;
  ConnectionPool::Lease lease_;
  net::beast::flat_buffer buffer_;
  bool cancelled_ = false;
  bool saw_done_ = false;
  CallResult result_;
};

}  // namespace servesim
